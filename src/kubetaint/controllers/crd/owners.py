"""Garbage collection of the objects custom resources own (the part of kube-controller-manager's
garbage collector, pkg/controller/garbagecollector, that kubetaint's collector of built-in owners
does not follow): when a custom resource is deleted, each object whose ownerReferences name it is
deleted (Background) unless another owner reference remains, which is then kept and the dangling
one removed; a custom resource deleted with the `orphan` finalizer first has the references to
it removed from its dependents, one deleted with `foregroundDeletion` waits until its dependents
are gone (each deleted in the background) before the finalizer is removed.

Custom resources are followed through one informer per established CRD's resource, started on the
clock; dependents are found by listing the served resources (the owner's namespace for a
namespaced owner, every namespace otherwise) when an owner goes. Dependents whose custom owner
went away while nothing watched (before a restart) are not collected.
"""

from __future__ import annotations

import logging
from typing import Any

from kubetaint.api.crd import served_resources
from kubetaint.api.errors import StatusError
from kubetaint.api.jsonview import meta_of
from kubetaint.api.resources import RESOURCES, REVIEW_GROUPS
from kubetaint.clock.base import Clock, Handle
from kubetaint.core.deletion import FINALIZER_FOREGROUND, FINALIZER_ORPHAN, has_finalizer
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import PropagatingStore, object_key

JSON = dict[str, Any]
log = logging.getLogger(__name__)
#: How long a foreground deletion waits before looking at its dependents again.
RECHECK_SECONDS = 1.0


def _refs(obj: JSON) -> list[JSON]:
    refs = meta_of(obj).get("ownerReferences")
    return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


#: The built-in resources dependents are looked for in.
BUILT_IN = tuple(
    r.store_resource
    for r in RESOURCES
    if r.served and r.group not in REVIEW_GROUPS and "list" in r.verbs and "delete" in r.verbs
)


class CustomResourceOwners:
    """Collects the dependents of deleted custom resources."""

    def __init__(self, store: PropagatingStore, clock: Clock, *, crd_informer: Informer) -> None:
        self.store = store
        self.clock = clock
        self.crds = crd_informer
        self.informers: dict[str, Informer] = {}
        self._namespaced: dict[str, bool] = {}
        self._timers: set[Handle] = set()
        self._stopped = False
        self.crds.add_handlers(
            EventHandlers(on_add=self._crd_changed, on_update=lambda old, new: self._crd_changed(new))
        )

    def start(self) -> None:
        """Nothing to start: the CRD informer is shared; custom resource informers start as CRDs
        are established."""

    def stop(self) -> None:
        self._stopped = True
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        for informer in self.informers.values():
            informer.stop()

    def _later(self, delay: float, callback: Any) -> None:
        if self._stopped:
            return
        handle: Handle | None = None

        def fire() -> None:
            if handle is not None:
                self._timers.discard(handle)
            try:
                callback()
            except Exception as err:  # retried, as the work queue does
                log.warning("garbage collection of custom resource dependents failed: %s", err)
                self._later(RECHECK_SECONDS, callback)

        handle = self.clock.call_later(delay, fire)
        self._timers.add(handle)

    # following custom resources --------------------------------------------------------------

    def _crd_changed(self, crd: JSON) -> None:
        for res in served_resources(crd):
            resource = res.store_resource
            self._namespaced[resource] = res.namespaced
            if resource not in self.informers:
                informer = Informer(self.store, resource)
                informer.add_handlers(self._handlers(resource))
                self.informers[resource] = informer
                self._later(0, informer.start)

    def _handlers(self, resource: str) -> EventHandlers:
        def changed(old: JSON, new: JSON) -> None:
            self._owner_changed(resource, new)

        def deleted(obj: JSON) -> None:
            self._owner_deleted(resource, obj)

        return EventHandlers(on_update=changed, on_delete=deleted)

    def _owner_changed(self, resource: str, obj: JSON) -> None:
        if not meta_of(obj).get("deletionTimestamp"):
            return
        if has_finalizer(obj, FINALIZER_ORPHAN):
            self._later(0, lambda: self._orphan(resource, obj))
        elif has_finalizer(obj, FINALIZER_FOREGROUND):
            self._later(0, lambda: self._foreground(resource, obj))

    def _owner_deleted(self, resource: str, obj: JSON) -> None:
        self._later(0, lambda: self._collect(resource, obj))

    # dependents ------------------------------------------------------------------------------

    def _resources(self) -> list[str]:
        return [*BUILT_IN, *self.informers]

    def dependents(self, resource: str, owner: JSON) -> list[tuple[str, JSON]]:
        """(resource, object) of every object with an owner reference to `owner`'s uid."""
        uid = str(meta_of(owner).get("uid") or "")
        namespace = str(meta_of(owner).get("namespace") or "") if self._namespaced.get(resource, True) else ""
        found: list[tuple[str, JSON]] = []
        for res in self._resources():
            try:
                items = self.store.list(res, namespace=namespace).items
            except StatusError:
                continue
            found.extend((res, obj) for obj in items if any(str(r.get("uid")) == uid for r in _refs(obj)))
        return found

    def _collect(self, resource: str, owner: JSON) -> None:
        """attemptToDeleteItem for each dependent of an owner that is gone."""
        uid = str(meta_of(owner).get("uid") or "")
        for res, dep in self.dependents(resource, owner):
            others = [r for r in _refs(dep) if str(r.get("uid")) != uid]
            if others:
                self._without_ref(res, dep, uid)
            else:
                self._delete(res, dep, "Background")

    def _orphan(self, resource: str, owner: JSON) -> None:
        """orphanDependents, then the orphan finalizer removed."""
        uid = str(meta_of(owner).get("uid") or "")
        for res, dep in self.dependents(resource, owner):
            self._without_ref(res, dep, uid)
        self._without_finalizer(resource, owner, FINALIZER_ORPHAN)

    def _foreground(self, resource: str, owner: JSON) -> None:
        """processDeletingDependentsItem: delete the dependents, remove the finalizer once none
        blocks the owner's deletion."""
        uid = str(meta_of(owner).get("uid") or "")
        blocking = 0
        for res, dep in self.dependents(resource, owner):
            if any(str(r.get("uid")) == uid and r.get("blockOwnerDeletion") for r in _refs(dep)):
                blocking += 1
            if not meta_of(dep).get("deletionTimestamp"):
                self._delete(res, dep, "Background")
        if blocking:
            self._later(RECHECK_SECONDS, lambda: self._foreground(resource, owner))
            return
        self._without_finalizer(resource, owner, FINALIZER_FOREGROUND)

    # writes ----------------------------------------------------------------------------------

    def _delete(self, resource: str, obj: JSON, policy: str) -> None:
        namespace, name = object_key(obj)
        log.info(
            "garbagecollector: deleting %s %s/%s (propagationPolicy %s)", resource, namespace, name, policy
        )
        try:
            self.store.delete(
                resource,
                namespace,
                name,
                uid=str(meta_of(obj).get("uid") or "") or None,
                propagation_policy=policy,
            )
        except StatusError as err:
            if err.code not in (404, 409):
                raise

    def _without_ref(self, resource: str, obj: JSON, uid: str) -> None:
        meta = dict(meta_of(obj))
        refs = [r for r in _refs(obj) if str(r.get("uid")) != uid]
        if refs:
            meta["ownerReferences"] = refs
        else:
            meta.pop("ownerReferences", None)
        try:
            self.store.update(resource, {**obj, "metadata": meta})
        except StatusError as err:
            if err.code != 404:
                raise

    def _without_finalizer(self, resource: str, obj: JSON, finalizer: str) -> None:
        namespace, name = object_key(obj)
        try:
            current = self.store.get(resource, namespace, name)
        except StatusError as err:
            if err.code == 404:
                return
            raise
        meta = dict(meta_of(current))
        meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != finalizer]
        try:
            self.store.update(resource, {**current, "metadata": meta})
        except StatusError as err:
            if err.code != 404:
                raise
