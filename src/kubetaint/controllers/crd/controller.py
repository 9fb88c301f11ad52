"""The apiextensions controllers of CustomResourceDefinitions (mirrors k8s.io/apiextensions-apiserver
pkg/controller/status/naming_controller.go, establish/establishing_controller.go and
finalizer/crd_finalizer.go).

- naming and establishing: a CRD's requested names are accepted unless another CRD of its group
  holds one of them (condition NamesAccepted: `NoConflicts` "no conflicts found", or the
  conflict), then it is Established (`InitialNamesAccepted` "the initial names have been
  accepted"): from then on its custom resources are served.
- the cleanup finalizer: a CRD being deleted with the `customresourcecleanup.apiextensions.k8s.io`
  finalizer gets Terminating `InstanceDeletionInProgress` "CustomResource deletion is in progress",
  every custom resource of it is deleted, and once none remains the finalizer is removed
  (`InstanceDeletionCompleted` "removed all instances"), which deletes the CRD.

The work runs on the clock (`call_soon`), never inside a store's event delivery; a failed sync is
retried after a second.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from kubetaint.api.crd import (
    CLEANUP_FINALIZER,
    CRDS,
    TERMINATING,
    established_status,
    set_condition,
    spec_of,
)
from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, format_time
from kubetaint.controllers.sorted_queue import NameQueueController
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import Store, object_key

JSON = dict[str, Any]
log = logging.getLogger(__name__)
RETRY_SECONDS = 1.0
#: How long after its last delete a CRD waits before checking again for remaining instances.
REMAINING_SECONDS = 1.0


class CRDWriter(Store, Protocol):
    """The store the controller writes through (kubetaint.registry.Registry): the CRD's status
    subresource, and deletes that honour finalizers."""

    def update_status(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON: ...


class CRDController(NameQueueController[CRDWriter]):
    """Names, establishes and cleans up CustomResourceDefinitions."""

    def __init__(self, store: CRDWriter, clock: Clock, *, crd_informer: Informer | None = None) -> None:
        super().__init__(store, clock, self._sync_queued)
        self.crds = self.informers.shared_or_own(crd_informer, CRDS)
        self.crds.add_handlers(
            EventHandlers(
                on_add=self._changed,
                on_update=lambda old, new: self._changed(new),
                on_delete=self._deleted,
            )
        )

    # queue -----------------------------------------------------------------------------------

    def _changed(self, crd: JSON) -> None:
        self.queue.add(object_key(crd)[1])

    def _deleted(self, crd: JSON) -> None:
        # a freed name may let another CRD of the group be accepted
        group = spec_of(crd).get("group")
        for other in self.crds.items():
            if spec_of(other).get("group") == group:
                self.queue.add(object_key(other)[1])

    def _sync_queued(self, name: str) -> None:
        try:
            again = self.sync(name)
        except Exception as err:  # retried, as AddRateLimited does
            log.warning("sync of CustomResourceDefinition %s failed: %s", name, err)
            self.queue.add_after(name, RETRY_SECONDS)
        else:
            if again:
                self.queue.add_after(name, REMAINING_SECONDS)

    # sync ------------------------------------------------------------------------------------

    def sync(self, name: str) -> bool:
        """One pass over the CRD `name`; True when it must be looked at again (instances that
        wait for their own finalizers)."""
        try:
            crd = self.store.get(CRDS, "", name)
        except StatusError as err:
            if err.code == 404:
                return False
            raise
        meta = crd.get("metadata") or {}
        now = format_time(self.clock.now())
        if meta.get("deletionTimestamp"):
            if CLEANUP_FINALIZER not in (meta.get("finalizers") or []):
                return False
            return self._clean_up(crd, now)
        others = [c for c in self.store.list(CRDS).items if object_key(c)[1] != name]
        updated = established_status(crd, others, now)
        if updated.get("status") != crd.get("status"):
            self.store.update_status(CRDS, updated)
        return False

    def _clean_up(self, crd: JSON, now: str) -> bool:
        """crd_finalizer.sync: delete every instance, then remove the finalizer."""
        spec = spec_of(crd)
        resource = f"{(spec.get('names') or {}).get('plural')}.{spec.get('group')}"
        message = "CustomResource deletion is in progress"
        progressing = set_condition(crd, TERMINATING, "True", "InstanceDeletionInProgress", message, now=now)
        if progressing.get("status") != crd.get("status"):
            crd = self.store.update_status(CRDS, progressing)
        remaining = 0
        for item in self.store.list(resource).items:
            namespace, item_name = object_key(item)
            try:
                gone = self.store.delete(resource, namespace, item_name)
            except StatusError as err:
                if err.code != 404:
                    raise
                continue
            if (gone.get("metadata") or {}).get("deletionTimestamp"):
                remaining += 1  # held by its own finalizers
        if remaining or self.store.list(resource).items:
            return True
        done = set_condition(
            crd, TERMINATING, "False", "InstanceDeletionCompleted", "removed all instances", now=now
        )
        crd = self.store.update_status(CRDS, done)
        meta = dict(crd.get("metadata") or {})
        meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != CLEANUP_FINALIZER]
        try:
            self.store.update(CRDS, {**crd, "metadata": meta})
        except StatusError as err:
            if err.code != 404:
                raise
        return False
