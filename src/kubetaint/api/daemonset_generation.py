"""A DaemonSet's template generation, which apps/v1 carries in the
`deprecated.daemonset.template.generation` annotation (the internal type's
spec.templateGeneration, converted to and from the annotation): the daemon set strategy sets it to
at least 1 on create, keeps the stored one on update (a request cannot set it) and moves to the
next one when the pod template changes. The DaemonSet controller labels the pods it creates with
it (`pod-template-generation`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kubetaint.api.goquote import go_quote

JSON = dict[str, Any]

TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"

_INT64_TEXT = re.compile(r"[+-]?[0-9]+")
_INT64 = 2**63


def parse_template_generation(value: str) -> int:
    """strconv.ParseInt(value, 10, 64), as the v1 conversion reads the annotation; ValueError with
    strconv's message (`strconv.ParseInt: parsing "x": invalid syntax`)."""
    if _INT64_TEXT.fullmatch(value) is None:
        raise ValueError(f"strconv.ParseInt: parsing {go_quote(value)}: invalid syntax")
    number = int(value)
    if not -_INT64 <= number < _INT64:
        raise ValueError(f"strconv.ParseInt: parsing {go_quote(value)}: value out of range")
    return number


def conversion_error(obj: Mapping[str, Any]) -> str | None:
    """Why the v1 conversion refuses a DaemonSet (an annotation that is not an int64), or None."""
    annotations = (obj.get("metadata") or {}).get("annotations")
    value = annotations.get(TEMPLATE_GENERATION_ANNOTATION) if isinstance(annotations, dict) else None
    if not isinstance(value, str):
        return None
    try:
        parse_template_generation(value)
    except ValueError as exc:
        return str(exc)
    return None


def _stored_generation(obj: Mapping[str, Any]) -> int:
    """The template generation of a stored DaemonSet: its annotation, or (for one stored without
    it) its metadata.generation, which kubetaint labelled its pods with before."""
    meta = obj.get("metadata") or {}
    value = (meta.get("annotations") or {}).get(TEMPLATE_GENERATION_ANNOTATION)
    if isinstance(value, str):
        try:
            return parse_template_generation(value)
        except ValueError:
            pass
    generation = meta.get("generation")
    return generation if isinstance(generation, int) else 1


def _with_generation(obj: JSON, generation: int) -> JSON:
    meta = dict(obj.get("metadata") or {})
    meta["annotations"] = {**(meta.get("annotations") or {}), TEMPLATE_GENERATION_ANNOTATION: str(generation)}
    return {**obj, "metadata": meta}


def daemonset_prepared_for_create(obj: JSON) -> JSON:
    """PrepareForCreate's template generation: the request's, at least 1."""
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(TEMPLATE_GENERATION_ANNOTATION)
    generation = 0
    if isinstance(value, str):
        try:
            generation = parse_template_generation(value)
        except ValueError:
            generation = 0  # refused when decoded (conversion_error); an in-process write starts at 1
    return _with_generation(obj, max(generation, 1))


def daemonset_prepared_for_update(obj: JSON, old: JSON) -> JSON:
    """PrepareForUpdate's template generation: the stored one, plus one when the template changes."""
    generation = _stored_generation(old)
    if (obj.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template"):
        generation += 1
    return _with_generation(obj, generation)
