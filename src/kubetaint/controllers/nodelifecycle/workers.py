"""The node lifecycle controller's event-driven workers (mirrors doNodeProcessingPassWorker,
doNoScheduleTaintingPass, reconcileNodeLabels with labelReconcileInfo, podUpdated,
doPodProcessingWorker and processPod in node_lifecycle_controller.go). Informer handlers queue
names; one clock turn drains each queue.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle
from kubetaint.clock.slices import slices_of
from kubetaint.controllers.nodelifecycle.health import NodeHealthTracker
from kubetaint.controllers.nodelifecycle.taints import mark_pods_not_ready, swap_node_controller_taint
from kubetaint.core.conditions import get_status_condition, no_schedule_taint_changes
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import Changes, Informer
from kubetaint.store.interface import JSON, Store

log = logging.getLogger(__name__)

#: (primary key, secondary key, ensure the secondary exists)
LABEL_RECONCILE_INFO = (
    ("kubernetes.io/os", "beta.kubernetes.io/os", True),
    ("kubernetes.io/arch", "beta.kubernetes.io/arch", True),
)


def guard(handler: Callable[[Any], Any], arg: Any) -> None:
    """Run one item; a bad object is logged and never stops the controller."""
    try:
        handler(arg)
    except Exception:
        log.exception("node lifecycle controller: failed to process %s", arg)


class NodeEventWorkers:
    """NoSchedule condition taints and labels on node events; NotReady marking of newly bound pods."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        nodes: Informer,
        pods: Informer,
        health: NodeHealthTracker,
        recorder: EventRecorder,
    ) -> None:
        self._store = store
        self._clock = clock
        self._slices = slices_of(clock)
        self._nodes = nodes
        self._pods = pods
        self._health = health
        self._recorder = recorder
        self._node_queue: OrderedDict[str, None] = OrderedDict()
        self._pod_queue: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._node_worker: Handle | None = None
        self._pod_worker: Handle | None = None
        self.running = False

    def stop(self) -> None:
        self.running = False
        for handle in (self._node_worker, self._pod_worker):
            if handle is not None:
                handle.cancel()
        self._node_worker = self._pod_worker = None

    # nodes -----------------------------------------------------------------------------------

    def node_changed(self, name: str) -> None:
        if not self.running:
            return
        self._node_queue[name] = None
        if self._node_worker is None:
            self._node_worker = self._clock.call_soon(self._drain_nodes)

    def _drain_nodes(self) -> None:
        self._node_worker = None
        slices, handled = self._slices, 0
        while self.running and self._node_queue:
            if handled and slices is not None and slices.slice_over():
                self._node_worker = self._clock.call_soon(self._drain_nodes)
                return
            handled += 1
            name, _ = self._node_queue.popitem(last=False)
            guard(self.do_no_schedule_tainting_pass, name)
            guard(self.reconcile_node_labels, name)

    def do_no_schedule_tainting_pass(self, name: str) -> None:
        """Swap the node's condition NoSchedule taints to match its conditions and spec.unschedulable."""
        node = self._nodes.get("", name)
        if node is None:
            return
        to_add, to_remove = no_schedule_taint_changes(node)
        if not to_add and not to_remove:
            return
        if not swap_node_controller_taint(self._store, self._clock, to_add, to_remove, node):
            log.error("Failed to taint NoSchedule on node %s", name)

    def reconcile_node_labels(self, name: str) -> None:
        """reconcileNodeLabels: write the secondary labels of LABEL_RECONCILE_INFO that are stale
        or missing so they match their primary (re-reading the node on conflict)."""
        node = self._nodes.get("", name)
        labels = ((node or {}).get("metadata") or {}).get("labels") or {}
        wanted = {
            secondary: labels[primary]
            for primary, secondary, ensure in LABEL_RECONCILE_INFO
            if primary in labels and (labels[secondary] != labels[primary] if secondary in labels else ensure)
        }
        if node is None or not wanted:
            return
        for attempt in range(5):
            current = self._store.get("nodes", "", name) if attempt else node
            meta = current.get("metadata") or {}
            new_labels = {**(meta.get("labels") or {}), **wanted}
            try:
                self._store.update("nodes", {**current, "metadata": {**meta, "labels": new_labels}})
                return
            except StatusError as err:
                if err.code != 409:
                    raise

    # pods --------------------------------------------------------------------------------------

    def pods_changed(self, changes: Changes) -> None:
        """The pod informer's handler: `pod_updated` of each add and update in turn (deletes are
        not its business)."""
        if not self.running:
            return
        if changes.only == "ADDED":  # a listing or a replay: each bound pod queued by its cache key
            queue, queued = self._pod_queue, False
            for _, key, _, pod in changes:
                if (pod.get("spec") or {}).get("nodeName"):
                    queue[key] = None
                    queued = True
            if queued and self._pod_worker is None:
                self._pod_worker = self._clock.call_soon(self._drain_pods)
            return
        pod_updated = self.pod_updated
        for kind, _, old, pod in changes:
            if kind != "DELETED":
                pod_updated(old, pod)

    def pod_updated(self, old: JSON | None, new: JSON | None) -> None:
        if not self.running or new is None:
            return
        node_name = (new.get("spec") or {}).get("nodeName") or ""
        old_node = ((old or {}).get("spec") or {}).get("nodeName") or ""
        if node_name and (old is None or node_name != old_node):
            meta = new.get("metadata") or {}
            self._pod_queue[(str(meta.get("namespace") or ""), str(meta.get("name") or ""))] = None
            if self._pod_worker is None:
                self._pod_worker = self._clock.call_soon(self._drain_pods)

    def _drain_pods(self) -> None:
        self._pod_worker = None
        slices, handled = self._slices, 0
        while self.running and self._pod_queue:
            if handled and slices is not None and slices.slice_over():
                self._pod_worker = self._clock.call_soon(self._drain_pods)
                return
            handled += 1
            item, _ = self._pod_queue.popitem(last=False)
            guard(self.process_pod, item)

    def process_pod(self, item: tuple[str, str]) -> None:
        """A pod newly bound to a node that is not Ready is marked NotReady at once."""
        pod = self._pods.get(*item)
        if pod is None:
            return
        node_name = str((pod.get("spec") or {}).get("nodeName") or "")
        health = self._health.get(node_name)
        if health is None or self._nodes.get("", node_name) is None:
            return
        ready = get_status_condition(health.status, "Ready")
        if ready is None:
            return
        if ready.get("status") != "True":
            mark_pods_not_ready(self._store, self._clock, self._recorder, [pod], node_name)
