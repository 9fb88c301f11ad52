"""The node lifecycle controller (mirrors pkg/controller/nodelifecycle/node_lifecycle_controller.go).

- monitorNodeHealth every nodeMonitorPeriod on a fixed grid from start(): node health from Ready
  heartbeats and Leases, Ready/pressure → Unknown past the grace period, NodeNotReady events and
  MarkPodsNotReady, NoExecute not-ready/unreachable decisions from the Ready condition observed
  before the pass changed it, zone states and per-zone rate limits.
- doNoScheduleTaintingPass (and label reconciliation) on every node add/update.
- doNoExecuteTaintingPass on the NodeEvictionPeriod (100 ms) grid, but only scheduled at grid
  points where some zone queue has work and its limiter would accept: skipped grid points are
  exactly those at which a polling pass would change nothing.
At an instant shared by a health pass and a tainting pass, the health pass runs first.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle
from kubetaint.controllers.nodelifecycle.health import LEASES, NODE_LEASE_NAMESPACE, NodeHealthTracker
from kubetaint.controllers.nodelifecycle.labels import reconcile_node_labels
from kubetaint.controllers.nodelifecycle.rate_limited_queue import (
    NODE_EVICTION_PERIOD,
    RateLimitedTimedQueue,
    TimedValue,
)
from kubetaint.controllers.nodelifecycle.rate_limiter import to_nanos
from kubetaint.controllers.nodelifecycle.settings import NodeLifecycleSettings
from kubetaint.controllers.nodelifecycle.taints import (
    mark_pods_not_ready,
    record_node_event,
    record_node_status_change,
    remove_taint_off_node,
    swap_node_controller_taint,
)
from kubetaint.controllers.nodelifecycle.zones import (
    ZoneState,
    compute_zone_state,
    get_zone_key,
    is_excluded_from_disruption_checks,
    zone_qps,
)
from kubetaint.core.conditions import (
    NOT_READY_TAINT_TEMPLATE,
    UNREACHABLE_TAINT_TEMPLATE,
    get_condition,
    get_status_condition,
    no_schedule_taint_changes,
    taint_exists,
)
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import JSON, Store

log = logging.getLogger(__name__)

CONTROLLER_NAME = "node-lifecycle-controller"
EVENT_COMPONENT = "node-controller"
NODE_HEALTH_UPDATE_RETRY = 5
#: A node missing its Ready condition is retried in the tainting queue after 50 ms.
MISSING_READY_RETRY_NS = 50_000_000
_GRID_US = round(NODE_EVICTION_PERIOD * 1_000_000)


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


class NodeLifecycleController:
    """Node health, condition taints and rate-limited NoExecute tainting.

    `start()` starts the informers (shared ones may be passed in), the health loop and the
    tainting machinery; `stop()` cancels every timer.
    """

    def __init__(
        self,
        store: Store,
        clock: Clock,
        settings: NodeLifecycleSettings | None = None,
        *,
        node_informer: Informer | None = None,
        pod_informer: Informer | None = None,
        lease_informer: Informer | None = None,
        recorder: EventRecorder | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self.settings = settings or NodeLifecycleSettings()
        self.nodes = node_informer or Informer(store, "nodes")
        self.pods = pod_informer or Informer(store, "pods")
        self.leases = lease_informer or Informer(store, LEASES, namespace=NODE_LEASE_NAMESPACE)
        self.recorder = recorder or EventRecorder(store, clock, EVENT_COMPONENT)
        self.health = NodeHealthTracker(store, clock, self.settings, self.leases)
        self.known_nodes: dict[str, JSON] = {}
        self.zone_states: dict[str, ZoneState] = {}
        self.zone_tainters: dict[str, RateLimitedTimedQueue] = {}
        self.nodes_to_retry: set[str] = set()
        self._node_queue: OrderedDict[str, None] = OrderedDict()
        self._pod_queue: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._node_worker: Handle | None = None
        self._pod_worker: Handle | None = None
        self._monitor_handle: Handle | None = None
        self._pass_handle: Handle | None = None
        self._pass_k: int | None = None
        self._last_pass_k = -1
        self._start = 0.0
        self._start_us = 0
        self._monitor_k = 0
        self._running = False

    # lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        if self._running:
            return
        self._running = True
        self._start = self._clock.now()
        self._start_us = round(self._start * 1_000_000)
        self.nodes.add_handlers(
            EventHandlers(
                on_add=lambda node: self._queue_node(_name(node)),
                on_update=lambda _old, node: self._queue_node(_name(node)),
                on_delete=lambda node: self.nodes_to_retry.discard(_name(node)),
            )
        )
        self.pods.add_handlers(
            EventHandlers(on_add=lambda pod: self._pod_updated(None, pod), on_update=self._pod_updated)
        )
        self.leases.start()
        self.nodes.start()
        self.pods.start()
        self._monitor_k = 0
        self._monitor_handle = self._clock.call_soon(self._monitor_tick)

    def stop(self) -> None:
        self._running = False
        for handle in (self._node_worker, self._pod_worker, self._monitor_handle, self._pass_handle):
            if handle is not None:
                handle.cancel()
        self._node_worker = self._pod_worker = self._monitor_handle = self._pass_handle = None
        self._pass_k = None

    # node and pod workers ------------------------------------------------------------------------

    def _queue_node(self, name: str) -> None:
        if not self._running:
            return
        self._node_queue[name] = None
        if self._node_worker is None:
            self._node_worker = self._clock.call_soon(self._drain_nodes)

    def _drain_nodes(self) -> None:
        self._node_worker = None
        while self._running and self._node_queue:
            name, _ = self._node_queue.popitem(last=False)
            self._guard(self.do_no_schedule_tainting_pass, name)
            self._guard(lambda n: reconcile_node_labels(self._store, self.nodes.get("", n)), name)

    def do_no_schedule_tainting_pass(self, name: str) -> None:
        """Swap the node's condition NoSchedule taints to match its conditions and spec.unschedulable."""
        node = self.nodes.get("", name)
        if node is None:
            return
        to_add, to_remove = no_schedule_taint_changes(node)
        if not to_add and not to_remove:
            return
        if not swap_node_controller_taint(self._store, self._clock, to_add, to_remove, node):
            log.error("Failed to taint NoSchedule on node %s", name)

    def _pod_updated(self, old: JSON | None, new: JSON | None) -> None:
        if not self._running or new is None:
            return
        node_name = (new.get("spec") or {}).get("nodeName") or ""
        old_node = ((old or {}).get("spec") or {}).get("nodeName") or ""
        if node_name and (old is None or node_name != old_node):
            meta = new.get("metadata") or {}
            self._pod_queue[(str(meta.get("namespace") or ""), _name(new))] = None
            if self._pod_worker is None:
                self._pod_worker = self._clock.call_soon(self._drain_pods)

    def _drain_pods(self) -> None:
        self._pod_worker = None
        while self._running and self._pod_queue:
            item, _ = self._pod_queue.popitem(last=False)
            self._guard(self.process_pod, item)

    def process_pod(self, item: tuple[str, str]) -> None:
        """A pod newly bound to a node that is not Ready is marked NotReady at once."""
        pod = self.pods.get(*item)
        if pod is None:
            return
        node_name = str((pod.get("spec") or {}).get("nodeName") or "")
        health = self.health.get(node_name)
        if health is None or self.nodes.get("", node_name) is None:
            return
        ready = get_status_condition(health.status, "Ready")
        if ready is None:
            return
        if ready.get("status") != "True":
            mark_pods_not_ready(self._store, self._clock, self.recorder, [pod], node_name)

    def _guard(self, handler: Callable[[Any], Any], arg: Any) -> None:
        try:
            handler(arg)
        except Exception:
            log.exception("node lifecycle controller: failed to process %s", arg)

    # health loop ---------------------------------------------------------------------------------

    def _monitor_tick(self) -> None:
        self._monitor_handle = None
        if not self._running:
            return
        self._monitor_k += 1
        when = self._start + self._monitor_k * self.settings.node_monitor_period
        self._monitor_handle = self._clock.call_at(when, self._monitor_tick)
        try:
            self.monitor_node_health()
        except Exception:
            log.exception("Error monitoring node health")

    def monitor_node_health(self) -> None:
        """One monitorNodeHealth pass over every node (in name order)."""
        nodes = sorted(self.nodes.items(), key=_name)
        added, deleted, new_zone_nodes = self._classify_nodes(nodes)
        for node in new_zone_nodes:
            self._add_zone_for(node)
        for node in added:
            name = _name(node)
            record_node_event(
                self.recorder, node, "Normal", "RegisteredNode", f"Registered Node {name} in Controller"
            )
            self.known_nodes[name] = node
            self._add_zone_for(node)
            self._guard(self.mark_node_as_reachable, node)
        for node in deleted:
            name = _name(node)
            record_node_event(
                self.recorder, node, "Normal", "RemovingNode", f"Removing Node {name} from Controller"
            )
            self.known_nodes.pop(name, None)
        zone_conditions: dict[str, list[Mapping[str, Any] | None]] = {}
        for node in nodes:
            self._guard(lambda n: self._update_node(n, zone_conditions), node)
        self.handle_disruption(zone_conditions, nodes)
        self._arm_tainting_pass()

    def _classify_nodes(self, nodes: list[JSON]) -> tuple[list[JSON], list[JSON], list[JSON]]:
        added = [n for n in nodes if _name(n) not in self.known_nodes]
        new_zone = [
            n for n in nodes if _name(n) in self.known_nodes and get_zone_key(n) not in self.zone_states
        ]
        deleted: list[JSON] = []
        if len(self.known_nodes) + len(added) != len(nodes):
            present = {_name(n) for n in nodes}
            deleted = [n for name, n in sorted(self.known_nodes.items()) if name not in present]
        return added, deleted, new_zone

    def _add_zone_for(self, node: Mapping[str, Any]) -> None:
        zone = get_zone_key(node)
        if zone not in self.zone_states:
            self.zone_states[zone] = ZoneState.INITIAL
            self.zone_tainters[zone] = RateLimitedTimedQueue(self.settings.node_eviction_rate)

    def _update_node(self, node: JSON, zone_conditions: dict[str, list[Mapping[str, Any] | None]]) -> None:
        name = _name(node)
        result = None
        current_node: JSON = node
        for _ in range(NODE_HEALTH_UPDATE_RETRY):
            try:
                result = self.health.try_update(current_node)
                break
            except StatusError:
                try:
                    current_node = self._store.get("nodes", "", name)
                except StatusError:
                    log.error("Failed while getting a Node to retry updating node health: %s", name)
                    return
        if result is None:
            log.error(
                "Update health of Node %s from Controller error, Skipping - no pods will be evicted", name
            )
            return
        updated = result.node
        if not is_excluded_from_disruption_checks(updated):
            zone_conditions.setdefault(get_zone_key(updated), []).append(result.current_ready)
        current, observed = result.current_ready, result.observed_ready
        if current is not None:
            self.process_taint_base_eviction(updated, observed)
            observed_status = observed.get("status")
            became_not_ready = current.get("status") != "True" and observed_status == "True"
            if became_not_ready:
                record_node_status_change(self.recorder, updated, "NodeNotReady")
            if became_not_ready or (name in self.nodes_to_retry and observed_status != "True"):
                pods = self._store.list("pods", field_selector=f"spec.nodeName={name}").items
                if not mark_pods_not_ready(self._store, self._clock, self.recorder, pods, name):
                    self.nodes_to_retry.add(name)
                    return
        self.nodes_to_retry.discard(name)

    def process_taint_base_eviction(self, node: JSON, observed: Mapping[str, Any]) -> None:
        """Queue (or immediately swap) the NoExecute taint the observed Ready status calls for."""
        status = observed.get("status")
        taints = (node.get("spec") or {}).get("taints") or []
        if status == "False":
            if taint_exists(taints, UNREACHABLE_TAINT_TEMPLATE):
                if not swap_node_controller_taint(
                    self._store, self._clock, [NOT_READY_TAINT_TEMPLATE], [UNREACHABLE_TAINT_TEMPLATE], node
                ):
                    log.error("Failed to instantly swap UnreachableTaint to NotReadyTaint")
            else:
                self._mark_node_for_tainting(node, "False")
        elif status == "Unknown":
            if taint_exists(taints, NOT_READY_TAINT_TEMPLATE):
                if not swap_node_controller_taint(
                    self._store, self._clock, [UNREACHABLE_TAINT_TEMPLATE], [NOT_READY_TAINT_TEMPLATE], node
                ):
                    log.error("Failed to instantly swap NotReadyTaint to UnreachableTaint")
            else:
                self._mark_node_for_tainting(node, "Unknown")
        elif status == "True":
            self.mark_node_as_reachable(node)

    def _tainter(self, node: Mapping[str, Any]) -> RateLimitedTimedQueue:
        zone = get_zone_key(node)
        if zone not in self.zone_tainters:
            self._add_zone_for(node)
        return self.zone_tainters[zone]

    def _mark_node_for_tainting(self, node: Mapping[str, Any], status: str) -> bool:
        queue = self._tainter(node)
        taints = (node.get("spec") or {}).get("taints") or []
        name = _name(node)
        wanted = NOT_READY_TAINT_TEMPLATE if status == "False" else UNREACHABLE_TAINT_TEMPLATE
        if not taint_exists(taints, wanted):
            queue.remove(name)
        uid = str((node.get("metadata") or {}).get("uid") or "")
        return queue.add(name, uid, to_nanos(self._clock.now()))

    def mark_node_as_reachable(self, node: Mapping[str, Any]) -> bool:
        """Remove both NoExecute taints and forget the node in its zone queue."""
        name = _name(node)
        try:
            remove_taint_off_node(self._store, name, node, [UNREACHABLE_TAINT_TEMPLATE])
            remove_taint_off_node(self._store, name, node, [NOT_READY_TAINT_TEMPLATE])
        except StatusError as err:
            log.error("Failed to remove taints from node %s: %s", name, err.message)
            return False
        return self._tainter(node).remove(name)

    # zones ---------------------------------------------------------------------------------------

    def handle_disruption(
        self, zone_conditions: Mapping[str, list[Mapping[str, Any] | None]], nodes: list[JSON]
    ) -> None:
        """Zone states and limiters; the all-zones-fully-disrupted stop and its exit."""
        threshold = self.settings.unhealthy_zone_threshold
        new_states: dict[str, ZoneState] = {}
        all_are_full = True
        for zone in sorted(zone_conditions):
            _, state = compute_zone_state(zone_conditions[zone], threshold)
            if state != ZoneState.FULL_DISRUPTION:
                all_are_full = False
            new_states[zone] = state
            self.zone_states.setdefault(zone, ZoneState.INITIAL)
        all_were_full = True
        for zone in sorted(self.zone_states):
            if zone not in zone_conditions:
                del self.zone_states[zone]
                continue
            if self.zone_states[zone] != ZoneState.FULL_DISRUPTION:
                all_were_full = False
                break
        if all_are_full and all_were_full:
            return
        now_ns = to_nanos(self._clock.now())
        if all_are_full:
            log.info("Controller detected that all Nodes are not-Ready. Entering master disruption mode")
            for node in nodes:
                self._guard(self.mark_node_as_reachable, node)
            for zone in self.zone_states:
                self._zone_queue(zone).swap_limiter(0, now_ns)
            for zone in self.zone_states:
                self.zone_states[zone] = ZoneState.FULL_DISRUPTION
            return
        if all_were_full:
            log.info("Controller detected that some Nodes are Ready. Exiting master disruption mode")
            self.health.reset_probes([_name(n) for n in nodes], self._clock.now())
            for zone in sorted(self.zone_states):
                self._set_limiter_in_zone(
                    zone, len(zone_conditions.get(zone, [])), new_states.get(zone), now_ns
                )
                self.zone_states[zone] = new_states.get(zone, ZoneState.INITIAL)
            return
        for zone in sorted(self.zone_states):
            state = new_states.get(zone, ZoneState.INITIAL)
            if self.zone_states[zone] == state:
                continue
            log.info("Controller detected that zone %r is now in state %s", zone, state)
            self._set_limiter_in_zone(zone, len(zone_conditions.get(zone, [])), state, now_ns)
            self.zone_states[zone] = state

    def _zone_queue(self, zone: str) -> RateLimitedTimedQueue:
        if zone not in self.zone_tainters:
            self.zone_tainters[zone] = RateLimitedTimedQueue(self.settings.node_eviction_rate)
        return self.zone_tainters[zone]

    def _set_limiter_in_zone(self, zone: str, size: int, state: ZoneState | None, now_ns: int) -> None:
        if state is None:
            return
        qps = zone_qps(
            state,
            size,
            self.settings.node_eviction_rate,
            self.settings.secondary_node_eviction_rate,
            self.settings.large_cluster_size_threshold,
        )
        if qps is not None:
            self._zone_queue(zone).swap_limiter(qps, now_ns)

    # NoExecute tainting pass -------------------------------------------------------------------

    def _grid_time(self, k: int) -> float:
        return (self._start_us + k * _GRID_US) / 1_000_000

    def _arm_tainting_pass(self) -> None:
        """Schedule doNoExecuteTaintingPass at the first 100 ms grid point where it can act."""
        if not self._running:
            return
        now_us = round(self._clock.now() * 1_000_000)
        k_min = max(-(-(now_us - self._start_us) // _GRID_US), self._last_pass_k + 1)
        now_ns = now_us * 1000
        best: int | None = None
        for queue in self.zone_tainters.values():
            lower = queue.next_try(now_ns)
            if lower is None:
                continue
            k = max(k_min, math.ceil((lower // 1000 - self._start_us) / _GRID_US))
            while not queue.limiter.would_accept(to_nanos(self._grid_time(k))):
                k += 1
            best = k if best is None else min(best, k)
        if best == self._pass_k:
            return
        if self._pass_handle is not None:
            self._pass_handle.cancel()
            self._pass_handle = None
        self._pass_k = best
        if best is not None:
            self._pass_handle = self._clock.call_at(self._grid_time(best), self._tainting_pass)

    def _tainting_pass(self) -> None:
        self._pass_handle = None
        self._pass_k = None
        now_us = round(self._clock.now() * 1_000_000)
        self._last_pass_k = (now_us - self._start_us) // _GRID_US
        self.do_no_execute_tainting_pass()
        self._arm_tainting_pass()

    def do_no_execute_tainting_pass(self) -> None:
        now_ns = to_nanos(self._clock.now())
        for zone in sorted(self.zone_tainters):
            self.zone_tainters[zone].try_(now_ns, self._taint_node)

    def _taint_node(self, value: TimedValue) -> tuple[bool, int]:
        node = self.nodes.get("", value.value)
        if node is None:
            log.info("Node %s no longer present in nodeLister", value.value)
            return True, 0
        ready = get_condition(node, "Ready")
        if ready is None:
            return False, MISSING_READY_RETRY_NS
        if ready.get("status") == "False":
            add, remove = NOT_READY_TAINT_TEMPLATE, UNREACHABLE_TAINT_TEMPLATE
        elif ready.get("status") == "Unknown":
            add, remove = UNREACHABLE_TAINT_TEMPLATE, NOT_READY_TAINT_TEMPLATE
        else:
            return True, 0
        return swap_node_controller_taint(self._store, self._clock, [add], [remove], node), 0
