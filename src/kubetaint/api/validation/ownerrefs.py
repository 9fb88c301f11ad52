"""Owner references and finalizers of any object (mirrors ValidateOwnerReferences, validateOwnerReference,
ValidateFinalizers, ValidateFinalizerName and ValidateNoNewFinalizers in
staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go).

Paths are upstream's: an owner reference's errors name `metadata.ownerReferences.<field>`, without
the index (upstream passes the list's path to every reference).

Bad values that are structs or lists show as their JSON, as current field.Error.ErrorBody renders
them (objectmeta_test's `Invalid value: "1970-01-01T00:16:40Z"` for a metav1.Time is that form;
older releases printed `%#v`). A detail built with `%#v` (ValidateNoNewFinalizers') keeps it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.api.goquote import go_quote
from kubetaint.api.validation import field as f
from kubetaint.api.validation.names import is_qualified_name

#: BannedOwners: group-version-kinds that may not own anything.
BANNED_OWNERS = frozenset({("", "v1", "Event")})
#: metav1.FinalizerOrphanDependents and metav1.FinalizerDeleteDependents.
FINALIZER_ORPHAN_DEPENDENTS = "orphan"
FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion"
#: The fields of metav1.OwnerReference in declaration order (their JSON names), and those
#: marked omitempty.
_REF_FIELDS = ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")
_REF_OPTIONAL = frozenset({"controller", "blockOwnerDeletion"})


def group_version_kind(api_version: str, kind: str) -> tuple[str, str, str]:
    """schema.FromAPIVersionAndKind: a malformed apiVersion (more than one `/`) gives no group
    and no version."""
    if not api_version or api_version == "/":
        return ("", "", kind)
    slashes = api_version.count("/")
    if slashes == 0:
        return ("", api_version, kind)
    if slashes == 1:
        group, _, version = api_version.partition("/")
        return (group, version, kind)
    return ("", "", kind)


def _text(ref: Mapping[str, Any], name: str) -> str:
    value = ref.get(name)
    return "" if value is None else str(value)


def go_json(value: Any) -> str:
    """encoding/json's compact form of a JSON value (HTML characters escaped as Go does)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for ch, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(ch, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def json_owner_reference(ref: Mapping[str, Any]) -> str:
    """A metav1.OwnerReference as upstream's field errors show a struct: its JSON."""
    fields = []
    for name in _REF_FIELDS:
        value = ref.get(name)
        if name in _REF_OPTIONAL:
            if value is None:
                continue
            fields.append(f'"{name}":{"true" if value is True else "false"}')
        else:
            fields.append(f'"{name}":{go_json(_text(ref, name))}')
    return "{" + ",".join(fields) + "}"


def go_string_slice(values: Sequence[str]) -> str:
    """`%#v` of a []string."""
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def validate_owner_reference(ref: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """validateOwnerReference: apiVersion (its version), kind, name and uid required; banned owners."""
    errs: list[f.FieldError] = []
    api_version, kind = _text(ref, "apiVersion"), _text(ref, "kind")
    gvk = group_version_kind(api_version, kind)
    if not gvk[1]:
        errs.append(f.invalid(f.child(path, "apiVersion"), api_version, "version must not be empty"))
    if not gvk[2]:
        errs.append(f.invalid(f.child(path, "kind"), kind, "must not be empty"))
    for name in ("name", "uid"):
        value = _text(ref, name)
        if not value:
            errs.append(f.invalid(f.child(path, name), value, "must not be empty"))
    if gvk in BANNED_OWNERS:
        shown = f"{gvk[0]}/{gvk[1]}, Kind={gvk[2]}"  # schema.GroupVersionKind.String()
        whole = f.GoValue(dict(ref), json_owner_reference(ref))
        errs.append(f.invalid(path, whole, f"{shown} is disallowed from being an owner"))
    return errs


def validate_owner_references(refs: Sequence[Any], path: str) -> list[f.FieldError]:
    """ValidateOwnerReferences: each reference, then at most one with controller true."""
    errs: list[f.FieldError] = []
    first_controller = ""
    for item in refs:
        ref = item if isinstance(item, Mapping) else {}
        errs.extend(validate_owner_reference(ref, path))
        if ref.get("controller") is True:
            current = f"{_text(ref, 'kind')}/{_text(ref, 'name')}"
            if first_controller:
                detail = (
                    'Only one reference can have Controller set to true. Found "true" in references for '
                    f"{first_controller} and {current}"
                )
                shown = ",".join(json_owner_reference(r if isinstance(r, Mapping) else {}) for r in refs)
                errs.append(f.invalid(path, f.GoValue(list(refs), f"[{shown}]"), detail))
            else:
                first_controller = current
    return errs


def validate_finalizers(finalizers: Sequence[Any], path: str) -> list[f.FieldError]:
    """ValidateFinalizers: qualified names; `orphan` and `foregroundDeletion` not both."""
    errs: list[f.FieldError] = []
    names = ["" if v is None else str(v) for v in finalizers]
    for name in names:
        errs.extend(f.invalid(path, name, msg) for msg in is_qualified_name(name))
    if FINALIZER_ORPHAN_DEPENDENTS in names and FINALIZER_DELETE_DEPENDENTS in names:
        detail = (
            f"finalizer {FINALIZER_ORPHAN_DEPENDENTS} and {FINALIZER_DELETE_DEPENDENTS} cannot be both set"
        )
        errs.append(f.invalid(path, f.GoValue(names, go_json(names)), detail))
    return errs


def validate_no_new_finalizers(new: Sequence[Any], old: Sequence[Any], path: str) -> list[f.FieldError]:
    """ValidateNoNewFinalizers: the finalizers not in `old`, sorted (sets.String.List())."""
    extra = sorted({str(v) for v in new} - {str(v) for v in old})
    if not extra:
        return []
    detail = (
        "no new finalizers can be added if the object is being deleted, "
        f"found new finalizers {go_string_slice(extra)}"
    )
    return [f.forbidden(path, detail)]
