"""The node loop of monitorNodeHealth with its shortcuts, as a part of the node lifecycle
controller (mirrors the per-node body of monitorNodeHealth in
pkg/controller/nodelifecycle/node_lifecycle_controller.go).

A node whose object and lease are the same as in a pass that changed nothing is *quiet*: its visit
is replayed from what that pass saw (`QuietNode`), with exactly the effects of the full visit. Nodes
whose replay would change nothing but their zone's count rest (see `.resting`) and are not visited;
untainted Unknown nodes rest too, but each pass re-queues them (markNodeForTainting's Remove, then
Add) where their visits would come in the name-ordered loop. A quiet Ready node whose only news is its
kubelet's status post (a new heartbeat, the same spec, labels and uid) is updated by `_reposted`
with the full update's effects, without the general tryUpdateNodeHealth (`.reposts`). The resting
nodes' re-queues of a pass wait, zone by zone, until the zone's queue is used (`_requeue_cursor`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.clock.base import Clock
from kubetaint.controllers.nodelifecycle.health import (
    NODE_LEASE_NAMESPACE,
    HealthResult,
    NodeHealthTracker,
)
from kubetaint.controllers.nodelifecycle.rate_limiter import to_nanos
from kubetaint.controllers.nodelifecycle.reposts import StatusReposts
from kubetaint.controllers.nodelifecycle.requeue_plan import END, RequeuePlan
from kubetaint.controllers.nodelifecycle.resting import QuietNode, RestingNodes
from kubetaint.controllers.nodelifecycle.settings import NodeLifecycleSettings
from kubetaint.controllers.nodelifecycle.tainting import ZoneTainters
from kubetaint.controllers.nodelifecycle.zones import get_zone_key, is_excluded_from_disruption_checks
from kubetaint.core.conditions import NOT_READY_TAINT_TEMPLATE, UNREACHABLE_TAINT_TEMPLATE, taint_exists
from kubetaint.store.informer import Informer
from kubetaint.store.interface import JSON

log = logging.getLogger("kubetaint.controllers.nodelifecycle.controller")


class NodeLoop(StatusReposts):
    """The node-loop half of NodeLifecycleController (which provides these attributes)."""

    settings: NodeLifecycleSettings
    leases: Informer
    health: NodeHealthTracker
    tainters: ZoneTainters
    resting: RestingNodes
    resting_enabled: bool
    #: whether a Ready node's status post takes `_reposted` (tests compare with the full update)
    reposts_enabled: bool
    #: whether a pass re-queues lazily, zone by zone (see _requeue_cursor; tests compare)
    lazy_requeues: bool
    nodes_to_retry: set[str]
    _clock: Clock
    _quiet: dict[str, QuietNode]
    _positions: dict[str, int]
    _awake: set[str]
    _requeue_plan: RequeuePlan
    _last_result: HealthResult | None

    def _name_order(self) -> tuple[list[str], dict[str, int]]:
        raise NotImplementedError

    def _full_update_node(
        self, node: JSON, zone_conditions: dict[str, list[Mapping[str, Any] | None]]
    ) -> None:
        raise NotImplementedError

    def mark_node_as_reachable(self, node: Mapping[str, Any]) -> bool:
        raise NotImplementedError

    def _visit(
        self,
        visits: list[tuple[str, JSON]],
        zone_conditions: dict[str, list[Mapping[str, Any] | None]],
        now: float,
        started: bool,
    ) -> set[str]:
        """The node loop of the pass; the visited nodes that stay awake. The resting nodes to
        re-queue (of a `started` controller) are re-queued where their visits would come."""
        next_requeue = self._begin_requeues(started)
        cursor = self._requeue_cursor(next_requeue)
        try:
            awake, next_requeue = self._visit_nodes(visits, zone_conditions, now, next_requeue, cursor)
        finally:
            if cursor is not None:
                self.tainters.before_use = None
        if next_requeue < END:
            self._requeue_until(END)
        return awake

    def _visit_nodes(
        self,
        visits: list[tuple[str, JSON]],
        zone_conditions: dict[str, list[Mapping[str, Any] | None]],
        now: float,
        next_requeue: int,
        cursor: list[int] | None,
    ) -> tuple[set[str], int]:
        """`_visit`'s loop; the nodes that stay awake and the position of the next re-queue.
        With a `cursor`, a zone's re-queues wait until its queue is used (see _requeue_cursor)."""
        idle, resting, awake = self._idle_check(now), self.resting, set()
        position = self._positions
        enabled, healths = self.resting_enabled, self.health.healths
        grace = self.settings.node_monitor_grace_period
        quiet_of, lease_of, keeps_lease = self._quiet.get, self.leases.get, self.health.keeps_lease
        queue_of, clock, retry = self.tainters.queue, self._clock, self.nodes_to_retry
        for name, node in visits:
            if next_requeue != END and next_requeue < position[name]:
                if cursor is not None:
                    cursor[0] = position[name]
                else:
                    next_requeue = self._requeue_until(position[name])
            quiet = quiet_of(name)
            if (
                quiet is not None
                and quiet.node is node
                and quiet.status == "Unknown"
                and not quiet.wanted_taint
            ):
                lease = lease_of(NODE_LEASE_NAMESPACE, name)
                if quiet.lease is lease and keeps_lease(name, lease is not None):
                    # _update_node's quiet case for an untainted Unknown node: markNodeForTainting
                    # re-queues it (Remove, then Add); later passes do just that (see .resting)
                    if quiet.counted:
                        zone_conditions.setdefault(quiet.zone, []).append(quiet.ready)
                    queue_of(quiet.zone).requeue(name, quiet.uid, to_nanos(clock.now()))
                    retry.discard(name)
                    if enabled:
                        resting.rest_requeued(
                            name, quiet.zone if quiet.counted else None, quiet.zone, quiet.uid
                        )
                    else:
                        awake.add(name)
                    continue
            quiet = idle(name, node)
            if quiet is not None:  # exactly _update_node's quiet case, whose other effects are no-ops
                if quiet.counted:
                    zone_conditions.setdefault(quiet.zone, []).append(quiet.ready)
            else:
                try:
                    self._update_node(name, node, zone_conditions, now)
                except Exception:
                    log.exception("node lifecycle controller: failed to update the health of node %s", name)
                    awake.add(name)
                    continue
                if enabled:
                    quiet = idle(name, node)  # idle from now on while nothing changes
                    if quiet is None:
                        unready = self._unready_deadline(name, node, now)
                        if unready is not None:
                            zone = unready[1]
                            resting.rest(name, unready[0], zone.zone if zone.counted else None, False)
                            continue
            if quiet is not None and enabled:
                deadline = healths[name].probe_timestamp + grace
                resting.rest(name, deadline, quiet.zone if quiet.counted else None)
            else:
                awake.add(name)
        return awake, next_requeue

    def _begin_requeues(self, started: bool) -> int:
        """Plan this pass's re-queues of the resting nodes; the loop position of the first."""
        requeues = self.resting.requeues
        if not started or not requeues:
            return END
        return self._requeue_plan.begin(requeues, self._name_order()[1], self.resting.requeue_changes)

    def _requeue_cursor(self, next_requeue: int) -> list[int] | None:
        """Where the pass re-queues each zone's planned nodes lazily: up to the loop position in
        the cursor (the node being visited), when the zone's queue is about to be used (every
        use goes through ZoneTainters.queue) or at the end of the loop. The zones' queues are
        apart, and a visit reads no other zone's queue than its node's (whose name is not among
        the planned ones), so each queue sees its operations in the same order as when every
        zone's re-queues up to a visit are made before it. Only while every planned zone has
        its queue (one made later would come into the queues in another order); None: not lazy."""
        if next_requeue == END or not self.lazy_requeues:
            return None
        queues, plan, clock = self.tainters.queues, self._requeue_plan, self._clock
        if not plan.zones_made(queues):
            return None
        cursor = [0]
        now = lambda: to_nanos(clock.now())  # noqa: E731
        self.tainters.before_use = lambda zone: plan.until_in(zone, cursor[0], queues.__getitem__, now)
        return cursor

    def _requeue_until(self, end: int) -> int:
        """Re-queue the planned nodes placed before name position `end` (see RequeuePlan); the
        position of the next one."""
        clock = self._clock
        return self._requeue_plan.until(end, self.tainters.queue, lambda: to_nanos(clock.now()))

    def _unready_deadline(self, name: str, node: JSON, now: float) -> tuple[float, QuietNode] | None:
        """For a quiet not-Ready node whose visits only retry a no-op Add (see .resting): until when
        it may rest (math.inf: an Unknown node has no deadline) and its QuietNode."""
        quiet = self._quiet.get(name)
        if quiet is None or quiet.node is not node or quiet.status == "True" or not quiet.wanted_taint:
            return None
        lease = self.leases.get(NODE_LEASE_NAMESPACE, name)
        if quiet.lease is not lease or name in self.nodes_to_retry:
            return None
        queue = self.tainters.queues.get(quiet.zone)
        if queue is None or name not in queue.queue.values:
            return None
        has_lease = lease is not None
        if quiet.status == "Unknown":
            return (math.inf, quiet) if self.health.keeps_lease(name, has_lease) else None
        if not self.health.still_quiet(name, has_lease, now):
            return None
        return self.health.healths[name].probe_timestamp + self.settings.node_monitor_grace_period, quiet

    def _wake_resting(self, now: float, by_name: dict[str, JSON]) -> list[tuple[str, JSON]]:
        """Wake the resting nodes that changed or ran out of grace; (name, node) of the nodes to
        visit in name order: those the last pass left awake and those woken now."""
        resting = self.resting
        resting.wake_changed_nodes()
        resting.wake_expired(now, self.settings.node_monitor_grace_period)
        awake = self._awake
        awake.update(resting.take_woken())
        position = self._name_order()[1]
        names = sorted((name for name in awake if name in position), key=position.__getitem__)
        return [(name, by_name[name]) for name in names]

    def _update_node(
        self, name: str, node: JSON, zone_conditions: dict[str, list[Mapping[str, Any] | None]], now: float
    ) -> None:
        """One node of monitorNodeHealth. A node whose object and lease are the same as in a pass
        that changed nothing takes a shortcut with exactly the same effects."""
        lease = self.leases.get(NODE_LEASE_NAMESPACE, name)
        quiet = self._quiet.get(name)
        if quiet is not None and quiet.node is node and self._still_quiet(name, quiet, lease, now):
            quiet.lease = lease
            if quiet.counted:
                zone_conditions.setdefault(quiet.zone, []).append(quiet.ready)
            if quiet.status != "True":
                # markNodeForTainting with what is known of this unchanged node
                queue = self.tainters.queue(quiet.zone)
                if quiet.wanted_taint:
                    queue.add(name, quiet.uid, to_nanos(self._clock.now()))
                else:
                    queue.requeue(name, quiet.uid, to_nanos(self._clock.now()))
            elif quiet.no_execute_taints:
                self.mark_node_as_reachable(node)
            else:
                queue = self.tainters.queue(quiet.zone)
                if name in queue.queue.values:  # Remove of a value not in the set changes nothing
                    queue.remove(name)
            self.nodes_to_retry.discard(name)
            return
        if (
            quiet is not None
            and self.reposts_enabled
            and self._reposted(name, node, quiet, lease, zone_conditions)
        ):
            return
        self._quiet.pop(name, None)
        self._full_update_node(node, zone_conditions)
        result = self._last_result
        if result is not None and self._is_quiet(name, result):
            assert result.current_ready is not None
            taints = (node.get("spec") or {}).get("taints") or []
            status = str(result.current_ready.get("status"))
            unreachable = taint_exists(taints, UNREACHABLE_TAINT_TEMPLATE)
            not_ready = taint_exists(taints, NOT_READY_TAINT_TEMPLATE)
            self._quiet[name] = QuietNode(
                node,
                lease,
                result.current_ready,
                status,
                get_zone_key(node),
                not is_excluded_from_disruption_checks(node),
                unreachable or not_ready,
                not_ready if status == "False" else unreachable,
                str((node.get("metadata") or {}).get("uid") or ""),
            )

    def _idle_check(self, now: float) -> Callable[[str, JSON], QuietNode | None]:
        """A test for the commonest node of a pass: quiet, Ready, untainted, with the same object
        and lease as last time, within its grace period, in no tainting queue and not to retry.
        For such a node _update_node only re-counts its Ready condition (its queue removal and
        retry discard change nothing), so the pass may do just that."""
        quiet_of, lease_of = self._quiet.get, self.leases.get
        healths, retry = self.health.healths, self.nodes_to_retry
        grace = self.settings.node_monitor_grace_period
        queues = self.tainters.queues

        def idle(name: str, node: JSON) -> QuietNode | None:
            quiet = quiet_of(name)
            if quiet is None or quiet.node is not node or quiet.status != "True" or quiet.no_execute_taints:
                return None
            lease = lease_of(NODE_LEASE_NAMESPACE, name)
            health = healths.get(name)
            if quiet.lease is not lease or health is None or (lease is not None and health.lease is None):
                return None
            if now > health.probe_timestamp + grace or name in retry:
                return None
            queue = queues.get(quiet.zone)
            return quiet if queue is not None and name not in queue.queue.values else None

        return idle

    def _still_quiet(self, name: str, quiet: QuietNode, lease: JSON | None, now: float) -> bool:
        has_lease = lease is not None
        if quiet.status == "Unknown":
            # nothing changes while nothing is renewed (the conditions are Unknown already)
            return quiet.lease is lease and self.health.keeps_lease(name, has_lease)
        if quiet.lease is not lease:
            if lease is None:
                return False
            self.health.observe_lease(name, lease, now)
        return self.health.still_quiet(name, has_lease, now)

    def _is_quiet(self, name: str, result: HealthResult) -> bool:
        current = result.current_ready
        if result.wrote or current is None or result.observed_ready != current:
            return False
        status = current.get("status")
        if status == "True":
            return True
        taints = (result.node.get("spec") or {}).get("taints") or []
        if name in self.nodes_to_retry:
            return False
        if status == "Unknown":
            return not taint_exists(taints, NOT_READY_TAINT_TEMPLATE)
        return status == "False" and not taint_exists(taints, UNREACHABLE_TAINT_TEMPLATE)
