"""Nodes a monitorNodeHealth pass may leave out (bookkeeping only; the decisions stay
node_lifecycle_controller.go's).

Most nodes of a healthy cluster are *idle* in a pass: Ready, quiet (the last pass changed nothing),
untainted, with the same object and lease as last time, within their grace period, in no tainting
queue and not to retry. For such a node the pass only counts its Ready condition in its zone. Once
a pass finds a node idle it *rests*: later passes count it without looking at it until

- its Node object changes (node informer event),
- its Lease changes (lease informer event; a renewal within the grace period is observed at the
  next pass exactly as a visit would, without visiting),
- its grace period runs out (`deadline`: the last probe time plus nodeMonitorGracePeriod), or
- anything the controller cannot follow node by node happens (a node is added or deleted, the
  cluster enters or leaves full disruption): then every node wakes.

A woken node is visited by the full pass code, so leaving a node out is the only shortcut.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]


@dataclass(slots=True)
class QuietNode:
    """A node whose last health pass changed nothing: while its object and lease stay the same,
    the next pass has the same effects, so it can be replayed cheaply."""

    node: JSON
    lease: JSON | None
    ready: Mapping[str, Any]
    status: str
    zone: str
    counted: bool  # not excluded from disruption checks
    no_execute_taints: bool  # carries the unreachable or not-ready NoExecute taint
    #: for a not-Ready node: carries the taint its status calls for (markNodeForTainting's test)
    wanted_taint: bool
    uid: str


class RestingNodes:
    """Resting node names with their deadlines, per-zone counts, and the wake-up signals."""

    def __init__(self) -> None:
        #: name → (deadline, zone key when the node counts in its zone's disruption state, else None)
        self.deadlines: dict[str, tuple[float, str | None]] = {}
        #: zone key → resting nodes counted there (all of them Ready)
        self.counts: dict[str, int] = {}
        self._heap: list[tuple[float, str]] = []
        self.node_changed: set[str] = set()
        self.lease_changed: set[str] = set()

    def __contains__(self, name: object) -> bool:
        return name in self.deadlines

    def __len__(self) -> int:
        return len(self.deadlines)

    def rest(self, name: str, deadline: float, zone: str | None) -> None:
        """`name` is idle until `deadline` (inclusive) unless woken; counted in `zone` (None: not counted)."""
        previous = self.deadlines.get(name)
        if previous is not None:
            if previous[0] == deadline and previous[1] == zone:
                return
            self._uncount(previous[1])
        self.deadlines[name] = (deadline, zone)
        if zone is not None:
            self.counts[zone] = self.counts.get(zone, 0) + 1
        heapq.heappush(self._heap, (deadline, name))

    def wake(self, name: str) -> None:
        entry = self.deadlines.pop(name, None)
        if entry is not None:
            self._uncount(entry[1])

    def _uncount(self, zone: str | None) -> None:
        if zone is not None:
            left = self.counts[zone] - 1
            if left:
                self.counts[zone] = left
            else:
                del self.counts[zone]

    def clear(self) -> None:
        """Every node wakes (and pending signals are moot: all of them will be visited)."""
        self.deadlines.clear()
        self.counts.clear()
        self._heap.clear()
        self.node_changed.clear()
        self.lease_changed.clear()

    def wake_changed_nodes(self) -> None:
        for name in self.node_changed:
            self.wake(name)
        self.node_changed.clear()

    def take_lease_changes(self) -> list[str]:
        """Resting nodes whose lease changed since the last pass (the signals are consumed)."""
        names = [name for name in self.lease_changed if name in self.deadlines]
        self.lease_changed.clear()
        return names

    def wake_expired(self, now: float) -> None:
        """Wake the nodes whose deadline is before `now` (their grace period has run out)."""
        heap, deadlines = self._heap, self.deadlines
        while heap and heap[0][0] < now:
            deadline, name = heapq.heappop(heap)
            entry = deadlines.get(name)
            if entry is not None and entry[0] == deadline:
                self.wake(name)
