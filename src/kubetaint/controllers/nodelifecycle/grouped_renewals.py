"""A heartbeat group's lease renewals noted as one record (bookkeeping for `.resting`; upstream has
no such thing: node_lifecycle_controller.go looks at every node's lease on every pass).

A hollow node pool renews the leases of a heartbeat group in one field write, the same nodes in
the same order every renewal interval. When every one of them rests Ready with a renewal noted
from the group's last write, the new write notes each of them the same way: the noted renewal
that a pass has seen goes to the node's health record, and the new lease is noted for the next
pass. `GroupNote` is that state for the whole group at once: the names, their leases, the pass
that sees them, their one renewTime text, and `prev`, an earlier record (seen by a pass) that the
members' health records have yet to take. It is applied node by node only when a node needs it
(its deadline fires, it wakes, its lease is replaced, everything is settled): its values are
those the eager per-node bookkeeping would have written, and nothing reads a resting node's
health record in between.

A *settled* record (no pass mark) stands for "no renewal noted; the health record holds this
group's leases", which is where a member is after its deadline fired with the renewal seen.
"""

from __future__ import annotations

from itertools import repeat
from operator import is_, itemgetter
from typing import TYPE_CHECKING, Any

from kubetaint.controllers.nodelifecycle.health import NodeHealthTracker, renewed_after

if TYPE_CHECKING:
    from kubetaint.controllers.nodelifecycle.resting import NotedRenewal, PassMark

JSON = dict[str, Any]
_first = itemgetter(0)


class GroupNote:
    """The noted renewals of a heartbeat group (see the module doc). `members` counts the names
    that still stand under this record: the group is whole while it equals len(names)."""

    __slots__ = ("_settled", "index", "leases", "mark", "members", "names", "newer", "prev")

    def __init__(
        self,
        names: list[str],
        index: dict[str, int],
        leases: list[JSON],
        mark: PassMark | None,
        newer: str,
        *,
        prev: GroupNote | None,
    ) -> None:
        self.names = names
        self.index = index  # name -> its position in names and leases
        self.leases = leases
        self.mark = mark  # None: a settled record
        self.newer = newer
        self.prev = prev
        self.members = len(names) if mark is not None else 0
        self._settled: GroupNote | None = None

    def lease_of(self, name: str) -> JSON:
        return self.leases[self.index[name]]

    def whole_for(self, names: list[str]) -> bool:
        """Every one of `names`, in this order, and nothing else stands under this record."""
        return self.members == len(self.names) and names == self.names

    def seen_copy(self) -> GroupNote:
        """This record as it stands, to be some later one's `prev` (members: none; no prev)."""
        copy = GroupNote(self.names, self.index, self.leases, self.mark, self.newer, prev=None)
        copy.members = 0
        return copy

    def renew(self, leases: list[JSON], mark: PassMark, newer: str, prev: GroupNote | None) -> None:
        """The whole group's next renewals noted in this record itself: every member stands
        under it still, so none has to be moved to a new one."""
        self.leases = leases
        self.mark = mark
        self.newer = newer
        self.prev = prev
        self.members = len(self.names)
        self._settled = None  # (no member stands under the twin of what it was: it was whole)

    def settled(self) -> GroupNote:
        """The settled record of this one's leases (one per record)."""
        settled = self._settled
        if settled is None:
            settled = self._settled = GroupNote(
                self.names, self.index, self.leases, None, self.newer, prev=None
            )
        return settled


class RenewalGroups:
    """RestingNodes' bookkeeping of grouped renewals (the state is RestingNodes')."""

    _health: NodeHealthTracker | None
    _next_pass: PassMark
    renewals: dict[str, NotedRenewal]
    grouped: dict[str, GroupNote]

    def _apply(self, name: str, lease: JSON, seen_at: float) -> None:
        """What `_settle` does with a renewal whose pass began at `seen_at`."""
        health = self._health.healths.get(name) if self._health is not None else None
        if health is not None:
            health.lease = lease
            health.probe_timestamp = seen_at

    def _take_grouped(self, name: str) -> NotedRenewal | None:
        """Take `name` out of its group record: its health record takes what the record deferred
        (`prev`); the node's noted renewal as a per-node record (None: none is noted)."""
        record = self.grouped.pop(name, None)
        if record is None:
            return None
        record.members -= 1
        prev = record.prev
        if prev is not None and prev.mark is not None and prev.mark.time is not None:
            self._apply(name, prev.lease_of(name), prev.mark.time)
        if record.mark is None:
            return None
        return [record.lease_of(name), record.mark, record.newer]

    def _ungroup(self, name: str) -> None:
        renewal = self._take_grouped(name)
        if renewal is not None:
            self.renewals[name] = renewal

    def _ungroup_all(self) -> None:
        for name in list(self.grouped):
            self._ungroup(name)

    def _settle_grouped(self, name: str, record: GroupNote, health: Any) -> None:
        """`wake_expired`'s settling of a grouped node whose deadline came: a renewal its pass has
        seen goes to the health record (and the node stands under the settled record, as a node
        with no noted renewal), else only what the record deferred does."""
        mark = record.mark
        if mark is not None and mark.time is not None:
            if health is not None:
                health.lease = record.lease_of(name)
                health.probe_timestamp = mark.time
            settled = record.settled()
            record.members -= 1
            settled.members += 1
            self.grouped[name] = settled
            return
        prev = record.prev
        if health is not None and prev is not None and prev.mark is not None and prev.mark.time is not None:
            health.lease = prev.lease_of(name)
            health.probe_timestamp = prev.mark.time

    def noted_renewals(self) -> dict[str, tuple[JSON, PassMark, str | None]]:
        """name → (lease, the pass that sees it first, its renewTime) of every noted renewal."""
        noted = {name: (r[0], r[1], r[2]) for name, r in self.renewals.items()}
        for name, record in self.grouped.items():
            if record.mark is not None:
                noted[name] = (record.lease_of(name), record.mark, record.newer)
        return noted

    def _note_group(self, names: list[str], leases: list[JSON], newer: str) -> bool:
        """Note a heartbeat group's renewals (all to `newer`) as one record when every node of it
        stands, in this order, under one record that `newer` is later than: what `note` would
        do node by node (settle a renewal a pass has seen, note the new one). False: nothing done."""
        grouped = self.grouped
        record = grouped.get(names[0])
        if record is None or not record.whole_for(names) or not renewed_after(newer, record.newer):
            return False
        mark = record.mark
        if mark is None:
            prev = None  # nothing noted: the health records hold the leases already
        elif mark.time is not None:
            # seen: the health records take it (a later renewal of it, not yet seen)
            prev = record.seen_copy()
        else:
            prev = record.prev  # not seen: dropped for the later one, as note replaces it
        # (the record itself takes the new state: each member stands under it already)
        record.renew(leases, self._next_pass, newer, prev)
        return True

    def _group_noted(self, names: list[str], leases: list[JSON]) -> None:
        """After `note` took a heartbeat group node by node: when it noted each node's new lease
        (in this round, none twice), the group's records become one."""
        renewals = self.renewals
        try:
            records = list(map(renewals.__getitem__, names))
        except KeyError:
            return
        if not all(map(is_, map(_first, records), leases)):
            return
        index = dict(zip(names, range(len(names)), strict=True))
        if len(index) != len(names):
            return
        first = records[0]
        record = GroupNote(names, index, leases, first[1], first[2], prev=None)
        for name in names:
            del renewals[name]
        self.grouped.update(zip(names, repeat(record)))
