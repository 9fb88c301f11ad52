"""The taint eviction controller (mirrors pkg/controller/tainteviction/taint_eviction.go).

Deletes pods from nodes with NoExecute taints they do not tolerate: at once when a taint is not
tolerated, after the smallest `tolerationSeconds` of the tolerations in use otherwise, never when
every used toleration is unbounded. It acts only through the store and the clock it is given.

Informer handlers only queue work (node updates deduplicated by name, pod updates by
(namespace, name, node)); one worker turn on the clock drains the queues, always handling every
pending node update before the next pod update, as upstream's workers do.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.features import FeatureGates, comparison_operators_enabled
from kubetaint.clock.base import Clock, Handle
from kubetaint.clock.slices import slices_of
from kubetaint.controllers.tainteviction.deletion import PodDeleter, emit_cancel_event
from kubetaint.controllers.tainteviction.timed_workers import TimedWorkerQueue
from kubetaint.core.eviction import (
    decide_timer,
    node_no_execute_taints,
    node_update_needs_processing,
    pod_update_needs_processing,
)
from kubetaint.speed.reference import reference_mode
from kubetaint.store.component_informers import ComponentInformers
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import Changes, EventHandlers, Informer
from kubetaint.store.interface import JSON, Store

log = logging.getLogger(__name__)

CONTROLLER_NAME = "taint-eviction-controller"

PodItem = tuple[str, str, str]  # (namespace, name, nodeName)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _node_name(pod: Mapping[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


class TaintEvictionController:
    """NoExecute taint-based pod eviction.

    Construct with the store and clock; pass shared informers to avoid a second cache (they are
    started by `start()` if not yet started). `start()` registers handlers and starts the informers.
    """

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        pod_informer: Informer | None = None,
        node_informer: Informer | None = None,
        recorder: EventRecorder | None = None,
        feature_gates: FeatureGates | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._slices = slices_of(clock)
        self.name = CONTROLLER_NAME
        self.informers = ComponentInformers(store)
        self.nodes = self.informers.shared_or_own(node_informer, "nodes")
        self.pods = self.informers.shared_or_own(pod_informer, "pods")
        self.recorder = recorder or EventRecorder(store, clock, CONTROLLER_NAME)
        self._enable_comparison = comparison_operators_enabled(feature_gates)
        self.deleter = PodDeleter(store, clock, self.recorder)
        self.queue = TimedWorkerQueue(clock, self.deleter)
        #: nodeName → its NoExecute taints (only nodes that have some).
        self.tainted_nodes: dict[str, list[Mapping[str, Any]]] = {}
        self._node_updates: OrderedDict[str, None] = OrderedDict()
        self._pod_updates: OrderedDict[PodItem, None] = OrderedDict()
        self._worker: Handle | None = None
        self._running = False

    # lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Register informer handlers and start the informers (which replay existing objects)."""
        if self._running:
            return
        self._running = True
        self.pods.add_handlers(self._pods_changed)
        self.nodes.add_handlers(
            EventHandlers(
                on_add=lambda node: self.node_updated(None, node),
                on_update=self.node_updated,
                on_delete=lambda node: self.node_updated(node, None),
            )
        )
        self.informers.start_all()

    def stop(self) -> None:
        """Stop processing and cancel every pending timer (CancelAndWait)."""
        self._running = False
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None
        self._node_updates.clear()
        self._pod_updates.clear()
        self.queue.cancel_all()
        self.informers.stop()

    # event intake ----------------------------------------------------------------------------

    def pod_updated(self, old: JSON | None, new: JSON | None) -> None:
        """PodUpdated: queue (namespace, name, nodeName) unless tolerations and node are unchanged."""
        if old is not None and new is not None and old.get("spec") is new.get("spec"):
            return  # the very spec object (read-only): the same tolerations and nodeName
        if not self._running or not pod_update_needs_processing(old, new):
            return
        pod = new if new is not None else old
        assert pod is not None
        meta = _meta(pod)
        item = (str(meta.get("namespace") or ""), str(meta.get("name") or ""), _node_name(pod))
        self._pod_updates[item] = None
        self._wake()

    def _pods_changed(self, changes: Changes) -> None:
        """The pod informer's handler: `pod_updated` of each change in turn, an update keeping
        its spec object skipped without a call."""
        if not self._running:
            return  # (pod_updated ignores everything while stopped)
        if self._nothing_to_evict():
            return  # what it would record, the drain would drop
        if changes.only == "ADDED":  # a listing or a replay: every add counts, keyed by the cache key
            updates = self._pod_updates
            for _, (namespace, name), _, pod in changes:
                updates[(namespace, name, _node_name(pod))] = None
            if changes:
                self._wake()
            return
        pod_updated = self.pod_updated
        for kind, _, old, pod in changes:
            if kind == "MODIFIED":
                assert old is not None
                if old.get("spec") is not pod.get("spec"):
                    pod_updated(old, pod)
            elif kind == "ADDED":
                pod_updated(None, pod)
            else:
                pod_updated(pod, None)

    def node_updated(self, old: JSON | None, new: JSON | None) -> None:
        """NodeUpdated: queue the node name when its NoExecute taints changed."""
        if not self._running or not node_update_needs_processing(old, new):
            return
        node = new if new is not None else old
        assert node is not None
        self._node_updates[str(_meta(node).get("name") or "")] = None
        self._wake()

    def _wake(self) -> None:
        if self._worker is None:
            self._worker = self._clock.call_soon(self._drain)

    def _drain(self) -> None:
        self._worker = None
        slices, handled = self._slices, 0
        while self._running and (self._node_updates or self._pod_updates):
            if handled and slices is not None and slices.slice_over():
                self._wake()  # the rest after the event loop has served others
                return
            handled += 1
            if self._node_updates:
                name, _ = self._node_updates.popitem(last=False)
                self._guard(self.handle_node_update, name)
            elif self._nothing_to_evict():
                self._pod_updates.clear()
            else:
                item, _ = self._pod_updates.popitem(last=False)
                self._guard(self.handle_pod_update, item)

    def _nothing_to_evict(self) -> bool:
        """Speeds up the pod updates of a start (150,000 pods listed) or of a cluster without
        NoExecute taints: with no node tainted and no timer pending, `handle_pod_update` of any
        pod finds neither a taint to act on nor work to cancel, so the pending pod updates are
        dropped at once, and the pod informer's changes are not recorded (a node tainted
        meanwhile has its pods handled by its node update, which the drain takes first). Off in
        reference mode (each is handled)."""
        return not self.tainted_nodes and not self.queue.workers and not reference_mode()

    def _guard(self, handler: Any, arg: Any) -> None:
        # One bad object never stops the controller.
        try:
            handler(arg)
        except Exception:
            log.exception("%s: failed to process %s", self.name, arg)

    # processing ------------------------------------------------------------------------------

    def handle_node_update(self, node_name: str) -> None:
        node = self.nodes.get("", node_name)
        if node is None:
            # Node deleted: forget its taints, leave every pending timer in place.
            self.tainted_nodes.pop(node_name, None)
            return
        taints = node_no_execute_taints(node)
        if taints:
            self.tainted_nodes[node_name] = taints
        else:
            self.tainted_nodes.pop(node_name, None)
            if not self.queue.workers and not reference_mode():
                return  # each pod's cancellation would find no work: listing them changes nothing
        pods = self._pods_on_node(node_name)
        if not pods:
            return
        if not taints:
            for pod in pods:
                self._cancel_with_event(_key(pod))
            return
        now = self._clock.now()
        for pod in pods:
            self._process_pod_on_node(_key(pod), pod, taints, now)

    def handle_pod_update(self, item: PodItem) -> None:
        namespace, name, node_name = item
        pod = self.pods.get(namespace, name)
        if pod is None:
            self._cancel_with_event(f"{namespace}/{name}")
            return
        current_node = _node_name(pod)
        if current_node != node_name or not current_node:
            return
        taints = self.tainted_nodes.get(current_node)
        if taints is None:
            return
        self._process_pod_on_node(_key(pod), pod, taints, self._clock.now())

    def _process_pod_on_node(
        self, key: str, pod: Mapping[str, Any], taints: list[Mapping[str, Any]], now: float
    ) -> None:
        existing = self.queue.get_worker(key)
        decision = decide_timer(
            taints,
            (pod.get("spec") or {}).get("tolerations") or [],
            now,
            existing.created_at if existing is not None else None,
            enable_comparison=self._enable_comparison,
        )
        if decision.cancel:
            self._cancel_with_event(key)
        if decision.add is not None:
            self.queue.add_work(key, *decision.add)

    def _cancel_with_event(self, key: str) -> None:
        if self.queue.cancel_work(key):
            emit_cancel_event(self.recorder, key)

    def _pods_on_node(self, node_name: str) -> list[JSON]:
        try:
            return self._store.list("pods", field_selector=f"spec.nodeName={node_name}").items
        except StatusError as err:
            log.error("Failed to get pods assigned to node %s: %s", node_name, err.message)
            return []

    # introspection -----------------------------------------------------------------------------

    def scheduled_deletion(self, namespace: str, name: str) -> float | None:
        """When the pod's pending timer fires (None when no timer is pending)."""
        worker = self.queue.get_worker(f"{namespace}/{name}")
        return None if worker is None else worker.fire_at


def _key(pod: Mapping[str, Any]) -> str:
    meta = _meta(pod)
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
