"""Nodes a monitorNodeHealth pass may leave out (bookkeeping only; the decisions stay
node_lifecycle_controller.go's).

A node *rests* once a pass finds that the next visit would change nothing but its zone's count:

- a Ready node that is quiet (the last pass changed nothing), untainted, with the same object and
  lease as last time, within its grace period, in no tainting queue and not to retry: a visit only
  counts it Ready (and observes a renewed lease);
- a not-Ready node that is quiet and already carries the NoExecute taint its Ready status calls for,
  whose name is still in its zone queue's set (upstream's RateLimitedTimedQueue.Try takes a value
  out of the heap but keeps it in the set until Remove), not to retry: a visit only counts it not
  Ready and retries `zoneNoExecuteTainter.Add`, a no-op while the name stays in the set. Only a
  visit of that very node (or a full-disruption transition, which wakes every node) calls Remove;
- a quiet Unknown node without the unreachable taint, not to retry: a visit only counts it not
  Ready and re-queues it (markNodeForTainting's Remove, then Add, which moves it in the heap), so
  it rests in `requeues` and each pass re-queues it at the point of the name-ordered node loop
  where its visit would have.

Later passes count a resting node without looking at it until

- its Node object changes (node informer event),
- its Lease is added or deleted, or (not-Ready nodes) changes at all,
- its grace period runs out (`deadline`: the last probe time plus nodeMonitorGracePeriod; never for
  an Unknown node, whose conditions are Unknown already), or
- anything the controller cannot follow node by node happens (a node is added or deleted, the
  cluster enters or leaves full disruption): then every node wakes.

A lease *renewal* of a resting Ready node only moves its probe timestamp (tryUpdateNodeHealth sets
it to the time of the first pass that sees the later renewTime) and so its deadline. The renewal is
noted with the pass that will see it (`PassMark`, timed when that pass begins) and applied lazily:
when the node's old deadline fires (which then moves to the renewed one), when the next renewal
arrives, when the node wakes, or when everything is settled. Applying a noted renewal is exactly
the observation its pass made of the unchanged node (`NodeHealthTracker.observe_lease` at its
time); only the latest lease before a pass counts, as a pass sees only the lease of its instant.
A renewal is dropped instead when no pass will see it (its lease is deleted or replaced first) or
when the pass that would see it visits the node: the visit observes the lease itself, after a
changed status may have refreshed the health record.

A woken node is visited by the full pass code, so leaving a node out is the only shortcut.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any

from kubetaint.controllers.nodelifecycle.expiry import DeadlineExpiry
from kubetaint.controllers.nodelifecycle.grouped_renewals import GroupNote, RenewalGroups
from kubetaint.controllers.nodelifecycle.health import NodeHealthTracker, renew_text, renewed_after

JSON = dict[str, Any]
#: the field a lease renewal sets (kubetaint.kubelet.lease.RENEW_TIME)
RENEW_TIME = ("spec", "renewTime")
_second = itemgetter(1)


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


#: A noted renewal: [lease, PassMark of the pass that sees it first, the lease's renewTime or None].
#: A list, so that a renewal of a node whose renewal is noted already updates it in place; a
#: record taken out of `RestingNodes.renewals` is never changed again.
NotedRenewal = list[Any]


class PassMark:
    """A monitorNodeHealth pass that lease renewals wait for: `time` is set when it begins."""

    __slots__ = ("time",)

    def __init__(self) -> None:
        self.time: float | None = None


class RestingNodes(RenewalGroups, DeadlineExpiry):
    """Resting node names with their deadlines, per-zone counts, wake-up signals and the noted
    lease renewals (applied through `health`, which may be None when nothing is noted)."""

    def __init__(self, health: NodeHealthTracker | None = None, group_at_least: int = 16) -> None:
        self._health = health
        #: heartbeat groups of at least this many renewals are noted as one record (`grouped`)
        self._group_at_least = group_at_least
        #: name → (deadline, zone key when the node counts in its zone's disruption state else
        #: None, Ready). A Ready node's deadline may be earlier than its real one while a renewal
        #: waits in `renewals`: it is moved when it fires.
        self.deadlines: dict[str, tuple[float, str | None, bool]] = {}
        #: zone key → resting Ready nodes counted there, and resting not-Ready ones
        self.counts: dict[str, int] = {}
        self.unready_counts: dict[str, int] = {}
        #: the distinct deadlines (a heap) and the names resting until each: nodes seen at one
        #: pass share their deadline, so a pass wakes whole buckets
        self._times: list[float] = []
        self._due: dict[float, list[str]] = {}
        self.node_changed: set[str] = set()
        self.lease_changed: set[str] = set()
        #: resting Ready node → its noted renewal: [its latest renewed lease, the pass that sees
        #: it first, the lease's renewTime] (`NotedRenewal`, updated in place when re-noted)
        self.renewals: dict[str, NotedRenewal] = {}
        #: resting Ready nodes whose noted renewal (or settled one) a group record holds instead
        #: (`.grouped_renewals`); a node is in at most one of `renewals` and `grouped`
        self.grouped: dict[str, GroupNote] = {}
        self._next_pass = PassMark()
        #: the pass begun last (its visits see the leases noted for it themselves)
        self._seen_now: PassMark | None = None
        #: names woken since the last `take_woken`
        self._woken: list[str] = []
        #: resting untainted Unknown nodes → (zone key, uid): each pass still re-queues them
        self.requeues: dict[str, tuple[str, str]] = {}
        #: bumped by every change of `requeues` (only these methods change it): a RequeuePlan
        #: made at one count is still the plan while the count stays
        self.requeue_changes = 0

    def __contains__(self, name: object) -> bool:
        return name in self.deadlines

    def __len__(self) -> int:
        return len(self.deadlines)

    def begin_pass(self, now: float) -> None:
        """A pass begins at `now`: the renewals noted since the last one are seen at `now`."""
        self._next_pass.time = now
        self._seen_now = self._next_pass
        self._next_pass = PassMark()

    def rest(self, name: str, deadline: float, zone: str | None, ready: bool = True) -> None:
        """`name` is idle until `deadline` (inclusive; math.inf: no deadline) unless woken;
        counted in `zone` (None: not counted) as Ready or not."""
        if self.requeues.pop(name, None) is not None:
            self.requeue_changes += 1
        if name in self.grouped:
            self._ungroup(name)
        previous = self.deadlines.get(name)
        if previous is not None:
            if previous == (deadline, zone, ready):
                return
            self._uncount(previous[1], previous[2])
        self.deadlines[name] = (deadline, zone, ready)
        if zone is not None:
            counts = self.counts if ready else self.unready_counts
            counts[zone] = counts.get(zone, 0) + 1
        if deadline != math.inf:
            self._due_at(deadline, name)

    def _due_at(self, deadline: float, name: str) -> None:
        due = self._due.get(deadline)
        if due is None:
            self._due[deadline] = [name]
            heapq.heappush(self._times, deadline)
        else:
            due.append(name)

    def rest_requeued(self, name: str, zone: str | None, queue_zone: str, uid: str) -> None:
        """`name` is an untainted Unknown node: it rests without deadline, but every pass re-queues
        it in `queue_zone`'s queue (markNodeForTainting's Remove then Add) as its visit would."""
        self.rest(name, math.inf, zone, False)
        self.requeues[name] = (queue_zone, uid)
        self.requeue_changes += 1

    def wake(self, name: str, before_visit: bool = False) -> None:
        """`name` wakes; `before_visit`: at the start of a pass that visits it."""
        if self.requeues.pop(name, None) is not None:
            self.requeue_changes += 1
        entry = self.deadlines.pop(name, None)
        if entry is not None:
            self._uncount(entry[1], entry[2])
            self._woken.append(name)
            renewal = self.renewals.pop(name, None)
            if renewal is None and self.grouped:
                renewal = self._take_grouped(name)
            if renewal is not None:
                self._settle(name, renewal, before_visit)

    def _uncount(self, zone: str | None, ready: bool) -> None:
        if zone is not None:
            counts = self.counts if ready else self.unready_counts
            left = counts[zone] - 1
            if left:
                counts[zone] = left
            else:
                del counts[zone]

    def _settle(self, name: str, renewal: NotedRenewal, before_visit: bool = False) -> None:
        """Apply a noted renewal if its pass has begun. A renewal its pass has yet to see is
        dropped (the node is visited by then and the visit sees the lease itself, or the lease is
        gone), and so is one for the pass about to visit the node (`before_visit`): the visit
        observes it, after a changed status may have refreshed the health record."""
        lease, mark, _ = renewal
        if before_visit and mark is self._seen_now:
            return
        if mark.time is not None and self._health is not None:
            # what observe_lease would do: a noted lease was a renewal against the saved one, which
            # only settling changes while the node rests
            health = self._health.healths.get(name)
            if health is not None:
                health.lease = lease
                health.probe_timestamp = mark.time

    def settle_renewals(self) -> None:
        """Apply every noted renewal whose pass has begun (health records are then as a pass
        visiting every node leaves them)."""
        self._ungroup_all()
        seen = [(name, r) for name, r in self.renewals.items() if r[1].time is not None]
        for name, renewal in seen:
            del self.renewals[name]  # in place: the lease handler holds this dict
            self._settle(name, renewal)

    def clear(self, before_visit: bool = False) -> None:
        """Every node wakes (and pending signals are moot: all of them will be visited);
        `before_visit`: at the start of a pass that visits them."""
        self._ungroup_all()
        for name, renewal in self.renewals.items():
            self._settle(name, renewal, before_visit)
        self._woken.extend(self.deadlines)
        self.renewals.clear()
        self.requeues.clear()
        self.requeue_changes += 1
        self.deadlines.clear()
        self.counts.clear()
        self.unready_counts.clear()
        self._times.clear()
        self._due.clear()
        self.node_changed.clear()
        self.lease_changed.clear()

    def take_woken(self) -> list[str]:
        woken, self._woken = self._woken, []
        return woken

    def zone_counts(self) -> dict[str, tuple[int, int]]:
        """zone → (resting Ready nodes, resting nodes) counted there."""
        counts = {zone: (n, n) for zone, n in self.counts.items()}
        for zone, n in self.unready_counts.items():
            ready, size = counts.get(zone, (0, 0))
            counts[zone] = (ready, size + n)
        return counts

    # signals ---------------------------------------------------------------------------------

    def lease_updated(self, name: str, lease: JSON) -> None:
        """Lease informer update: note a renewal of a resting Ready node (see the module doc);
        a not-Ready resting node wakes at the next pass."""
        self.lease_handler()(None, lease)

    def lease_handler(self) -> Callable[[JSON | None, JSON], None]:
        """`lease_updated` as an informer on_update handler: what `lease_group_handler` does with
        the one pair (a status round renews lease after lease, one write each)."""
        note = self._renewals_noter()

        def on_update(_old: JSON | None, lease: JSON) -> None:
            name = (lease.get("metadata") or {}).get("name") or ""
            note((name,), (lease,), ((lease.get("spec") or {}).get("renewTime") or None,))

        return on_update

    def lease_group_handler(self) -> Callable[[Sequence[tuple[JSON | None, JSON]]], None]:
        """`lease_updated` for each (old, new) pair of a group of lease updates, in order, as an
        informer on_update_many handler."""
        note = self._renewals_noter()

        def on_update_many(pairs: Sequence[tuple[JSON | None, JSON]]) -> None:
            leases = [lease for _, lease in pairs]
            note(
                [(lease.get("metadata") or {}).get("name") or "" for lease in leases],
                leases,
                [(lease.get("spec") or {}).get("renewTime") or None for lease in leases],
            )

        return on_update_many

    def lease_field_handler(
        self,
    ) -> Callable[[list[tuple[str, str]], list[JSON], list[JSON], tuple[str, str], object], None]:
        """`lease_group_handler` as an informer on_field_updates handler: a group of renewals
        that set spec.renewTime to one text is noted from the keys (whose names are the leases'
        metadata.name) and that text, without reading the leases."""
        many = self.lease_group_handler()
        note = self._renewals_noter()
        health = self._health
        # (groups only where note inlines the tracker: its records are what grouping reproduces)
        at_least = self._group_at_least if type(health) is NodeHealthTracker else math.inf
        note_group, group_noted = self._note_group, self._group_noted
        # the names of the last keys list seen: an informer hands a run's one list round after round
        last: list[Any] = [None, []]

        def on_field_updates(
            keys: list[tuple[str, str]],
            olds: list[JSON],
            news: list[JSON],
            path: tuple[str, str],
            value: object,
        ) -> None:
            if path != RENEW_TIME or type(value) is not str:
                many(list(zip(olds, news, strict=True)))
                return
            if keys is last[0]:
                names: list[str] = last[1]
            else:
                names = list(map(_second, keys))
                last[:] = [keys, names] if len(names) >= at_least else [None, []]
            if value and len(names) >= at_least:
                if not note_group(names, news, value):
                    note(names, news, repeat(value))
                    group_noted(names, news)
                return
            note(names, news, repeat(value or None))

        return on_field_updates

    def _renewals_noter(self) -> Callable[[Iterable[str], Iterable[JSON], Iterable[str | None]], None]:
        """`lease_updated` for each (name, lease, lease's renewTime or None) of a group of lease
        updates, in order: ~1.2 M renewals an hour at 5,000 nodes, so everything is inlined
        (_settle included) and a lease's renewTimes are compared once per group when they are the
        group's usual ones."""
        deadlines, renewals, lease_changed = self.deadlines, self.renewals, self.lease_changed
        grouped, ungroup = self.grouped, self._ungroup
        health = self._health
        healths = health.healths if health is not None else {}
        would_observe = health.would_observe if health is not None else None
        # NodeHealthTracker.would_observe is inlined below (renewTimes compared through the same
        # memo as the noted ones); a tracker of another class is asked itself
        plain_tracker = type(health) is NodeHealthTracker

        def note(names: Iterable[str], leases: Iterable[JSON], newers: Iterable[str | None]) -> None:
            next_pass = self._next_pass  # no pass begins while handlers run
            # the last comparison of renewTimes: a group shares them (texts of one instant)
            last_newer: str | None = None
            last_older: str | None = None
            last_later = False
            for name, lease, newer in zip(names, leases, newers, strict=False):  # newers may repeat
                entry = deadlines.get(name)
                if entry is None:
                    continue  # a visited node sees its lease at the visit
                if not entry[2] or would_observe is None:
                    lease_changed.add(name)
                    continue
                if grouped and name in grouped:
                    ungroup(name)  # noted node by node from now on
                # replaced in place when re-noted (cheaper than pop and insert; nothing reads
                # the renewals in order)
                noted = renewals.get(name)
                if noted is not None:
                    older = noted[2]
                    if newer is last_newer and older is last_older:
                        later = last_later
                    else:
                        later = last_later = renewed_after(newer, older)
                        last_newer, last_older = newer, older
                    seen_at = noted[1].time
                    if seen_at is not None:
                        # a pass has seen the noted lease: it is the saved lease now (_settle)
                        saved = healths.get(name)
                        if saved is not None:
                            saved.lease = noted[0]
                            saved.probe_timestamp = seen_at
                    if later:
                        # (when no pass has seen the noted lease, the next pass sees only this
                        # later one, which it counts as renewed as it would have counted the
                        # noted one) noted in the same record: none made per renewal
                        noted[0] = lease
                        noted[1] = next_pass
                        noted[2] = newer
                        continue
                    del renewals[name]
                    if seen_at is not None:
                        continue
                if not plain_tracker:
                    if would_observe(name, lease):
                        renewals[name] = [lease, next_pass, newer]
                    continue
                saved = healths.get(name)
                if saved is None or lease is None:
                    continue
                saved_lease = saved.lease
                if saved_lease is None:
                    renewals[name] = [lease, next_pass, newer]
                    continue
                older = renew_text(saved_lease)
                if newer is last_newer and older is last_older:
                    later = last_later
                else:
                    later = last_later = renewed_after(newer, older)
                    last_newer, last_older = newer, older
                if later:
                    renewals[name] = [lease, next_pass, newer]

        return note

    def lease_replaced(self, name: str) -> None:
        """Lease informer add or delete: the node wakes at the next pass, which sees no noted
        lease (the renewals earlier passes saw stand)."""
        renewal = self.renewals.pop(name, None)
        if renewal is None and self.grouped:
            renewal = self._take_grouped(name)
        if renewal is not None:
            self._settle(name, renewal)
        self.lease_changed.add(name)

    def wake_changed_nodes(self) -> None:
        """At the start of a pass: wake the nodes whose object or lease changed."""
        for name in self.node_changed:
            self.wake(name, True)
        self.node_changed.clear()
        for name in self.lease_changed:
            self.wake(name, True)
        self.lease_changed.clear()
