"""Namespace lifecycle decisions, as kube-apiserver's namespace storage and strategies and the
namespace controller's condition bookkeeping make them (pkg/registry/core/namespace/strategy.go,
pkg/registry/core/namespace/storage/storage.go, pkg/controller/namespace/deletion/
status_condition_utils.go). Pure functions on namespace JSON dicts; each returns a new object.

- A new namespace is `Active` and always carries the `kubernetes` finalizer in `spec.finalizers`
  (PrepareForCreate appends it to finalizers given).
- An update of the namespace keeps `spec.finalizers` and `status` as stored; the `status`
  subresource keeps `spec`; the `finalize` subresource keeps `status`.
- The first DELETE sets `deletionTimestamp` and phase `Terminating` and keeps the namespace;
  a DELETE of a namespace already terminating removes it only once `spec.finalizers` is empty.
- An update that leaves both `spec.finalizers` and `metadata.finalizers` empty on a namespace
  being deleted removes it (ShouldDeleteNamespaceDuringUpdate).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.core import deletion

JSON = dict[str, Any]

FINALIZER_KUBERNETES = "kubernetes"
ACTIVE = "Active"
TERMINATING = "Terminating"
#: kube-apiserver's immortal namespaces (NamespaceLifecycle: default, kube-system, kube-public).
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})

DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
GROUP_VERSION_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"
#: conditionTypes: the condition types the namespace deleter maintains, in upstream's order.
CONDITION_TYPES = (
    DISCOVERY_FAILURE,
    GROUP_VERSION_PARSING_FAILURE,
    CONTENT_FAILURE,
    CONTENT_REMAINING,
    FINALIZERS_REMAINING,
)
#: okReasons and okMessages: each condition's "False" variant.
OK_CONDITIONS: dict[str, tuple[str, str]] = {
    DISCOVERY_FAILURE: ("ResourcesDiscovered", "All resources successfully discovered"),
    GROUP_VERSION_PARSING_FAILURE: ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    CONTENT_FAILURE: ("ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    CONTENT_REMAINING: ("ContentRemoved", "All content successfully removed"),
    FINALIZERS_REMAINING: ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}


def _meta(obj: Mapping[str, Any]) -> JSON:
    meta = obj.get("metadata")
    return dict(meta) if isinstance(meta, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> JSON:
    spec = obj.get("spec")
    return dict(spec) if isinstance(spec, Mapping) else {}


def spec_finalizers(obj: Mapping[str, Any]) -> list[str]:
    return [str(f) for f in _spec(obj).get("finalizers") or []]


def phase(obj: Mapping[str, Any]) -> str:
    status = obj.get("status")
    return str(status.get("phase") or "") if isinstance(status, Mapping) else ""


#: NamespaceDefaultLabelName: the label every namespace carries with its own name.
NAME_LABEL = "kubernetes.io/metadata.name"


def prepare_for_create(obj: Mapping[str, Any]) -> JSON:
    """PrepareForCreate: status Active, `kubernetes` appended to spec.finalizers when missing;
    the `kubernetes.io/metadata.name` label (set by the defaulting of a decoded namespace)."""
    meta = _meta(obj)
    name = meta.get("name")
    labels = meta.get("labels")
    if isinstance(name, str) and name and (isinstance(labels, Mapping) or "labels" not in meta):
        meta["labels"] = {**(labels or {}), NAME_LABEL: name}
    obj = {**obj, "metadata": meta}
    spec = _spec(obj)
    finalizers = spec_finalizers(obj)
    if FINALIZER_KUBERNETES not in finalizers:
        finalizers.append(FINALIZER_KUBERNETES)
    spec["finalizers"] = finalizers
    return {**obj, "spec": spec, "status": {"phase": ACTIVE}}


def prepare_for_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> JSON:
    """namespaceStrategy.PrepareForUpdate: spec.finalizers and status stay as stored."""
    spec = _spec(obj)
    old_finalizers = _spec(old).get("finalizers")
    if old_finalizers is None:
        spec.pop("finalizers", None)
    else:
        spec["finalizers"] = old_finalizers
    out = {k: v for k, v in obj.items() if k not in ("spec", "status")}
    if spec or "spec" in obj:
        out["spec"] = spec
    if "status" in old:
        out["status"] = old["status"]
    return out


def prepare_for_finalize(obj: Mapping[str, Any], old: Mapping[str, Any]) -> JSON:
    """namespaceFinalizeStrategy.PrepareForUpdate: status stays as stored."""
    out = {k: v for k, v in obj.items() if k != "status"}
    if "status" in old:
        out["status"] = old["status"]
    return out


def should_delete_during_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """ShouldDeleteNamespaceDuringUpdate: no spec finalizer left, and the generic rule."""
    return not spec_finalizers(obj) and deletion.should_delete_during_update(obj, old)


def first_delete(obj: Mapping[str, Any], now: str, options: Mapping[str, Any]) -> JSON:
    """The namespace REST Delete's first request: deletionTimestamp (now), phase Terminating, and
    the orphan / foregroundDeletion finalizers the options ask for."""
    meta = _meta(obj)
    if not meta.get("deletionTimestamp"):
        meta["deletionTimestamp"] = now
    current = [str(f) for f in meta.get("finalizers") or []]
    changed = deletion.deletion_finalizers(current, _policy(options))
    if changed is not None:
        meta["finalizers"] = changed
    status = dict(obj.get("status") or {}) if isinstance(obj.get("status"), Mapping) else {}
    status["phase"] = TERMINATING
    return {**obj, "metadata": meta, "status": status}


def _policy(options: Mapping[str, Any]) -> str | None:
    orphan = options.get("orphanDependents")
    if isinstance(orphan, bool):
        return "Orphan" if orphan else "Foreground"
    policy = options.get("propagationPolicy")
    return str(policy) if isinstance(policy, str) and policy else None


def without_finalizer(obj: Mapping[str, Any], token: str = FINALIZER_KUBERNETES) -> JSON:
    """finalizeNamespace: spec.finalizers without `token`, the rest sorted (a set's List)."""
    spec = _spec(obj)
    spec["finalizers"] = sorted({f for f in spec_finalizers(obj) if f != token})
    return {**obj, "spec": spec}


def remaining_condition_messages(
    resources: Mapping[tuple[str, str], int], finalizers: Mapping[str, int]
) -> list[JSON]:
    """ProcessContentTotals: NamespaceContentRemaining and NamespaceFinalizersRemaining (True)
    from the remaining instances per (group, resource) and per finalizer."""
    conditions: list[JSON] = []
    if resources:
        shown = sorted(
            f"{resource}.{group} has {count} resource instances"
            for (group, resource), count in resources.items()
            if count
        )
        conditions.append(
            _failure(
                CONTENT_REMAINING, "SomeResourcesRemain", f"Some resources are remaining: {', '.join(shown)}"
            )
        )
    if finalizers:
        shown = sorted(f"{name} in {count} resource instances" for name, count in finalizers.items() if count)
        message = f"Some content in the namespace has finalizers remaining: {', '.join(shown)}"
        conditions.append(_failure(FINALIZERS_REMAINING, "SomeFinalizersRemain", message))
    return conditions


def content_failure(errors: Sequence[str]) -> JSON | None:
    """makeDeleteContentCondition: NamespaceDeletionContentFailure from the deletion errors."""
    if not errors:
        return None
    message = f"Failed to delete all resource types, {len(errors)} remaining: {', '.join(sorted(errors))}"
    return _failure(CONTENT_FAILURE, "ContentDeletionFailed", message)


def _failure(kind: str, reason: str, message: str) -> JSON:
    return {"type": kind, "status": "True", "reason": reason, "message": message}


def with_conditions(obj: Mapping[str, Any], new: Sequence[Mapping[str, Any]], now: str) -> JSON | None:
    """updateConditions: every maintained condition set to its new value (the "ok" variant when
    `new` has none), keeping lastTransitionTime unless the status changes; None when nothing
    changes."""
    status = dict(obj.get("status") or {}) if isinstance(obj.get("status"), Mapping) else {}
    conditions = [dict(c) for c in status.get("conditions") or [] if isinstance(c, Mapping)]
    by_type = {str(c.get("type")): c for c in new}
    changed = False
    for kind in CONDITION_TYPES:
        wanted = by_type.get(kind)
        if wanted is None:
            reason, message = OK_CONDITIONS[kind]
            wanted = {"type": kind, "status": "False", "reason": reason, "message": message}
        old = next((c for c in conditions if c.get("type") == kind), None)
        if old is None:
            conditions.append({**wanted, "lastTransitionTime": now})
            changed = True
        elif (old.get("status"), old.get("message"), old.get("reason")) != (
            wanted["status"],
            wanted["message"],
            wanted["reason"],
        ):
            if old.get("status") != wanted["status"]:
                old["lastTransitionTime"] = now
            old.update(status=wanted["status"], reason=wanted["reason"], message=wanted["message"])
            changed = True
    if not changed:
        return None
    status["conditions"] = conditions
    return {**obj, "status": status}
