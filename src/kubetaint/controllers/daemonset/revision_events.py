"""The DaemonSet controller's ControllerRevision handlers (daemon_controller.go's addHistory,
updateHistory and deleteHistory): a revision's change queues the DaemonSet that controls it, or
for an orphan the DaemonSets whose selector matches it (one of them may adopt it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.controllers.daemonset.claiming import Key, string_labels
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.owners import OwnerSelectorIndex
from kubetaint.controllers.replicaset.workqueue import WorkQueue
from kubetaint.store.informer import Informer
from kubetaint.store.interface import JSON


class RevisionEvents:
    """A mixin of DaemonSetController, which sets the attributes below and registers the
    handlers with its ControllerRevision informer."""

    queue: WorkQueue[Key]
    daemonsets: Informer
    owners: OwnerSelectorIndex

    def _history_added(self, history: JSON) -> None:
        """addHistory: its controlling DaemonSet queued, or for an orphan the DaemonSets whose
        selector matches its labels (one of them may adopt it)."""
        meta = history.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            self._history_deleted(history)
            return
        ref = podutil.controller_ref_of(history)
        if ref is not None:
            self._queue_controller(history, ref)
            return
        self._queue_matching(history)

    def _history_updated(self, old: JSON, history: JSON) -> None:
        """updateHistory: the old and the new controller queued when the controller reference
        changed; an orphan whose labels or reference changed queues the DaemonSets matching it."""
        old_meta, meta = old.get("metadata") or {}, history.get("metadata") or {}
        if old_meta.get("resourceVersion") == meta.get("resourceVersion"):
            return
        ref, old_ref = podutil.controller_ref_of(history), podutil.controller_ref_of(old)
        ref_changed = ref != old_ref
        if ref_changed and old_ref is not None:
            self._queue_controller(old, old_ref)
        if ref is not None:
            self._queue_controller(history, ref)
            return
        if ref_changed or old_meta.get("labels") != meta.get("labels"):
            self._queue_matching(history)

    def _history_deleted(self, history: JSON) -> None:
        """deleteHistory: its controlling DaemonSet queued."""
        ref = podutil.controller_ref_of(history)
        if ref is not None:
            self._queue_controller(history, ref)

    def _queue_controller(self, history: JSON, ref: Mapping[str, Any]) -> None:
        """resolveControllerRef, then enqueueDaemonSet: the DaemonSet the reference names, when it
        exists with that uid."""
        if ref.get("kind") != "DaemonSet":
            return
        namespace = str((history.get("metadata") or {}).get("namespace") or "")
        ds = self.daemonsets.get(namespace, str(ref.get("name") or ""))
        if ds is not None and (ds.get("metadata") or {}).get("uid") == ref.get("uid"):
            self.queue.add(podutil.key_of(ds))

    def _queue_matching(self, history: JSON) -> None:
        """getDaemonSetsForHistory, each queued."""
        meta = history.get("metadata") or {}
        labels = meta.get("labels")
        if type(labels) is dict and string_labels(labels):
            for key in self.owners.matching_keys(str(meta.get("namespace") or ""), labels):
                self.queue.add(key)
