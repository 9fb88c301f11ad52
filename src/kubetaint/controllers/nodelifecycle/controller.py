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
3. doNoExecuteTaintingPass (`.tainting`), on the NodeEvictionPeriod (100 ms) grid, takes the
   head of each zone's queue when the zone's limiter gives a token and swaps in the taint its Ready
   condition calls for. The pass is scheduled only at the grid points where a queue has work its limiter
   accepts (at the others a pass changes nothing).
4. handleDisruption, at the end of each monitor pass, gives each zone a state from its Ready and
   not-Ready counts (ComputeZoneState, `.zones`) and sets the zone's rate for it (setLimiterInZone);
   when every zone is fully disrupted tainting stops and every NoExecute taint is removed.

Which nodes a monitor pass visits: those whose visit can change something. After a visit that
changed nothing, a node whose next visit would change nothing but its zone's count *settles*
(`settles_as`): it is counted in its zone from what that visit saw, and visited again once
something its visit reads changes: its Node object, its grace period running out (a heap of
deadlines), or the cluster entering or leaving full disruption. Lease renewals and status posts of
settled nodes are observed at the start of the pass as their visits would observe them
(`.monitor_work`: `MonitorWork.begin_pass`). So a pass between heartbeats visits no node; a zone
outage is visited node by node only while its nodes change. In reference mode
(`KUBETAINT_REFERENCE=1`) no node settles: every pass visits every node, as upstream's does.

At an instant shared by a monitor pass and a tainting pass, the monitor pass runs first. The
NoSchedule condition taints, node labels and newly bound pods are the event workers' (`.workers`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle
from kubetaint.controllers.nodelifecycle.health import (
    LEASES,
    NODE_LEASE_NAMESPACE,
    HealthResult,
    NodeHealthTracker,
)
from kubetaint.controllers.nodelifecycle.monitor_work import (
    MonitorWork,
    Requeues,
    Settled,
    SettledNode,
)
from kubetaint.controllers.nodelifecycle.rate_limited_queue import (
    RateLimitedTimedQueue,
    to_nanos,
)
from kubetaint.controllers.nodelifecycle.settings import NodeLifecycleSettings
from kubetaint.controllers.nodelifecycle.tainting import NoExecuteTainting
from kubetaint.controllers.nodelifecycle.taints import (
    mark_pods_not_ready,
    record_node_event,
    record_node_status_change,
    remove_taint_off_node,
    swap_node_controller_taint,
)
from kubetaint.controllers.nodelifecycle.workers import NodeEventWorkers, guard
from kubetaint.controllers.nodelifecycle.zones import (
    ZoneState,
    get_zone_key,
    is_excluded_from_disruption_checks,
    zone_qps,
    zone_state,
)
from kubetaint.core.conditions import (
    NOT_READY_TAINT_TEMPLATE,
    UNREACHABLE_TAINT_TEMPLATE,
    taint_exists,
)
from kubetaint.speed.reference import reference_mode
from kubetaint.store.component_informers import ComponentInformers
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import JSON, Store

log = logging.getLogger(__name__)


CONTROLLER_NAME = "node-lifecycle-controller"
EVENT_COMPONENT = "node-controller"
NODE_HEALTH_UPDATE_RETRY = 5

ZoneConditions = dict[str, list[Mapping[str, Any] | None]]


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


class NodeLifecycleController(NoExecuteTainting):
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
