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
from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle
from kubetaint.controllers.nodelifecycle.disruption import ZoneDisruption
from kubetaint.controllers.nodelifecycle.health import (
    LEASES,
    NODE_LEASE_NAMESPACE,
    HealthResult,
    NodeHealthTracker,
)
from kubetaint.controllers.nodelifecycle.node_loop import NodeLoop
from kubetaint.controllers.nodelifecycle.rate_limited_queue import RateLimitedTimedQueue, TimedValue
from kubetaint.controllers.nodelifecycle.rate_limiter import to_nanos
from kubetaint.controllers.nodelifecycle.requeue_plan import RequeuePlan
from kubetaint.controllers.nodelifecycle.resting import QuietNode, RestingNodes
from kubetaint.controllers.nodelifecycle.settings import NodeLifecycleSettings
from kubetaint.controllers.nodelifecycle.tainting import ZoneTainters
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
)
from kubetaint.core.conditions import (
    NOT_READY_TAINT_TEMPLATE,
    UNREACHABLE_TAINT_TEMPLATE,
    get_condition,
    taint_exists,
)
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import Changes, ChangesHandler, EventHandlers, Informer
from kubetaint.store.interface import JSON, Store

log = logging.getLogger(__name__)


CONTROLLER_NAME = "node-lifecycle-controller"
EVENT_COMPONENT = "node-controller"
NODE_HEALTH_UPDATE_RETRY = 5
#: A node missing its Ready condition is retried in the tainting queue after 50 ms.
MISSING_READY_RETRY_NS = 50_000_000


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


class NodeLifecycleController(NodeLoop, ZoneDisruption):
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
        self.tainters = ZoneTainters(clock, self.settings.node_eviction_rate, self._taint_node)
        self.nodes_to_retry: set[str] = set()
        #: node name → what a pass that changed nothing saw.
        self._quiet: dict[str, QuietNode] = {}
        #: idle nodes the passes leave out until something about them changes (see .resting)
        self.resting = RestingNodes(self.health)
        self.resting_enabled = True
        self.reposts_enabled = True
        self.lazy_requeues = True
        self._zones: dict[str, tuple[JSON, str]] = {}
        self._last_result: HealthResult | None = None
        self.workers = NodeEventWorkers(
            store, clock, nodes=self.nodes, pods=self.pods, health=self.health, recorder=self.recorder
        )
        self._monitor_handle: Handle | None = None
        #: node names in name order, re-sorted only when a node is added or deleted
        self._sorted_names: list[str] | None = None
        self._positions: dict[str, int] = {}
        #: the nodes the last pass visited and left awake (visited again by the next one)
        self._awake: set[str] = set()
        self._requeue_plan = RequeuePlan()
        #: name → node, kept by the node informer's handlers once started (None before: the
        #: informer is read directly), the names whose object changed since the last pass, and
        #: whether a node was added or deleted since then
        self._by_name: dict[str, JSON] | None = None
        self._changed: set[str] = set()
        self._membership_dirty = True
        #: the zone states present after the last pass registered its zones
        self._zones_registered: set[str] = set()
        self._start = 0.0
        self._monitor_k = 0
        self._running = False

    # lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        if self._running:
            return
        self._running = True
        self._start = self._clock.now()
        self.tainters.start()
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
        self.pods.add_handlers(
            EventHandlers(
                on_add=lambda pod: self.workers.pod_updated(None, pod), on_update=self.workers.pod_updated
            )
        )
        self.leases.add_handlers(self._lease_handler())
        self.leases.start()
        self.nodes.start()
        self.pods.start()
        self._monitor_k = 0
        self._monitor_handle = self._clock.call_soon(self._monitor_tick)

    def _lease_handler(self) -> ChangesHandler:
        """The lease informer's handler: renewals noted (a field write from its compact view, a
        run of updates at once), a lease added or deleted replaced."""
        lease_replaced = self.resting.lease_replaced
        one, many = self.resting.lease_handler(), self.resting.lease_group_handler()
        field = self.resting.lease_field_handler()

        def leases_changed(changes: Changes) -> None:
            group = changes.field_write
            if group is not None:
                field(group.keys, group.olds, group.news, group.path, group.value)
                return
            for kind, run in changes.runs():
                if kind != "MODIFIED":
                    for _, _, _, lease in run:
                        lease_replaced(_name(lease))
                elif len(run) == 1:
                    one(run[0][2], run[0][3])
                else:
                    many([(old, lease) for _, _, old, lease in run])

        return leases_changed

    def stop(self) -> None:
        self._running = False
        if self._monitor_handle is not None:
            self._monitor_handle.cancel()
            self._monitor_handle = None
        self.workers.stop()
        self.tainters.stop()

    def do_no_schedule_tainting_pass(self, name: str) -> None:
        self.workers.do_no_schedule_tainting_pass(name)

    def _guard(self, handler: Callable[[Any], Any], arg: Any) -> None:
        guard(handler, arg)

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
        """One monitorNodeHealth pass over every node (in name order); resting nodes are only
        counted in their zones (see `kubetaint.controllers.nodelifecycle.resting`)."""
        resting = self.resting
        now = self._clock.now()
        resting.begin_pass(now)
        by_name = self._by_name
        named: list[tuple[str, JSON]] | None = None
        if by_name is None or not self.resting_enabled or self._needs_full_classification():
            resting.clear(before_visit=True)
            resting.take_woken()
            named = self._named_nodes()
            visits = named
            listed = [node for _, node in named]
            start_nodes: Callable[[], list[JSON]] = lambda: listed  # noqa: E731
        else:
            visits = self._wake_resting(now, by_name)
            order, snapshot = self._name_order()[0], dict(by_name)
            start_nodes = lambda: [snapshot[name] for name in order]  # noqa: E731
        resting_counts = resting.zone_counts()
        added, deleted, new_zone_nodes = self._classify_nodes(named)
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
        self._zones_registered = set(self.zone_states)
        for node in deleted:
            name = _name(node)
            record_node_event(
                self.recorder, node, "Normal", "RemovingNode", f"Removing Node {name} from Controller"
            )
            self.known_nodes.pop(name, None)
            self._zones.pop(name, None)
            self._quiet.pop(name, None)
        zone_conditions: dict[str, list[Mapping[str, Any] | None]] = {}
        self._awake = self._visit(visits, zone_conditions, now, named is None)
        self.handle_disruption(zone_conditions, start_nodes, resting_counts)
        self.tainters.arm()

    def _needs_full_classification(self) -> bool:
        """Whether classifyNodes must look at every node (see _classify_nodes)."""
        return (
            self._by_name is None
            or self._membership_dirty
            or not self._zones_registered <= self.zone_states.keys()
        )

    def _node_added(self, node: JSON) -> None:
        name = _name(node)
        if self._by_name is not None:
            self._by_name[name] = node
        self._changed.add(name)
        self._membership_dirty = True
        self._sorted_names = None

    def _node_updated(self, _old: JSON, node: JSON) -> None:
        name = _name(node)
        if self._by_name is not None:
            self._by_name[name] = node
        self._changed.add(name)
        self.resting.node_changed.add(name)

    def _node_deleted(self, node: JSON) -> None:
        # renewals seen by passes before the deletion count, the others never will be seen
        self.resting.wake(_name(node))
        if self._by_name is not None:
            self._by_name.pop(_name(node), None)
        self._membership_dirty = True
        self._sorted_names = None

    def _named_nodes(self) -> list[tuple[str, JSON]]:
        """(name, node) for every node of the informer, in name order."""
        by_name = self._by_name
        if by_name is None:
            self._sorted_names = None
            get = self.nodes.get
            names = sorted(_name(n) for n in self.nodes.items())
            return [(name, node) for name in names if (node := get("", name)) is not None]
        return [(name, by_name[name]) for name in self._name_order()[0]]

    def _name_order(self) -> tuple[list[str], dict[str, int]]:
        """The started controller's node names in name order, and each name's position."""
        if self._sorted_names is None:
            self._sorted_names = sorted(self._by_name or {})
            self._positions = {name: i for i, name in enumerate(self._sorted_names)}
        return self._sorted_names, self._positions

    def _classify_nodes(
        self, named: list[tuple[str, JSON]] | None
    ) -> tuple[list[JSON], list[JSON], list[JSON]]:
        """classifyNodes: (added, deleted, known nodes of a zone without state).

        While no node was added or deleted and no zone state was dropped since the last pass,
        only a node whose object changed can be new or be in a zone without state."""
        known, states = self.known_nodes, self.zone_states
        changed, self._changed = self._changed, set()
        full = self._by_name is None or self._membership_dirty or not self._zones_registered <= states.keys()
        self._membership_dirty = False
        if not full and self._by_name is not None:
            current = self._by_name
            new_zone = [
                current[name]
                for name in sorted(changed)
                if name in known and name in current and self._zone_of(name, current[name]) not in states
            ]
            return [], [], new_zone
        assert named is not None, "a full classification lists every node"
        added = [n for name, n in named if name not in known]
        new_zone = [n for name, n in named if name in known and self._zone_of(name, n) not in states]
        deleted: list[JSON] = []
        if len(known) + len(added) != len(named):
            present = {name for name, _ in named}
            deleted = [n for name, n in sorted(known.items()) if name not in present]
        return added, deleted, new_zone

    def _zone_of(self, name: str, node: JSON) -> str:
        cached = self._zones.get(name)
        if cached is not None and cached[0] is node:
            return cached[1]
        zone = get_zone_key(node)
        self._zones[name] = (node, zone)
        return zone

    def _add_zone_for(self, node: Mapping[str, Any]) -> None:
        zone = get_zone_key(node)
        if zone not in self.zone_states:
            self.zone_states[zone] = ZoneState.INITIAL
            self.tainters.new_zone(zone)

    def _full_update_node(
        self, node: JSON, zone_conditions: dict[str, list[Mapping[str, Any] | None]]
    ) -> None:
        name = _name(node)
        self._last_result = None
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
        self._last_result = result
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
        return self.tainters.queue(get_zone_key(node))

    def _mark_node_for_tainting(
        self, node: Mapping[str, Any], status: str, name: str | None = None, zone: str | None = None
    ) -> bool:
        queue = self.tainters.queue(get_zone_key(node) if zone is None else zone)
        taints = (node.get("spec") or {}).get("taints") or []
        name = _name(node) if name is None else name
        wanted = NOT_READY_TAINT_TEMPLATE if status == "False" else UNREACHABLE_TAINT_TEMPLATE
        uid = str((node.get("metadata") or {}).get("uid") or "")
        if not taint_exists(taints, wanted):
            return queue.requeue(name, uid, to_nanos(self._clock.now()))  # Remove, then Add
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

    # NoExecute tainting ------------------------------------------------------------------------

    @property
    def zone_tainters(self) -> dict[str, RateLimitedTimedQueue]:
        return self.tainters.queues

    def do_no_execute_tainting_pass(self) -> None:
        self.tainters.run_pass()

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
