"""Validation exactly as kube-apiserver does it for the kinds kubetaint serves
(mirrors pkg/apis/*/validation and apimachinery's field errors).

`validate(obj, old=None, feature_gates=None)` returns the FieldErrors kube-apiserver would report for a
create (or, with `old`, an update) of `obj`, a Kubernetes JSON dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.features import FeatureGates, comparison_operators_enabled
from kubetaint.api.validation.field import FieldError
from kubetaint.api.validation.kinds import VALIDATORS, validate_pod_keeping_spec, validate_pod_like_clean
from kubetaint.api.validation.status import invalid_message, invalid_status, kubectl_invalid_message

__all__ = [
    "FieldError",
    "api_group",
    "invalid_message",
    "invalid_status",
    "kubectl_invalid_message",
    "supported_kinds",
    "validate",
    "validate_pod_create_like",
    "validate_pod_keeping_spec",
]


def api_group(api_version: str) -> str:
    """The group of an apiVersion: `apps/v1` -> `apps`, `v1` -> ``."""
    return api_version.rpartition("/")[0]


def supported_kinds() -> list[tuple[str, str]]:
    """The (group, kind) pairs `validate` knows."""
    return sorted(VALIDATORS)


def validate(
    obj: Mapping[str, Any],
    *,
    old: Mapping[str, Any] | None = None,
    feature_gates: FeatureGates | None = None,
) -> list[FieldError]:
    """The field errors kube-apiserver would return for creating `obj` (updating `old` when given).

    Args:
        obj: a Kubernetes object as JSON (apiVersion, kind, metadata, spec, ...).
        old: the stored object, to apply the update rules (immutable fields, pod updates).
        feature_gates: feature gates by name, as kube-apiserver's `--feature-gates`.

    Returns:
        Every error, in kube-apiserver's order; empty when the object is valid. Each has `field`,
        `reason` (the StatusCause reason) and `message`; `str(error)` is what kubectl prints.

    Raises:
        ValueError: for an object whose apiVersion/kind kubetaint does not serve.
    """
    if type(obj) is not dict and not isinstance(obj, Mapping):  # the ABC check is slow on every write
        dump = getattr(obj, "to_dict", None)
        if dump is None:
            raise TypeError(f"expected a Kubernetes JSON object, got {type(obj).__name__}")
        obj = dump()
    kind = str(obj.get("kind") or "")
    group = api_group(str(obj.get("apiVersion") or ""))
    validator = VALIDATORS.get((group, kind))
    if validator is None:
        api_version = obj.get("apiVersion") or ""
        raise ValueError(f'no kind "{kind}" is registered for version "{api_version}"')
    return validator(obj, old, comparison_operators_enabled(feature_gates))


def validate_pod_create_like(
    obj: Mapping[str, Any], *, feature_gates: FeatureGates | None = None
) -> list[FieldError]:
    """`validate(obj)` for a Pod (a plain dict) whose spec equals, but for nodeName's value, the
    spec of a Pod that `validate` accepted on create with the same feature gates: the checks that
    cannot tell the two specs apart are not run again."""
    return validate_pod_like_clean(obj, comparison_operators_enabled(feature_gates))
