"""Speeds up monitorNodeHealth by visiting only the nodes whose visit can change something (off in
reference mode, `KUBETAINT_REFERENCE=1`, where every pass visits every node as upstream does).

After a visit that changed nothing, a node is *settled* when its next visit would change nothing
but its zone's count (see `settles_as`):

- `READY`: Ready, without NoExecute taint, out of its zone's tainting queue;
- `TAINTED`: not Ready, carrying the NoExecute taint its Ready status calls for, its name still in
  the queue's set (markNodeForTainting's Add is a no-op);
- `REQUEUED`: not Ready without that taint: every visit re-queues it (markNodeForTainting's
  Remove, then Add), so every pass still does that where its visit would come in name order.

A settled node is counted in its zone without a visit until something its visit reads changes:
its Node object (a node informer event), the grace period runs out (`deadline`: the last probe
time plus nodeMonitorGracePeriod; none for an Unknown node, whose conditions are Unknown already)
or the cluster enters or leaves full disruption. A Lease event of a settled node is the lease step
of tryUpdateNodeHealth alone: the pass observes the lease at its start and the node stays settled.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from enum import Enum

from kubetaint.controllers.nodelifecycle.health import NodeHealthTracker
from kubetaint.store.interface import JSON


class Settled(Enum):
    READY = "Ready"
    TAINTED = "Tainted"
    REQUEUED = "Requeued"


@dataclass(slots=True)
class SettledNode:
    kind: Settled
    zone: str
    counted: bool  # not excluded from disruption checks
    uid: str
    deadline: float  # math.inf: none


class MonitorWork:
    """What changed since the last monitorNodeHealth pass: the settled nodes with their deadlines
    and zone counts, and the names of the nodes and leases that changed since."""

    def __init__(self, health: NodeHealthTracker, grace_period: float) -> None:
        self._health = health
        self._grace = grace_period
        self.settled: dict[str, SettledNode] = {}
        #: the names a pass visits: the nodes not settled (deleted ones are dropped by the pass)
        #: and the settled REQUEUED ones
        self.unsettled: set[str] = set()
        self.requeued: set[str] = set()
        #: zone → (settled Ready nodes, settled nodes) counted there
        self._counts: dict[str, list[int]] = {}
        #: (deadline, name) of settled nodes; an entry is checked against the node when it comes
        self._deadlines: list[tuple[float, str]] = []
        self.changed_nodes: set[str] = set()
        #: node name → its lease as last changed (None: deleted)
        self.changed_leases: dict[str, JSON | None] = {}

    def to_visit(self) -> list[str]:
        """The names this pass visits, in name order."""
        return sorted(self.unsettled | self.requeued)

    def settle(self, name: str, node: SettledNode) -> None:
        self.unsettle(name)
        self.unsettled.discard(name)
        self.settled[name] = node
        if node.kind is Settled.REQUEUED:
            self.requeued.add(name)
        if node.counted:
            counts = self._counts.setdefault(node.zone, [0, 0])
            counts[0] += node.kind is Settled.READY
            counts[1] += 1
        if node.deadline != math.inf:
            heapq.heappush(self._deadlines, (node.deadline, name))

    def unsettle(self, name: str) -> None:
        self.unsettled.add(name)
        node = self.settled.pop(name, None)
        if node is None:
            return
        if node.kind is Settled.REQUEUED:
            self.requeued.discard(name)
        if node.counted:
            counts = self._counts[node.zone]
            counts[0] -= node.kind is Settled.READY
            counts[1] -= 1
            if not counts[1]:
                del self._counts[node.zone]

    def forget(self, name: str) -> None:
        """`name` is no node any longer."""
        self.unsettle(name)
        self.unsettled.discard(name)

    def unsettle_zone(self, zone: str) -> None:
        """Unsettle the nodes of `zone` (its tainting queue is replaced)."""
        for name in [name for name, node in self.settled.items() if node.zone == zone]:
            self.unsettle(name)

    def unsettle_all(self) -> None:
        self.unsettled.update(self.settled)
        self.requeued.clear()
        self.settled.clear()
        self._counts.clear()
        self._deadlines.clear()

    def begin_pass(self, now: float, observe_lease: bool = True) -> None:
        """Unsettle the nodes whose object changed or whose grace period ran out; a changed lease
        of a settled node is observed now (tryUpdateNodeHealth's lease step, which may move its
        deadline)."""
        for name in self.changed_nodes:
            self.unsettle(name)
        self.changed_nodes.clear()
        health, settled = self._health, self.settled
        changed = self.changed_leases
        health.observe_leases({name: changed[name] for name in changed.keys() & settled.keys()}, now)
        changed.clear()
        deadlines, grace = self._deadlines, self._grace
        while deadlines and deadlines[0][0] < now:
            deadline, name = heapq.heappop(deadlines)
            node = settled.get(name)
            if node is None or node.deadline != deadline:
                continue  # unsettled or settled again since
            record = health.get(name)
            renewed = record.probe_timestamp + grace if record is not None else deadline
            if renewed < now:
                self.unsettle(name)
            else:
                node.deadline = renewed
                heapq.heappush(deadlines, (renewed, name))

    def zone_counts(self) -> dict[str, tuple[int, int]]:
        """zone → (settled Ready nodes, settled nodes) counted there."""
        return {zone: (ready, size) for zone, (ready, size) in self._counts.items()}
