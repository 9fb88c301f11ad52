"""A pass's re-queues of the resting untainted Unknown nodes (see `.resting`), as the node loop
makes them: markNodeForTainting's Remove then Add for each, at the point of the name-ordered loop
where its visit would come (mirrors that part of monitorNodeHealth in
pkg/controller/nodelifecycle/node_lifecycle_controller.go).

The zones' queues are independent, so each zone's re-queues up to a point of the loop go to its
queue in one `requeue_many`, in name order. The plan (each zone's names, uids and loop positions)
is made again only when the resting set or the node names changed since the last pass: between a
zone outage's taints, pass after pass re-queues the very same nodes.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Container

from kubetaint.controllers.nodelifecycle.rate_limited_queue import RateLimitedTimedQueue

#: A loop position past every node.
END = 1 << 62


class _ZoneRequeues:
    __slots__ = ("at", "items", "names", "next", "zone")

    def __init__(self, zone: str) -> None:
        self.zone = zone
        self.at: list[int] = []  # loop positions, ascending
        self.items: list[tuple[str, str]] = []  # (name, uid) at those positions
        self.names: list[str] = []  # the names of the items
        self.next = 0  # the first not re-queued yet this pass


class RequeuePlan:
    """Each zone's resting re-queues for the pass under way."""

    def __init__(self) -> None:
        self._made_from: dict[str, tuple[str, str]] = {}
        self._position: dict[str, int] | None = None
        self._zones: list[_ZoneRequeues] = []
        self._by_zone: dict[str, _ZoneRequeues] = {}
        #: the re-queues dict the plan was last begun with, and its owner's count of changes then
        self._source: dict[str, tuple[str, str]] | None = None
        self._changes: int | None = None

    def begin(
        self, requeues: dict[str, tuple[str, str]], position: dict[str, int], changes: int | None = None
    ) -> int:
        """Start a pass re-queueing `requeues` (name -> (zone, uid)) at the names' `position`s;
        the position of the first re-queue (END: none). `changes`: the owner's count of changes
        to `requeues` (RestingNodes.requeue_changes): while it stays, they are not compared."""
        made_from = self._made_from
        if position is not self._position:
            self._make(requeues, position)
        elif changes is not None and changes == self._changes and requeues is self._source:
            pass  # the very re-queues of the plan
        elif requeues != made_from:
            if len(requeues) < len(made_from) and requeues.items() <= made_from.items():
                self._drop(made_from.keys() - requeues.keys())  # a node tainted, or woken
            else:
                self._make(requeues, position)
        self._source, self._changes = requeues, changes
        first = END
        for zone in self._zones:
            zone.next = 0
            if zone.at and zone.at[0] < first:
                first = zone.at[0]
        return first

    def _make(self, requeues: dict[str, tuple[str, str]], position: dict[str, int]) -> None:
        by_zone: dict[str, _ZoneRequeues] = {}
        for at, name in sorted((position[name], name) for name in requeues if name in position):
            zone, uid = requeues[name]
            plan = by_zone.get(zone)
            if plan is None:
                plan = by_zone[zone] = _ZoneRequeues(zone)
            plan.at.append(at)
            plan.items.append((name, uid))
            plan.names.append(name)
        self._zones = list(by_zone.values())
        self._by_zone = by_zone
        self._made_from = dict(requeues)
        self._position = position

    def _drop(self, names: set[str]) -> None:
        """The plan without `names` (each keeps its place in the others' order)."""
        for name in names:
            zone = self._by_zone[self._made_from.pop(name)[0]]
            i = zone.names.index(name)
            del zone.at[i], zone.items[i], zone.names[i]

    def zones_made(self, made: Container[str]) -> bool:
        """Whether every zone with planned re-queues has its queue (is in `made`)."""
        return all(zone.zone in made for zone in self._zones if zone.at)

    def until_in(
        self,
        zone_key: str,
        end: int,
        queue_of: Callable[[str], RateLimitedTimedQueue],
        now: Callable[[], int],
    ) -> None:
        """`until(end)` for the zone `zone_key` alone (the other zones' re-queues wait)."""
        zone = self._by_zone.get(zone_key)
        if zone is None:
            return
        start = zone.next
        if start < len(zone.at) and zone.at[start] < end:
            stop = bisect_left(zone.at, end, start)
            zone.next = stop  # (before the queue is asked for: no re-queue twice)
            queue_of(zone_key).requeue_many(zone.items[start:stop], now())

    def until(
        self, end: int, queue_of: Callable[[str], RateLimitedTimedQueue], now: Callable[[], int]
    ) -> int:
        """Re-queue every planned node placed before loop position `end` (a zone whose queue is
        still to be made gets it where its first re-queue comes); the next planned position."""
        due: list[tuple[int, _ZoneRequeues, int]] = []
        for zone in self._zones:
            start = zone.next
            if start < len(zone.at) and zone.at[start] < end:
                stop = bisect_left(zone.at, end, start)
                due.append((zone.at[start], zone, stop))
        if due:
            due.sort(key=lambda d: d[0])
            at_now = now()
            for _, zone, stop in due:
                queue_of(zone.zone).requeue_many(zone.items[zone.next : stop], at_now)
                zone.next = stop
        following = END
        for zone in self._zones:
            if zone.next < len(zone.at) and zone.at[zone.next] < following:
                following = zone.at[zone.next]
        return following
