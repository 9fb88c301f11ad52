"""Speeds up monitorNodeHealth by keeping what changed since the last pass (the settled nodes,
their deadlines and zone counts, the nodes and leases changed since), so that a pass visits only
the nodes whose visit can change something; off with `KUBETAINT_REFERENCE=1`, where no node
settles and every pass visits every node, as upstream's does."""

from __future__ import annotations

import heapq
import itertools
import math
from bisect import bisect_left
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from enum import Enum

from kubetaint.clock.base import Clock
from kubetaint.controllers.nodelifecycle.health import NODE_LEASE_NAMESPACE, NodeHealthTracker
from kubetaint.controllers.nodelifecycle.rate_limited_queue import RateLimitedTimedQueue, to_nanos
from kubetaint.store.changes import FieldWriteGroup
from kubetaint.store.informer import Changes
from kubetaint.store.interface import JSON

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
