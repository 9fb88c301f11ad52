"""A memory store's bounded change history: the events of its last `bound` updates, oldest first,
for lists at an older resourceVersion and watches resumed from one. A field write's group of
updates (`FieldWriteGroup`: a round of lease renewals) stands in it as one entry with the number
of its last updates it holds, so recording a group costs the same whatever its size, and the bound
drops the oldest updates first, a group's partly.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from itertools import islice

from kubetaint.store.changes import FieldWriteGroup, WatchEvent


class _Run:
    """The last `count` updates of `group`, as a history entry."""

    __slots__ = ("count", "group")

    def __init__(self, group: FieldWriteGroup, count: int) -> None:
        self.group = group
        self.count = count


class WatchHistory:
    """The events of the last `bound` updates (None: every update), oldest first (iterating it
    gives them); see the module's description."""

    __slots__ = ("_entries", "_size", "bound")

    def __init__(self, bound: int | None) -> None:
        self.bound = bound
        self._entries: deque[WatchEvent | _Run] = deque()
        self._size = 0  # the updates held

    def __len__(self) -> int:
        return self._size

    def append(self, event: WatchEvent) -> None:
        """Record one update's event."""
        self._entries.append(event)
        self._size += 1
        if self.bound is not None and self._size > self.bound:
            self._trim()

    def extend(self, events: Sequence[WatchEvent]) -> None:
        """Record the events of several updates, in order."""
        entries, bound = self._entries, self.bound
        if bound is not None and len(events) >= bound:  # (the history becomes their last ones)
            entries.clear()
            entries.extend(islice(events, len(events) - bound, None))
            self._size = bound
            return
        entries.extend(events)
        self._size += len(events)
        if bound is not None and self._size > bound:
            self._trim()

    def add_group(self, group: FieldWriteGroup) -> None:
        """Record `group`'s updates (as `extend(group.events())` would, without building them)."""
        count, bound = len(group.news), self.bound
        if bound is not None and count >= bound:  # (the history becomes its last ones)
            self._entries.clear()
            if bound:
                self._entries.append(_Run(group, bound))
            self._size = bound
        elif count:
            self._entries.append(_Run(group, count))
            self._size += count
            if bound is not None and self._size > bound:
                self._trim()

    def _trim(self) -> None:
        """Drop the oldest updates down to the bound."""
        assert self.bound is not None
        entries, excess = self._entries, self._size - self.bound
        while excess > 0:
            oldest = entries[0]
            if isinstance(oldest, _Run):
                if oldest.count > excess:
                    oldest.count -= excess
                    excess = 0
                    break
                excess -= oldest.count
            else:
                excess -= 1
            entries.popleft()
        self._size = self.bound

    def reach(self, group: FieldWriteGroup) -> tuple[int, int]:
        """How many of `group`'s (last) updates the history holds (0: none), and how many updates
        it holds after them. The entries after it are looked at, newest first."""
        first_rv, after = group.first_rv, 0
        for entry in reversed(self._entries):
            if isinstance(entry, _Run):
                if entry.group is group:
                    return entry.count, after
                if entry.group.first_rv < first_rv:
                    break
                after += entry.count
            elif entry.resource_version < first_rv:
                break
            else:
                after += 1
        return 0, after

    def oldest_version(self) -> int | None:
        """The resourceVersion of the oldest update held (None: none is)."""
        if not self._entries:
            return None
        oldest = self._entries[0]
        if isinstance(oldest, _Run):
            group = oldest.group
            return group.first_rv + len(group.news) - oldest.count
        return oldest.resource_version

    def __iter__(self) -> Iterator[WatchEvent]:
        return self.since(-1)

    def since(self, since: int) -> Iterator[WatchEvent]:
        """The events of the updates after resourceVersion `since`, oldest first."""
        for entry in list(self._entries):
            if isinstance(entry, _Run):
                group = entry.group
                # the run's updates after `since`: the group's last ones
                wanted = min(entry.count, group.first_rv + len(group.news) - 1 - since)
                if wanted > 0:
                    yield from group.tail(wanted)
            elif entry.resource_version > since:
                yield entry
