"""The node lifecycle controller (mirrors pkg/controller/nodelifecycle/node_lifecycle_controller.go).

When a node gets the NoExecute taints, reading this module top to bottom:

1. monitorNodeHealth runs every nodeMonitorPeriod on a fixed grid from start(). For each node it
   visits, tryUpdateNodeHealth (`.health`) keeps the local time of the last heartbeat (a Ready
   condition's new lastHeartbeatTime or a Lease renewal) and, past the grace period, sets Ready
   and the pressure conditions to Unknown and writes the status (NodeNotReady event,
   MarkPodsNotReady).
2. processTaintBaseEviction decides on the Ready condition observed before the pass changed it:
   False calls for the not-ready taint, Unknown for the unreachable one. markNodeForTainting puts
   the node in its zone's rate-limited queue (a node that has the other taint swaps it at once);
   Ready True removes both taints (markNodeAsReachable).
3. doNoExecuteTaintingPass, on the NodeEvictionPeriod (100 ms) grid, takes the head of each
   zone's queue when the zone's limiter gives a token and swaps in the taint its Ready condition
   calls for. The pass is scheduled only at the grid points where a queue has work its limiter
   accepts (at the others a pass changes nothing).
4. handleDisruption, at the end of each monitor pass, gives each zone a state from its Ready and
   not-Ready counts (ComputeZoneState) and sets the zone's rate for it (setLimiterInZone); when
   every zone is fully disrupted tainting stops and every NoExecute taint is removed.

Which nodes a monitor pass visits: those whose visit can change something. After a visit that
changed nothing, a node whose next visit would change nothing but its zone's count *settles*
(`settles_as`): it is counted in its zone from what that visit saw, and visited again once
something its visit reads changes: its Node object, its grace period running out (a heap of
deadlines), or the cluster entering or leaving full disruption. Lease renewals and status posts of
settled nodes are observed at the start of the pass as their visits would observe them
(`MonitorWork.begin_pass`). So a pass between heartbeats visits no node; a zone outage is visited
node by node only while its nodes change. In reference mode (`KUBETAINT_REFERENCE=1`) no node
settles: every pass visits every node, as upstream's does.

At an instant shared by a monitor pass and a tainting pass, the monitor pass runs first. The
NoSchedule condition taints, node labels and newly bound pods are the event workers' (`.workers`).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle
from kubetaint.controllers.nodelifecycle.health import (
    LEASES,
    NODE_LEASE_NAMESPACE,
    HealthResult,
    NodeHealthTracker,
)
from kubetaint.controllers.nodelifecycle.rate_limited_queue import (
    NODE_EVICTION_PERIOD,
    RateLimitedTimedQueue,
    TimedValue,
    float32,
    to_nanos,
)
from kubetaint.controllers.nodelifecycle.settings import NodeLifecycleSettings
from kubetaint.controllers.nodelifecycle.taints import (
    mark_pods_not_ready,
    record_node_event,
    record_node_status_change,
    remove_taint_off_node,
    swap_node_controller_taint,
)
from kubetaint.controllers.nodelifecycle.workers import NodeEventWorkers, guard
from kubetaint.core.conditions import (
    NOT_READY_TAINT_TEMPLATE,
    UNREACHABLE_TAINT_TEMPLATE,
    get_condition,
    taint_exists,
)
from kubetaint.speed.reference import reference_mode
from kubetaint.store.changes import FieldWriteGroup
from kubetaint.store.component_informers import ComponentInformers
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import Changes, EventHandlers, Informer
from kubetaint.store.interface import JSON, Store

log = logging.getLogger(__name__)


CONTROLLER_NAME = "node-lifecycle-controller"
EVENT_COMPONENT = "node-controller"
NODE_HEALTH_UPDATE_RETRY = 5
#: A node missing its Ready condition is retried in the tainting queue after 50 ms.
MISSING_READY_RETRY_NS = 50_000_000
#: the tainting pass's grid step in microseconds
GRID_US = round(NODE_EVICTION_PERIOD * 1_000_000)

ZoneConditions = dict[str, list[Mapping[str, Any] | None]]


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


class NodeLifecycleController:
    """Node health, condition taints and rate-limited NoExecute tainting.

    `start()` starts the informers (shared ones may be passed in), the monitor pass and the
    tainting pass; `stop()` cancels every timer.
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
        self.informers = ComponentInformers(store)
        self.leases = self.informers.shared_or_own(lease_informer, LEASES, namespace=NODE_LEASE_NAMESPACE)
        self.nodes = self.informers.shared_or_own(node_informer, "nodes")
        self.pods = self.informers.shared_or_own(pod_informer, "pods")
        self.recorder = recorder or EventRecorder(store, clock, EVENT_COMPONENT)
        self.health = NodeHealthTracker(store, clock, self.settings, self.leases)
        self.known_nodes: dict[str, JSON] = {}
        self.zone_states: dict[str, ZoneState] = {}
        #: zoneNoExecuteTainter: each zone's queue of nodes to taint NoExecute
        self.zone_no_execute_tainter: dict[str, RateLimitedTimedQueue] = {}
        self.nodes_to_retry: set[str] = set()
        self.workers = NodeEventWorkers(
            store, clock, nodes=self.nodes, pods=self.pods, health=self.health, recorder=self.recorder
        )
        #: what changed since the last monitor pass, and the settled nodes
        self.work = MonitorWork(self.health, self.settings.node_monitor_grace_period)
        #: whether visited nodes may settle (not in reference mode)
        self._settling = not reference_mode()
        #: name → node, kept by the node informer's handlers once started; the sorted names (None:
        #: to sort again after an addition or deletion); whether a node was added or deleted since
        #: the last pass; the zone states present after the last pass registered its zones
        self._by_name: dict[str, JSON] | None = None
        self._sorted_names: list[str] | None = None
        self._membership_changed = True
        self._zones_registered: set[str] = set()
        self._running = False
        #: the monitor pass's grid: its start, the index of the next pass, the timer
        self._start = 0.0
        self._monitor_k = 0
        self._monitor_handle: Handle | None = None
        #: the tainting pass's grid: its start in microseconds, the index of the pass scheduled
        #: (None: none) and of the last one run, the timer
        self._tainting_start_us = 0
        self._tainting_k: int | None = None
        self._last_tainting_k = -1
        self._tainting_handle: Handle | None = None

    # Run -------------------------------------------------------------------------------------

    def start(self) -> None:
        """Run: the informers' handlers, then the monitor pass at once and on its grid."""
        if self._running:
            return
        self._running = True
        self._start = self._clock.now()
        self._tainting_start_us = round(self._start * 1_000_000)
        self.workers.running = True
        self._by_name = {}
        self.nodes.add_handlers(
            EventHandlers(on_add=self._node_added, on_update=self._node_updated, on_delete=self._node_deleted)
        )
        self.nodes.add_handlers(
            EventHandlers(
                on_add=lambda node: self.workers.node_changed(_name(node)),
                on_update=lambda _old, node: self.workers.node_changed(_name(node)),
                on_delete=lambda node: self.nodes_to_retry.discard(_name(node)),
            )
        )
        self.pods.add_handlers(self.workers.pods_changed)
        if self._settling:
            self.leases.add_handlers(self.work.leases_changed)
        self.informers.start_all()
        self._monitor_k = 0
        self._monitor_handle = self._clock.call_soon(self._monitor_tick)

    def stop(self) -> None:
        self._running = False
        for handle in (self._monitor_handle, self._tainting_handle):
            if handle is not None:
                handle.cancel()
        self._monitor_handle = self._tainting_handle = None
        self._tainting_k = None
        self.workers.stop()
        self.informers.stop()

    def _node_added(self, node: JSON) -> None:
        name = _name(node)
        if self._by_name is not None:
            self._by_name[name] = node
        self.work.changed_nodes.add(name)
        self._membership_changed = True
        self._sorted_names = None

    def _node_updated(self, old: JSON, node: JSON) -> None:
        name = _name(node)
        if self._by_name is not None:
            self._by_name[name] = node
        self.work.node_changed(name, old, node)

    def _node_deleted(self, node: JSON) -> None:
        name = _name(node)
        if self._by_name is not None:
            self._by_name.pop(name, None)
        self.work.changed_nodes.add(name)
        self._membership_changed = True
        self._sorted_names = None

    # monitorNodeHealth -------------------------------------------------------------------------

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
        """monitorNodeHealth: take in what changed since the last pass, register and forget
        nodes, visit in name order the nodes whose visit can change something (the settled ones
        counted as their last visit counted them), then handleDisruption and arm the tainting
        pass. (Before start() no event was seen: every node is visited.)"""
        now = self._clock.now()
        work, started = self.work, self._by_name is not None
        changed = work.begin_pass(now) if started else set()
        names = self._node_names()
        listed = dict(self._by_name) if self._by_name is not None else self._listed(names)
        added, deleted, new_zone_nodes = self.classify_nodes(names, listed, changed)
        for node in new_zone_nodes:
            self.add_pod_evictor_for_new_zone(node)
        for node in added:
            name = _name(node)
            record_node_event(
                self.recorder, node, "Normal", "RegisteredNode", f"Registered Node {name} in Controller"
            )
            self.known_nodes[name] = node
            self.add_pod_evictor_for_new_zone(node)
            guard(self.mark_node_as_reachable, node)
        self._zones_registered = set(self.zone_states)
        for node in deleted:
            name = _name(node)
            record_node_event(
                self.recorder, node, "Normal", "RemovingNode", f"Removing Node {name} from Controller"
            )
            self.known_nodes.pop(name, None)
        zone_to_node_conditions: ZoneConditions = {}
        settled_counts = work.zone_counts()  # (taken before the visits settle nodes)
        requeues = Requeues(work.requeued_by_zone(), self._zone_queue, self._clock)
        for name in work.to_visit() if started else names:
            visited = listed.get(name)
            if visited is None:
                work.unsettled.discard(name)  # deleted
                continue
            requeues.until(name)  # (each queue sees its operations in name order)
            try:
                self._process_node(visited, zone_to_node_conditions, now)
            except Exception:
                log.exception("node lifecycle controller: failed to update the health of node %s", name)
        requeues.until(None)
        self.handle_disruption(zone_to_node_conditions, lambda: [listed[n] for n in names], settled_counts)
        self._arm_tainting_pass()

    def _node_names(self) -> list[str]:
        """The node names in name order (the informer's, read directly before start())."""
        if self._by_name is None:
            return sorted(_name(n) for n in self.nodes.items())
        if self._sorted_names is None:
            self._sorted_names = sorted(self._by_name)
        return self._sorted_names

    def _listed(self, names: list[str]) -> dict[str, JSON]:
        get = self.nodes.get
        return {name: node for name in names if (node := get("", name)) is not None}

    def classify_nodes(
        self, names: list[str], listed: Mapping[str, JSON], changed: AbstractSet[str]
    ) -> tuple[list[JSON], list[JSON], list[JSON]]:
        """classifyNodes: (added, deleted, known nodes of a zone without state).

        While no node was added or deleted and no zone state was dropped since the last pass,
        only a node `changed` since (other than by a status post, which keeps its labels) can be
        new or be in a zone without state."""
        known, states = self.known_nodes, self.zone_states
        full = self._membership_changed or not self._zones_registered <= states.keys()
        self._membership_changed = self._by_name is None
        if not full:
            candidates = [name for name in sorted(changed) if name in known and name in listed]
            return [], [], [listed[n] for n in candidates if get_zone_key(listed[n]) not in states]
        added = [listed[name] for name in names if name not in known]
        new_zone = [listed[n] for n in names if n in known and get_zone_key(listed[n]) not in states]
        deleted = [node for name, node in sorted(known.items()) if name not in listed]
        return added, deleted, new_zone

    def add_pod_evictor_for_new_zone(self, node: Mapping[str, Any]) -> None:
        """addPodEvictorForNewZone: a new zone starts Initial with a fresh tainting queue (a full
        token bucket)."""
        zone = get_zone_key(node)
        if zone not in self.zone_states:
            self.zone_states[zone] = ZoneState.INITIAL
            if zone in self.zone_no_execute_tainter:
                self.work.unsettle_zone(zone)  # (a zone state dropped earlier: its queue is new)
            self.zone_no_execute_tainter[zone] = RateLimitedTimedQueue(self.settings.node_eviction_rate)

    def _zone_queue(self, zone: str) -> RateLimitedTimedQueue:
        queue = self.zone_no_execute_tainter.get(zone)
        if queue is None:
            queue = self.zone_no_execute_tainter[zone] = RateLimitedTimedQueue(
                self.settings.node_eviction_rate
            )
        return queue

    def _process_node(self, node: JSON, zone_to_node_conditions: ZoneConditions, now: float) -> None:
        """The body of monitorNodeHealth's loop for one node (upstream's updateNodeFunc):
        tryUpdateNodeHealth, the zone count, processTaintBaseEviction, NodeNotReady and
        MarkPodsNotReady; then the node settles when its next visit would change nothing."""
        name = _name(node)
        result = None
        current_node: JSON = node
        for _ in range(NODE_HEALTH_UPDATE_RETRY):
            try:
                result = self.health.try_update_node_health(current_node)
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
            zone_to_node_conditions.setdefault(get_zone_key(updated), []).append(result.current_ready)
        current, observed = result.current_ready, result.observed_ready
        if current is not None:
            self.process_taint_base_eviction(updated, observed)
            observed_status = observed.get("status")
            became_not_ready = current.get("status") != "True" and observed_status == "True"
            if became_not_ready:
                record_node_status_change(self.recorder, updated, "NodeNotReady")
            if became_not_ready or (name in self.nodes_to_retry and observed_status != "True"):
                try:
                    pods = self._store.list("pods", field_selector=f"spec.nodeName={name}").items
                except StatusError as err:
                    # upstream: a failed pod listing during the transition retries it next pass
                    log.error("unable to list pods of node %s: %s", name, err.message)
                    if became_not_ready:
                        self.nodes_to_retry.add(name)
                    return
                if not mark_pods_not_ready(self._store, self._clock, self.recorder, pods, name):
                    self.nodes_to_retry.add(name)
                    return
        self.nodes_to_retry.discard(name)
        if self._settling and self._by_name is not None:
            settled = self.settles_as(name, result)
            if settled is not None:
                self.work.settle(name, settled)

    def settles_as(self, name: str, result: HealthResult) -> SettledNode | None:
        """How a node just visited settles (None: it does not): its visit changed nothing, and
        the next one changes nothing but its zone count (and re-queues a REQUEUED node) while its
        Node object stays, its grace period lasts and its lease is not renewed."""
        current = result.current_ready
        if result.wrote or current is None or result.observed_ready != current:
            return None
        lease = self.leases.get(NODE_LEASE_NAMESPACE, name)
        if self.health.would_observe(name, lease):
            return None  # the next pass takes this lease as renewed
        node = result.node
        taints = (node.get("spec") or {}).get("taints") or []
        unreachable = taint_exists(taints, UNREACHABLE_TAINT_TEMPLATE)
        not_ready = taint_exists(taints, NOT_READY_TAINT_TEMPLATE)
        status = current.get("status")
        zone = get_zone_key(node)
        queue = self.zone_no_execute_tainter.get(zone)
        queued = queue is not None and name in queue.queue.values
        if status == "True":
            if unreachable or not_ready or queued:
                return None
            kind = Settled.READY
        elif status == "False" and not unreachable:
            kind = Settled.TAINTED if not_ready and queued else Settled.REQUEUED
        elif status == "Unknown" and not not_ready:
            kind = Settled.TAINTED if unreachable and queued else Settled.REQUEUED
        else:
            return None
        deadline = math.inf
        if status != "Unknown":
            health = self.health.get(name)
            if health is None:
                return None
            deadline = health.probe_timestamp + self.settings.node_monitor_grace_period
        uid = str((node.get("metadata") or {}).get("uid") or "")
        return SettledNode(kind, zone, not is_excluded_from_disruption_checks(node), uid, deadline)

    # processTaintBaseEviction ------------------------------------------------------------------

    def process_taint_base_eviction(self, node: JSON, observed: Mapping[str, Any]) -> None:
        """processTaintBaseEviction: queue (or swap at once) the NoExecute taint the observed Ready
        status calls for; a Ready node is reachable."""
        status = observed.get("status")
        taints = (node.get("spec") or {}).get("taints") or []
        if status == "False":
            if taint_exists(taints, UNREACHABLE_TAINT_TEMPLATE):
                if not swap_node_controller_taint(
                    self._store, self._clock, [NOT_READY_TAINT_TEMPLATE], [UNREACHABLE_TAINT_TEMPLATE], node
                ):
                    log.error("Failed to instantly swap UnreachableTaint to NotReadyTaint")
            else:
                self.mark_node_for_tainting(node, "False")
        elif status == "Unknown":
            if taint_exists(taints, NOT_READY_TAINT_TEMPLATE):
                if not swap_node_controller_taint(
                    self._store, self._clock, [UNREACHABLE_TAINT_TEMPLATE], [NOT_READY_TAINT_TEMPLATE], node
                ):
                    log.error("Failed to instantly swap NotReadyTaint to UnreachableTaint")
            else:
                self.mark_node_for_tainting(node, "Unknown")
        elif status == "True":
            self.mark_node_as_reachable(node)

    def mark_node_for_tainting(self, node: Mapping[str, Any], status: str) -> bool:
        """markNodeForTainting: a node without the taint its status calls for is removed from its
        zone queue first (so it is queued again at now); then Add."""
        queue = self._zone_queue(get_zone_key(node))
        taints = (node.get("spec") or {}).get("taints") or []
        wanted = NOT_READY_TAINT_TEMPLATE if status == "False" else UNREACHABLE_TAINT_TEMPLATE
        uid = str((node.get("metadata") or {}).get("uid") or "")
        if not taint_exists(taints, wanted):
            return queue.requeue(_name(node), uid, to_nanos(self._clock.now()))  # Remove, then Add
        return queue.add(_name(node), uid, to_nanos(self._clock.now()))

    def mark_node_as_reachable(self, node: Mapping[str, Any]) -> bool:
        """markNodeAsReachable: remove both NoExecute taints and forget the node in its zone queue."""
        name = _name(node)
        try:
            remove_taint_off_node(self._store, name, node, [UNREACHABLE_TAINT_TEMPLATE])
            remove_taint_off_node(self._store, name, node, [NOT_READY_TAINT_TEMPLATE])
        except StatusError as err:
            log.error("Failed to remove taints from node %s: %s", name, err.message)
            return False
        return self._zone_queue(get_zone_key(node)).remove(name)

    # handleDisruption ----------------------------------------------------------------------------

    def handle_disruption(
        self,
        zone_to_node_conditions: Mapping[str, list[Mapping[str, Any] | None]],
        nodes: Callable[[], list[JSON]],
        settled_counts: Mapping[str, tuple[int, int]] | None = None,
    ) -> None:
        """handleDisruption: zone states and limiters; the all-zones-fully-disrupted stop and its
        exit. `nodes` gives the nodes listed at the start of the pass (only asked for on entering or
        leaving full disruption); `settled_counts` counts, per zone, the (Ready, all) nodes the
        pass did not visit."""
        threshold = self.settings.unhealthy_zone_threshold
        sizes: dict[str, tuple[int, int]] = {}  # zone -> (ready, all)
        for zone, conditions in zone_to_node_conditions.items():
            ready = sum(1 for c in conditions if c is not None and c.get("status") == "True")
            sizes[zone] = (ready, len(conditions))
        for zone, (ready_there, size_there) in (settled_counts or {}).items():
            ready, size = sizes.get(zone, (0, 0))
            sizes[zone] = (ready + ready_there, size + size_there)
        new_states: dict[str, ZoneState] = {}
        all_are_full = True
        for zone in sorted(sizes):
            ready, size = sizes[zone]
            _, state = zone_state(ready, size - ready, threshold)
            if state != ZoneState.FULL_DISRUPTION:
                all_are_full = False
            new_states[zone] = state
            self.zone_states.setdefault(zone, ZoneState.INITIAL)
        all_were_full = True
        for zone in sorted(self.zone_states):
            if zone not in sizes:
                del self.zone_states[zone]
                continue
            if self.zone_states[zone] != ZoneState.FULL_DISRUPTION:
                all_were_full = False
                break
        if all_are_full and all_were_full:
            return
        if all_are_full:
            log.info("Controller detected that all Nodes are not-Ready. Entering master disruption mode")
            self.work.unsettle_all()  # (every node's taints and queue change)
            for node in nodes():
                guard(self.mark_node_as_reachable, node)
            for zone in self.zone_states:
                self._swap_limiter(zone, 0)
            for zone in self.zone_states:
                self.zone_states[zone] = ZoneState.FULL_DISRUPTION
            return
        if all_were_full:
            log.info("Controller detected that some Nodes are Ready. Exiting master disruption mode")
            self.work.unsettle_all()  # (every node's probe time changes)
            self.health.reset_probes([_name(n) for n in nodes()], self._clock.now())
            for zone in sorted(self.zone_states):
                self.set_limiter_in_zone(zone, sizes.get(zone, (0, 0))[1], new_states.get(zone))
                self.zone_states[zone] = new_states.get(zone, ZoneState.INITIAL)
            return
        for zone in sorted(self.zone_states):
            state = new_states.get(zone, ZoneState.INITIAL)
            if self.zone_states[zone] == state:
                continue
            log.info("Controller detected that zone %r is now in state %s", zone, state)
            self.set_limiter_in_zone(zone, sizes.get(zone, (0, 0))[1], state)
            self.zone_states[zone] = state

    def set_limiter_in_zone(self, zone: str, size: int, state: ZoneState | None) -> None:
        """setLimiterInZone: the zone's tainting rate for its new state."""
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
            self._swap_limiter(zone, qps)

    def _swap_limiter(self, zone: str, qps: float) -> None:
        self._zone_queue(zone).swap_limiter(qps, to_nanos(self._clock.now()))

    # doNoExecuteTaintingPass ---------------------------------------------------------------------

    def do_no_execute_tainting_pass(self) -> None:
        """doNoExecuteTaintingPass: Try every zone queue (zones in name order), swapping in the
        taint each node's Ready condition calls for."""
        now_ns = to_nanos(self._clock.now())
        for zone in sorted(self.zone_no_execute_tainter):
            self.zone_no_execute_tainter[zone].try_(now_ns, self._taint_node)

    def _taint_node(self, value: TimedValue) -> tuple[bool, int]:
        """doNoExecuteTaintingPass's action for one queued node: (done, retry wait)."""
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

    def _tainting_grid_time(self, k: int) -> float:
        return (self._tainting_start_us + k * GRID_US) / 1_000_000

    def _first_tainting_index(self) -> int:
        """The first grid point at or after now that has not had its pass yet."""
        now_us = round(self._clock.now() * 1_000_000)
        return max(-(-(now_us - self._tainting_start_us) // GRID_US), self._last_tainting_k + 1)

    def _arm_tainting_pass(self) -> None:
        """Schedule the tainting pass at the first grid point where some zone queue has work its
        limiter accepts (or cancel it): upstream runs it at every grid point, and a pass at the
        others changes nothing (a refused TryAccept leaves the bucket untouched, an empty queue is
        not tried). A pass never runs twice at one grid point."""
        if not self._running:
            return
        k_min = self._first_tainting_index()
        now_ns = to_nanos(self._clock.now())
        best: int | None = None
        for queue in self.zone_no_execute_tainter.values():
            lower = queue.next_try(now_ns)
            if lower is None:
                continue
            k = max(k_min, math.ceil((lower // 1000 - self._tainting_start_us) / GRID_US))
            while not queue.limiter.would_accept(to_nanos(self._tainting_grid_time(k))):
                k += 1
            best = k if best is None else min(best, k)
        self._schedule_tainting_pass(best)

    def _schedule_tainting_pass(self, k: int | None) -> None:
        if k == self._tainting_k and (k is None or self._tainting_handle is not None):
            return
        if self._tainting_handle is not None:
            self._tainting_handle.cancel()
            self._tainting_handle = None
        self._tainting_k = k
        if k is not None:
            self._tainting_handle = self._clock.call_at(self._tainting_grid_time(k), self._tainting_tick)

    def _tainting_tick(self) -> None:
        self._tainting_handle = None
        self._tainting_k = None
        now_us = round(self._clock.now() * 1_000_000)
        self._last_tainting_k = (now_us - self._tainting_start_us) // GRID_US
        self.do_no_execute_tainting_pass()
        self._arm_tainting_pass()


# zones: GetZoneKey (component-helpers/node/topology), ComputeZoneState, the zone rates -------------

LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
#: Nodes with this label are left out of zone disruption counting.
LABEL_NODE_DISRUPTION_EXCLUSION = "node.kubernetes.io/exclude-disruption"


class ZoneState(StrEnum):
    INITIAL = "Initial"
    NORMAL = "Normal"
    FULL_DISRUPTION = "FullDisruption"
    PARTIAL_DISRUPTION = "PartialDisruption"


def get_zone_key(node: Mapping[str, Any]) -> str:
    """GetZoneKey: `region + ":\\x00:" + zone` from the topology (else beta failure-domain)
    labels; "" when both are empty."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    zone = (
        labels[LABEL_TOPOLOGY_ZONE]
        if LABEL_TOPOLOGY_ZONE in labels
        else labels.get(LABEL_FAILURE_DOMAIN_BETA_ZONE, "")
    )
    region = (
        labels[LABEL_TOPOLOGY_REGION]
        if LABEL_TOPOLOGY_REGION in labels
        else labels.get(LABEL_FAILURE_DOMAIN_BETA_REGION, "")
    )
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def is_excluded_from_disruption_checks(node: Mapping[str, Any]) -> bool:
    """isNodeExcludedFromDisruptionChecks."""
    return LABEL_NODE_DISRUPTION_EXCLUSION in ((node.get("metadata") or {}).get("labels") or {})


def compute_zone_state(
    ready_conditions: Sequence[Mapping[str, Any] | None], unhealthy_zone_threshold: float
) -> tuple[int, ZoneState]:
    """ComputeZoneState: (not-ready count, state). Ready means a Ready condition with status True.
    FullDisruption when none is ready; PartialDisruption when more than 2 are not ready and their
    share (float32) reaches the threshold."""
    ready = sum(1 for c in ready_conditions if c is not None and c.get("status") == "True")
    return zone_state(ready, len(ready_conditions) - ready, unhealthy_zone_threshold)


def zone_state(ready: int, not_ready: int, unhealthy_zone_threshold: float) -> tuple[int, ZoneState]:
    """ComputeZoneState from the counts of ready and not-ready nodes."""
    if ready == 0 and not_ready > 0:
        return not_ready, ZoneState.FULL_DISRUPTION
    if not_ready > 2 and float32(not_ready / (not_ready + ready)) >= float32(unhealthy_zone_threshold):
        return not_ready, ZoneState.PARTIAL_DISRUPTION
    return not_ready, ZoneState.NORMAL


def zone_qps(
    state: ZoneState,
    zone_size: int,
    eviction_qps: float,
    secondary_qps: float,
    large_cluster_threshold: int,
) -> float | None:
    """setLimiterInZone's rate for a state (None for Initial: the limiter is left alone):
    HealthyQPSFunc for Normal and FullDisruption, ReducedQPSFunc (the secondary rate for zones
    larger than the threshold, else 0: stop) for PartialDisruption."""
    if state in (ZoneState.NORMAL, ZoneState.FULL_DISRUPTION):
        return eviction_qps
    if state == ZoneState.PARTIAL_DISRUPTION:
        return secondary_qps if zone_size > large_cluster_threshold else 0.0
    return None


# the incremental monitor pass: what changed since the last pass ----------------------------------

#: the field a lease renewal sets
RENEW_TIME = ("spec", "renewTime")
#: the namespaces of a field write of node leases alone
_NODE_LEASES = frozenset((NODE_LEASE_NAMESPACE,))


class Settled(Enum):
    """How a settled node's next visit would go: `READY` (Ready, without NoExecute taint, out of
    its zone's queue), `TAINTED` (not Ready, with the NoExecute taint its Ready status calls for,
    still in the queue's set: markNodeForTainting's Add is a no-op), `REQUEUED` (not Ready without
    that taint: every visit re-queues it, Remove then Add, so every pass still does that where its
    visit would come in name order)."""

    READY = "Ready"
    TAINTED = "Tainted"
    REQUEUED = "Requeued"


@dataclass(slots=True)
class SettledNode:
    kind: Settled
    zone: str
    counted: bool  # not excluded from disruption checks
    uid: str
    deadline: float  # the last probe time plus nodeMonitorGracePeriod; math.inf: none (Unknown)


class MonitorWork:
    """Speeds up monitorNodeHealth by visiting only the nodes whose visit can change something
    (in reference mode, `KUBETAINT_REFERENCE=1`, no node settles and every pass visits every node).

    What changed since the last pass: the settled nodes with their deadlines and zone counts, and
    the names of the nodes and leases that changed since. A settled node is counted in its zone
    without a visit until its Node object changes (a node informer event), its grace period runs
    out or the cluster enters or leaves full disruption. A Lease event of a settled node is the
    lease step of tryUpdateNodeHealth alone: the pass observes the lease at its start and the node
    stays settled. A status post on a settled Ready node (only its conditions changed, Ready's
    status and transition time as recorded) is tryUpdateNodeHealth's new heartbeat and lease step
    alone: the pass observes both at its start (`NodeHealthTracker.observe_status_post`) and the
    node stays settled; when the record made afresh holds no lease yet, the next pass observes the
    lease (as the visit it would take then does)."""

    def __init__(self, health: NodeHealthTracker, grace_period: float) -> None:
        self._health = health
        self._grace = grace_period
        self.settled: dict[str, SettledNode] = {}
        #: the names a pass visits: the nodes not settled (deleted ones are dropped by the pass)
        self.unsettled: set[str] = set()
        #: zone → the REQUEUED nodes' names in name order and their (name, uid) items
        self._requeued_zones: dict[str, tuple[list[str], list[tuple[str, str]]]] = {}
        #: zone → (settled Ready nodes, settled nodes) counted there
        self._counts: dict[str, list[int]] = {}
        #: (deadline, sequence number, names) of settled nodes (the nodes a pass finds renewed
        #: till one deadline share an entry); each name is checked against its node when the
        #: entry comes
        self._deadlines: list[tuple[float, int, list[str]]] = []
        self._entries = itertools.count()
        self.changed_nodes: set[str] = set()
        #: node name → its lease as last changed (None: deleted)
        self.changed_leases: dict[str, JSON | None] = {}
        #: the one field write (a heartbeat round) that changed leases since the last pass when
        #: nothing else did: its leases are the last changed, read from its own lists
        self._renewed: FieldWriteGroup | None = None
        #: node name → its Node after changes of its status conditions alone since the last pass
        #: (status posts), the name not in `changed_nodes`
        self.posted_nodes: dict[str, JSON] = {}
        #: the settled nodes whose lease the next pass observes
        self._observe_next: set[str] = set()

    def node_changed(self, name: str, old: JSON, node: JSON) -> None:
        """The node informer's update of `name` from `old` to `node`."""
        if name not in self.changed_nodes and status_post_only(old, node):
            self.posted_nodes[name] = node
        else:
            self.changed_nodes.add(name)
            self.posted_nodes.pop(name, None)

    def leases_changed(self, changes: Changes) -> None:
        """The lease informer's handler: each changed node lease (namespace kube-node-lease) by
        node name, for the next pass to observe. A heartbeat round alone since the last pass is
        kept as it is."""
        group, changed = changes.field_write, self.changed_leases
        if group is not None and group.namespaces() == _NODE_LEASES:
            if self._renewed is None and not changed:
                self._renewed = group
                return
            self._enter_renewed()
            changed.update(zip(group.names, group.news, strict=True))
            return
        self._enter_renewed()
        for kind, (namespace, name), _, lease in changes:
            if namespace == NODE_LEASE_NAMESPACE:
                changed[name] = None if kind == "DELETED" else lease

    def _enter_renewed(self) -> None:
        """Enter the kept heartbeat round into `changed_leases` (something else changed too)."""
        group = self._renewed
        if group is not None:
            self._renewed = None
            self.changed_leases.update(zip(group.names, group.news, strict=True))

    def begin_pass(self, now: float) -> set[str]:
        """Unsettle the nodes whose object changed or whose grace period ran out; a changed lease
        of a settled node is observed now (tryUpdateNodeHealth's lease step, which may move its
        deadline). The names of the nodes added, deleted or changed other than by a status post
        since the last pass."""
        changed, self.changed_nodes = self.changed_nodes, set()
        for name in changed:
            self.unsettle(name)
        health, settled = self._health, self.settled
        observe_next, self._observe_next = self._observe_next, set()
        posted = self._observe_posts(now)
        names: AbstractSet[str] = settled.keys() if not posted else settled.keys() - posted
        group = self._renewed
        if group is not None:
            self._renewed = None
            if group.path == RENEW_TIME and type(group.value) is str:
                health.observe_round(group.names, group.news, names, now, group.value)
            else:
                health.observe_leases(zip(group.names, group.news, strict=True), names, now)
        else:
            health.observe_leases(self.changed_leases.items(), names, now)
            self.changed_leases.clear()
        if observe_next:
            leases = [(name, health.current_lease(name)) for name in sorted(observe_next)]
            health.observe_leases(leases, names, now)
        deadlines, grace = self._deadlines, self._grace
        later: dict[float, list[str]] = {}  # the nodes found renewed, by their next deadline
        while deadlines and deadlines[0][0] < now:
            deadline, _, due = heapq.heappop(deadlines)
            for name in due:
                node = settled.get(name)
                if node is None or node.deadline != deadline:
                    continue  # unsettled or settled again since
                probe = health.probe_timestamp(name)
                renewed = probe + grace if probe is not None else deadline
                if renewed < now:
                    self.unsettle(name)
                else:
                    node.deadline = renewed
                    later.setdefault(renewed, []).append(name)
        for deadline, renewed_names in later.items():
            heapq.heappush(deadlines, (deadline, next(self._entries), renewed_names))
        return changed

    def _observe_posts(self, now: float) -> set[str]:
        """Observe the status posts on settled Ready nodes since the last pass (the others are
        unsettled); the names of the nodes observed."""
        posts, self.posted_nodes = self.posted_nodes, {}
        observed: set[str] = set()
        health, settled = self._health, self.settled
        for name, node in posts.items():
            entry = settled.get(name)
            if entry is None:
                continue  # visited by this pass
            if entry.kind is not Settled.READY or not health.observe_status_post(name, node, now):
                self.unsettle(name)
                continue
            observed.add(name)
            if health.would_observe(name, health.current_lease(name)):
                self._observe_next.add(name)
        return observed

    def to_visit(self) -> list[str]:
        """The names of the nodes this pass visits, in name order."""
        return sorted(self.unsettled)

    def zone_counts(self) -> dict[str, tuple[int, int]]:
        """zone → (settled Ready nodes, settled nodes) counted there."""
        return {zone: (ready, size) for zone, (ready, size) in self._counts.items()}

    def requeued_by_zone(self) -> dict[str, tuple[list[str], list[tuple[str, str]]]]:
        """zone → the names of its REQUEUED nodes in name order, and their (name, uid) items (the
        pass's own copies; zones in the order of their first names)."""
        zones = sorted(self._requeued_zones.items(), key=lambda entry: entry[1][0][0])
        return {zone: (names.copy(), items.copy()) for zone, (names, items) in zones}

    def settle(self, name: str, node: SettledNode) -> None:
        self.unsettle(name)
        self.unsettled.discard(name)
        self.settled[name] = node
        if node.kind is Settled.REQUEUED:
            names, items = self._requeued_zones.setdefault(node.zone, ([], []))
            at = bisect_left(names, name)
            names.insert(at, name)
            items.insert(at, (name, node.uid))
        if node.counted:
            counts = self._counts.setdefault(node.zone, [0, 0])
            counts[0] += node.kind is Settled.READY
            counts[1] += 1
        if node.deadline != math.inf:
            heapq.heappush(self._deadlines, (node.deadline, next(self._entries), [name]))

    def unsettle(self, name: str) -> None:
        self.unsettled.add(name)
        node = self.settled.pop(name, None)
        if node is None:
            return
        if node.kind is Settled.REQUEUED:
            names, items = self._requeued_zones[node.zone]
            at = bisect_left(names, name)
            del names[at], items[at]
            if not names:
                del self._requeued_zones[node.zone]
        if node.counted:
            counts = self._counts[node.zone]
            counts[0] -= node.kind is Settled.READY
            counts[1] -= 1
            if not counts[1]:
                del self._counts[node.zone]

    def unsettle_zone(self, zone: str) -> None:
        """Unsettle the nodes of `zone` (its tainting queue is replaced)."""
        for name in [name for name, node in self.settled.items() if node.zone == zone]:
            self.unsettle(name)

    def unsettle_all(self) -> None:
        self.unsettled.update(self.settled)
        self._requeued_zones.clear()
        self.settled.clear()
        self._counts.clear()
        self._deadlines.clear()


def status_post_only(old: JSON, new: JSON) -> bool:
    """Whether `new` is `old` with only its status conditions (and resourceVersion) changed: each
    part compared in C, old's with the changing field replaced by new's."""
    meta, status = new.get("metadata"), new.get("status")
    old_meta, old_status = old.get("metadata"), old.get("status")
    if (
        type(meta) is not dict
        or type(status) is not dict
        or type(old_meta) is not dict
        or type(old_status) is not dict
        or len(new) != len(old)
        or len(meta) != len(old_meta)
        or len(status) != len(old_status)
    ):
        return False
    return (
        _with(old_meta, "resourceVersion", meta) == meta
        and _with(old_status, "conditions", status) == status
        and {**old, "metadata": meta, "status": status} == new
    )


def _with(before: JSON, field: str, after: JSON) -> JSON:
    """`before` with `field` as `after` has it (or without it)."""
    if field in after:
        return {**before, field: after[field]}
    return {key: value for key, value in before.items() if key != field}


class Requeues:
    """A pass's re-queues of the settled REQUEUED nodes (markNodeForTainting's Remove, then Add),
    made where their visits would come in the name-ordered node loop: a visit touches only its
    node's zone queue, so each zone's re-queues up to a name go to its queue in one batch."""

    def __init__(
        self,
        by_zone: Mapping[str, tuple[list[str], list[tuple[str, str]]]],
        queue_of: Callable[[str], RateLimitedTimedQueue],
        clock: Clock,
    ) -> None:
        self._by_zone = by_zone
        self._queue_of = queue_of
        self._clock = clock
        self._done = dict.fromkeys(by_zone, 0)

    def until(self, name: str | None) -> None:
        """Re-queue the nodes before `name` in name order (None: all the rest)."""
        for zone, (names, items) in self._by_zone.items():
            start = self._done[zone]
            stop = len(names) if name is None else bisect_left(names, name, start)
            if stop > start:
                self._done[zone] = stop
                self._queue_of(zone).requeue_many(items[start:stop], to_nanos(self._clock.now()))
