"""Owner references and finalizers of any object (mirrors ValidateOwnerReferences, validateOwnerReference,
ValidateFinalizers, ValidateFinalizerName and ValidateNoNewFinalizers in
staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go).

Paths are upstream's: an owner reference's errors name `metadata.ownerReferences.<field>`, without
the index (upstream passes the list's path to every reference).
"""

from __future__ import annotations

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
#: The fields of metav1.OwnerReference in declaration order, as Go's %#v prints them.
_REF_FIELDS = (
    ("APIVersion", "apiVersion", "str"),
    ("Kind", "kind", "str"),
    ("Name", "name", "str"),
    ("UID", "uid", "str"),
    ("Controller", "controller", "bool"),
    ("BlockOwnerDeletion", "blockOwnerDeletion", "bool"),
)
#: %#v prints a non-nil pointer as its address, which differs from run to run upstream; a fixed
#: stand-in keeps kubetaint's output reproducible.
POINTER_STAND_IN = "0xc000000000"


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


def go_owner_reference(ref: Mapping[str, Any]) -> str:
    """`%#v` of a metav1.OwnerReference."""
    parts = []
    for go_name, json_name, kind in _REF_FIELDS:
        if kind == "str":
            parts.append(f"{go_name}:{go_quote(_text(ref, json_name))}")
        else:
            shown = "nil" if ref.get(json_name) is None else POINTER_STAND_IN
            parts.append(f"{go_name}:(*bool)({shown})")
    return "v1.OwnerReference{" + ", ".join(parts) + "}"


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
        whole = f.GoValue(dict(ref), go_owner_reference(ref))
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
                shown = "[]v1.OwnerReference{" + ", ".join(
                    go_owner_reference(r if isinstance(r, Mapping) else {}) for r in refs
                )
                errs.append(f.invalid(path, f.GoValue(list(refs), shown + "}"), detail))
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
        errs.append(f.invalid(path, f.GoValue(names, go_string_slice(names)), detail))
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
