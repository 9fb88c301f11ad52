"""Deletion with finalizers and garbage-collection propagation, as kube-apiserver's generic
registry does it (apiserver/pkg/registry/generic/registry/store.go: shouldOrphanDependents,
shouldDeleteDependents, deletionFinalizersForGarbageCollection, markAsDeleting,
ShouldDeleteDuringUpdate; rest/update.go BeforeUpdate keeping the deletion fields).

A delete of an object that ends up with finalizers (its own, or `orphan` / `foregroundDeletion`
added for the propagation policy) does not remove it: it gets `deletionTimestamp` (now) and
`deletionGracePeriodSeconds: 0` (the store keeps generation: markAsDeleting's bump is not made),
and goes away when an update removes the last finalizer. Every apps/v1 resource served here
defaults to Background propagation (DefaultGarbageCollectionPolicy is DeleteDependents for
apps/v1; OrphanDependents only for the beta group versions and ReplicationControllers, which are not served).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

FINALIZER_ORPHAN = "orphan"
FINALIZER_FOREGROUND = "foregroundDeletion"
BACKGROUND = "Background"
FOREGROUND = "Foreground"
ORPHAN = "Orphan"
POLICIES = (ORPHAN, BACKGROUND, FOREGROUND)

JSON = dict[str, Any]


def propagation_from_options(options: Mapping[str, Any]) -> str | None:
    """DeleteOptions' policy: the legacy orphanDependents wins over propagationPolicy (validation
    rejects setting both); None leaves it to the object's finalizers and the default."""
    orphan = options.get("orphanDependents")
    if isinstance(orphan, bool):
        return ORPHAN if orphan else BACKGROUND
    policy = options.get("propagationPolicy")
    return str(policy) if isinstance(policy, str) and policy else None


def _should(finalizers: Sequence[str], policy: str | None, wanted: str, finalizer: str) -> bool:
    if policy is not None:
        return policy == wanted
    for name in finalizers:
        if name == FINALIZER_ORPHAN:
            return finalizer == FINALIZER_ORPHAN
        if name == FINALIZER_FOREGROUND:
            return finalizer == FINALIZER_FOREGROUND
    return False


def deletion_finalizers(finalizers: Sequence[str], policy: str | None) -> list[str] | None:
    """deletionFinalizersForGarbageCollection: the finalizers a delete leaves on the object, or
    None when they do not change."""
    orphan = _should(finalizers, policy, ORPHAN, FINALIZER_ORPHAN)
    foreground = _should(finalizers, policy, FOREGROUND, FINALIZER_FOREGROUND)
    updated = [f for f in finalizers if f not in (FINALIZER_ORPHAN, FINALIZER_FOREGROUND)]
    if orphan:
        updated.append(FINALIZER_ORPHAN)
    if foreground:
        updated.append(FINALIZER_FOREGROUND)
    return None if set(updated) == set(finalizers) else updated


def marked_for_deletion(obj: Mapping[str, Any], policy: str | None, now: str) -> JSON | None:
    """The object a delete stores instead of removing it (finalizers pending), or None when the
    delete removes it at once. `now` is the formatted deletion time."""
    meta = dict(obj.get("metadata") or {})
    current = [str(f) for f in meta.get("finalizers") or []]
    changed = deletion_finalizers(current, policy)
    finalizers = current if changed is None else changed
    if not finalizers:
        return None
    meta["finalizers"] = finalizers
    if not meta.get("deletionTimestamp"):
        meta["deletionTimestamp"] = now
    meta["deletionGracePeriodSeconds"] = 0
    return {**obj, "metadata": meta}


def keep_deletion_fields(obj: JSON, old: Mapping[str, Any]) -> JSON:
    """BeforeUpdate: an update can never remove or change a deletion timestamp, nor drop the
    deletion grace period."""
    old_meta = old.get("metadata") or {}
    if not old_meta.get("deletionTimestamp"):
        return obj
    meta = dict(obj.get("metadata") or {})
    meta["deletionTimestamp"] = old_meta["deletionTimestamp"]
    if meta.get("deletionGracePeriodSeconds") is None and "deletionGracePeriodSeconds" in old_meta:
        meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
    return {**obj, "metadata": meta}


def should_delete_during_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """ShouldDeleteDuringUpdate: the update removed the last finalizer of an object whose
    deletion was requested (without a pending grace period)."""
    meta = obj.get("metadata") or {}
    old_meta = old.get("metadata") or {}
    if meta.get("finalizers") or not old_meta.get("deletionTimestamp"):
        return False
    return int(old_meta.get("deletionGracePeriodSeconds") or 0) == 0


def has_finalizer(obj: Mapping[str, Any], name: str) -> bool:
    return name in ((obj.get("metadata") or {}).get("finalizers") or ())


def being_deleted(obj: Mapping[str, Any]) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))
