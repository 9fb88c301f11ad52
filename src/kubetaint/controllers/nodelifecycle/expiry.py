"""Resting nodes whose deadline came (bookkeeping for `.resting`; the decisions stay
node_lifecycle_controller.go's): a pass wakes the nodes whose grace period ran out, and gives a
Ready node with a renewal seen by a pass its renewed deadline instead (see `.resting`).

Nodes seen at one pass share their deadline, and a hollow node pool renews whole heartbeat groups
at once (`.grouped_renewals`): at 5,000 nodes every healthy node of a zone-wide group comes due
together, once a minute, under one group record seen by a pass. Such a member is re-armed inline
(`_settle_grouped`, then the new deadline), in the bucket's order, with exactly the per-node steps.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any

from kubetaint.controllers.nodelifecycle.grouped_renewals import GroupNote

if TYPE_CHECKING:
    from kubetaint.controllers.nodelifecycle.health import NodeHealthTracker
    from kubetaint.controllers.nodelifecycle.resting import NotedRenewal


class DeadlineExpiry:
    """RestingNodes' `wake_expired` (the state is RestingNodes')."""

    _health: NodeHealthTracker | None
    _times: list[float]
    _due: dict[float, list[str]]
    deadlines: dict[str, tuple[float, str | None, bool]]
    renewals: dict[str, NotedRenewal]
    grouped: dict[str, GroupNote]
    #: whether members of a seen group record are re-armed inline (tests compare with node by node)
    group_rearm = True

    def wake(self, name: str, before_visit: bool = False) -> None:
        raise NotImplementedError

    def _settle_grouped(self, name: str, record: GroupNote, health: Any) -> None:
        raise NotImplementedError

    def wake_expired(self, now: float, grace: float) -> None:
        """Wake the nodes whose deadline is before `now` (their grace period has run out); a
        Ready node with a noted renewal is given its renewed deadline instead, when that one
        has not passed."""
        times, deadlines, renewals, due = self._times, self.deadlines, self.renewals, self._due
        grouped = self.grouped
        healths = self._health.healths if self._health is not None else {}
        # (_settle and _due_at inlined: a pass re-arms every resting node whose deadline came)
        while times and times[0] < now:
            deadline = heapq.heappop(times)
            names = due.pop(deadline)
            group = self._seen_group(names[0], now, grace) if grouped and self.group_rearm else None
            if group is not None:
                names = self._rearm_members(deadline, names, group, now, grace)
            for name in names:
                entry = deadlines.get(name)
                if entry is None or entry[0] != deadline:
                    continue  # woken or moved since
                health = healths.get(name)
                record = grouped.get(name) if grouped else None
                if record is not None:
                    self._settle_grouped(name, record, health)
                    renewal = None
                else:
                    renewal = renewals.get(name)
                if renewal is not None and renewal[1].time is not None:
                    del renewals[name]
                    if health is not None:  # what _settle does with a renewal whose pass began
                        health.lease = renewal[0]
                        health.probe_timestamp = renewal[1].time
                # the probe time may have moved since the node was laid to rest
                if health is not None and not now > health.probe_timestamp + grace:
                    renewed = health.probe_timestamp + grace
                    deadlines[name] = (renewed, entry[1], entry[2])
                    bucket = due.get(renewed)
                    if bucket is None:
                        due[renewed] = [name]
                        heapq.heappush(times, renewed)
                    else:
                        bucket.append(name)
                    continue
                self.wake(name, True)

    def _seen_group(self, name: str, now: float, grace: float) -> GroupNote | None:
        """The group record `name` stands under when a pass has seen its renewals and they give
        a deadline not passed at `now` (its members then re-arm rather than wake)."""
        record = self.grouped.get(name)
        if record is None:
            return None
        mark = record.mark
        if mark is None or mark.time is None or now > mark.time + grace:
            return None
        return record

    def _rearm_members(
        self, deadline: float, names: list[str], record: GroupNote, now: float, grace: float
    ) -> list[str]:
        """The bucket `names` due at `deadline` with the members of `record` (seen by a pass)
        re-armed, until the first name that is not one (or has no health record): for each,
        what `_settle_grouped` and the re-arm of `wake_expired` do (the renewal goes to its health
        record, the node to the settled record, its deadline to the renewal's). The names left,
        for the general loop (a stale entry is skipped here as there)."""
        deadlines, grouped, due = self.deadlines, self.grouped, self._due
        healths = self._health.healths if self._health is not None else {}
        mark = record.mark
        assert mark is not None and mark.time is not None
        seen_at = mark.time
        renewed = seen_at + grace
        leases, index = record.leases, record.index
        settled: GroupNote | None = None  # (made when a member takes it, as _settle_grouped does)
        bucket = due.get(renewed)
        done = 0
        for i, name in enumerate(names):
            entry = deadlines.get(name)
            if entry is None or entry[0] != deadline:
                continue  # woken or moved since
            health = healths.get(name)
            if health is None or grouped.get(name) is not record:
                self._moved(record, settled, done)
                return names[i:]
            if settled is None:
                settled = record.settled()
            health.lease = leases[index[name]]
            health.probe_timestamp = seen_at
            grouped[name] = settled
            done += 1
            deadlines[name] = (renewed, entry[1], entry[2])
            if bucket is None:
                bucket = due[renewed] = [name]
                heapq.heappush(self._times, renewed)
            else:
                bucket.append(name)
        self._moved(record, settled, done)
        return []

    @staticmethod
    def _moved(record: GroupNote, settled: GroupNote | None, count: int) -> None:
        """`count` members went from `record` to its `settled` record."""
        if settled is not None:
            record.members -= count
            settled.members += count
