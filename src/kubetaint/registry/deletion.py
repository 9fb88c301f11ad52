"""What a delete request does to an object that finalizers or its kind's REST keep: the kinds
whose first delete is an update (a namespace turns Terminating, a CustomResourceDefinition gains
its cleanup finalizer), a namespace whose spec.finalizers remain, and objects marked for deletion
while their finalizers are pending (pods deleted at once too; a graceful pod deletion has its own
path: registry.graceful)."""

from __future__ import annotations

from kubetaint.api import crd as crds
from kubetaint.core import namespaces
from kubetaint.core.deletion import marked_for_deletion, should_delete_during_update
from kubetaint.store.interface import JSON, Store, object_key
from kubetaint.store.mutation import check_delete_preconditions

NAMESPACES = "namespaces"
CRDS = f"customresourcedefinitions.{crds.GROUP}"


def kept_by_delete(
    resource: str,
    name: str,
    old: JSON,
    *,
    now: str,
    propagation_policy: str | None,
    resource_version: str | None,
    uid: str | None,
) -> tuple[JSON, bool] | None:
    """The object a delete of `old` leaves stored and whether it must be written (True) or is
    returned as it is (False); None when the object is removed at once. Preconditions are
    checked whenever the object stays."""
    deleting = bool((old.get("metadata") or {}).get("deletionTimestamp"))
    kept: tuple[JSON, bool] | None = None
    if resource == NAMESPACES and not deleting:
        # the namespace REST Delete's first request: Terminating, removed once finalized
        options = {"propagationPolicy": propagation_policy} if propagation_policy else {}
        kept = namespaces.first_delete(old, now, options), True
    elif resource == CRDS and not deleting:
        # the CRD REST Delete's first request: the cleanup finalizer deletes the custom resources
        kept = crds.first_delete(old, now), True
    elif resource == NAMESPACES and namespaces.spec_finalizers(old):
        kept = old, False  # prior to final deletion, spec.finalizers must be empty
    elif resource != "pods":
        marked = marked_for_deletion(old, propagation_policy, now)
        if marked is not None:
            kept = marked, True
    elif (old.get("metadata") or {}).get("finalizers"):
        # a pod deleted at once (not gracefully: grace period 0) while it has finalizers is only
        # marked (updateForGracefulDeletionAndFinalizers): deletionTimestamp now unless set,
        # deletionGracePeriodSeconds 0; it goes once an update removes its last finalizer
        marked = marked_for_deletion(old, None, now)
        if marked is not None:
            kept = marked, marked != old
    if kept is not None:
        check_delete_preconditions(resource, name, old, resource_version, uid)
    return kept


def delete_or_keep(
    store: Store,
    resource: str,
    old: JSON,
    *,
    now: str,
    propagation_policy: str | None,
    resource_version: str | None,
    uid: str | None,
    dry_run: bool,
) -> JSON:
    """A delete of `old` once admitted (not a pod deleted gracefully): the object marked or kept
    as `kept_by_delete` says (written when it must be), else removed."""
    namespace, name = object_key(old)
    kept = kept_by_delete(
        resource,
        name,
        old,
        now=now,
        propagation_policy=propagation_policy,
        resource_version=resource_version,
        uid=uid,
    )
    if kept is not None:
        obj, write = kept
        return store.update(resource, obj, dry_run=dry_run) if write else obj
    return store.delete(
        resource, namespace, name, resource_version=resource_version, uid=uid, dry_run=dry_run
    )


def deletes_during_update(resource: str, obj: JSON, old: JSON) -> bool:
    """ShouldDeleteDuringUpdate, with the namespaces' spec.finalizers rule."""
    if resource == NAMESPACES:
        return namespaces.should_delete_during_update(obj, old)
    return should_delete_during_update(obj, old)
