"""Object metadata checks of an update (mirrors rest.BeforeUpdate and validateCommonFields in
staging/src/k8s.io/apiserver/pkg/registry/rest/update.go, and ValidateObjectMetaAccessorUpdate in
staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go).

Before validating, BeforeUpdate fills in from the stored object what the request may leave out
(so a body without them is no error): the namespace (the request's, for a namespaced object;
none for a cluster-scoped one), the generation (a request cannot set it), the uid when empty,
the creationTimestamp, the deletionTimestamp and the deletion grace period when unset. Then
validateCommonFields runs the create checks and the update checks of the metadata, and the
kind's ValidateUpdate runs them again (a pod's ValidatePodUpdate both): upstream's causes repeat
an error up to four times, which the Status message and kubectl show once. kubetaint reports
each error once, where it first appears: the create checks, then the update-only ones.

Never reported here, as BeforeUpdate's callers make them impossible: `resourceVersion: must be
specified for an update` (the store fills it in for an unconditional update, or refuses the
update first) and `generation: must not be decremented` (the generation is old's). A uid other
than old's fails the store's precondition (409) before validation; the registry checks it first.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kubetaint.api.jsonview import as_mapping
from kubetaint.api.validation import field as f
from kubetaint.api.validation.names import name_is_dns_subdomain
from kubetaint.api.validation.objectmeta import NameFunc, validate_object_meta
from kubetaint.api.validation.ownerrefs import validate_no_new_finalizers

#: apimachinery's FieldImmutableErrorMsg.
FIELD_IMMUTABLE = "field is immutable"


def after_before_update(
    meta: Mapping[str, Any], old_meta: Mapping[str, Any], *, namespaced: bool
) -> dict[str, Any]:
    """The metadata BeforeUpdate validates: `meta` with what it takes from `old_meta`."""
    out = dict(meta)
    if namespaced:
        if not out.get("namespace"):
            out["namespace"] = old_meta.get("namespace")
    else:
        out.pop("namespace", None)
    _set_or_drop(out, "generation", old_meta.get("generation"))
    if not out.get("uid"):
        _set_or_drop(out, "uid", old_meta.get("uid"))
    if old_meta.get("creationTimestamp"):
        out["creationTimestamp"] = old_meta["creationTimestamp"]
    if old_meta.get("deletionTimestamp"):
        out["deletionTimestamp"] = old_meta["deletionTimestamp"]
    if (
        old_meta.get("deletionGracePeriodSeconds") is not None
        and out.get("deletionGracePeriodSeconds") is None
    ):
        out["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
    return out


def _set_or_drop(meta: dict[str, Any], name: str, value: Any) -> None:
    if value is None:
        meta.pop(name, None)
    else:
        meta[name] = value


def validate_object_meta_update(
    meta: Mapping[str, Any],
    old_meta: Mapping[str, Any],
    *,
    namespaced: bool,
    name_fn: NameFunc,
    path: str = "metadata",
) -> list[f.FieldError]:
    """The metadata errors of updating `old_meta` to `meta`, once each in upstream's order."""
    effective = after_before_update(meta, old_meta, namespaced=namespaced)
    errs = validate_object_meta(effective, namespaced=namespaced, name_fn=name_fn, path=path)
    errs.extend(_update_only_errors(effective, old_meta, path))
    return errs


def validate_metadata(
    obj: Mapping[str, Any], old: Mapping[str, Any] | None, *, namespaced: bool, name_fn: NameFunc
) -> list[f.FieldError]:
    """The metadata errors of creating `obj` (of updating `old` to it when given)."""
    meta = as_mapping(obj.get("metadata"))
    if old is None:
        return validate_object_meta(meta, namespaced=namespaced, name_fn=name_fn)
    return validate_object_meta_update(
        meta, as_mapping(old.get("metadata")), namespaced=namespaced, name_fn=name_fn
    )


def validate_namespaced_metadata(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[f.FieldError]:
    """`validate_metadata` of a namespaced kind whose names are DNS subdomains."""
    return validate_metadata(obj, old, namespaced=True, name_fn=name_is_dns_subdomain)


def _update_only_errors(
    meta: Mapping[str, Any], old_meta: Mapping[str, Any], path: str
) -> list[f.FieldError]:
    """ValidateObjectMetaAccessorUpdate's own checks (the rest repeat the create checks)."""
    errs: list[f.FieldError] = []
    if old_meta.get("deletionTimestamp"):
        new_finalizers = meta.get("finalizers")
        old_finalizers = old_meta.get("finalizers")
        errs.extend(
            validate_no_new_finalizers(
                new_finalizers if isinstance(new_finalizers, list) else [],
                old_finalizers if isinstance(old_finalizers, list) else [],
                f.child(path, "finalizers"),
            )
        )
    for name in ("name", "namespace", "uid"):
        new, old = _text(meta.get(name)), _text(old_meta.get(name))
        if new != old:
            errs.append(f.invalid(f.child(path, name), new, FIELD_IMMUTABLE))
    for name in ("creationTimestamp", "deletionTimestamp"):
        new_time, old_time = meta.get(name), old_meta.get(name)
        if _instant(new_time) != _instant(old_time):
            errs.append(f.invalid(f.child(path, name), _shown_time(new_time), FIELD_IMMUTABLE))
    grace, old_grace = meta.get("deletionGracePeriodSeconds"), old_meta.get("deletionGracePeriodSeconds")
    if grace != old_grace:
        errs.append(f.invalid(f.child(path, "deletionGracePeriodSeconds"), grace, FIELD_IMMUTABLE))
    return errs


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _instant(value: Any) -> datetime | str | None:
    """A metav1.Time for comparison (Semantic.DeepEqual compares instants); None when unset."""
    if not value:
        return None
    text = str(value)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return text
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _shown_time(value: Any) -> Any:
    """How the error shows a metav1.Time: its JSON form (RFC 3339 in UTC, whole seconds), null
    when unset (upstream's objectmeta_test: `Invalid value: "1970-01-01T00:16:40Z"`)."""
    instant = _instant(value)
    if instant is None:
        return None
    if isinstance(instant, str):
        return instant
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")
