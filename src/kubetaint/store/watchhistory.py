"""A memory store's bounded change history: the events of its last `bound` updates, oldest first,
for lists at an older resourceVersion and watches resumed from one. A field write's group of
updates (`FieldWriteGroup`: a round of lease renewals) stands in it as one reference to the group
per update it holds, in a row (the bound drops the oldest first): a run of `k` references to a
group holds the events of its last `k` updates, built only when read.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from itertools import repeat

from kubetaint.store.changes import FieldWriteGroup, WatchEvent


class WatchHistory:
    """The events of the last `bound` updates (None: every update), oldest first (iterating it
    gives them); see the module's description. `append(event)` and `extend(events)` record
    updates' events."""

    __slots__ = ("_entries", "append", "bound", "extend")

    def __init__(self, bound: int | None) -> None:
        self.bound = bound
        self._entries: deque[WatchEvent | FieldWriteGroup] = deque(maxlen=bound)
        self.append = self._entries.append
        self.extend = self._entries.extend

    def __len__(self) -> int:
        return len(self._entries)

    def add_group(self, group: FieldWriteGroup) -> None:
        """Record `group`'s updates (as `extend(group.events())` would, without building them)."""
        count, bound = len(group.news), self.bound
        self._entries.extend(repeat(group, count if bound is None else min(count, bound)))

    def reach(self, group: FieldWriteGroup) -> tuple[int, int]:
        """How many of `group`'s (last) updates the history holds (0: none), and how many updates
        it holds after them. The entries after it are looked at, newest first."""
        first_rv, after, held = group.first_rv, 0, 0
        for entry in reversed(self._entries):
            if entry is group:
                held += 1
            elif held:
                break
            elif isinstance(entry, FieldWriteGroup):
                if entry.first_rv < first_rv:
                    break
                after += 1
            elif entry.resource_version < first_rv:
                break
            else:
                after += 1
        return held, after

    def oldest_version(self) -> int | None:
        """The resourceVersion of the oldest update held (None: none is)."""
        first = next(self.since(-1), None)
        return first.resource_version if first is not None else None

    def __iter__(self) -> Iterator[WatchEvent]:
        return self.since(-1)

    def since(self, since: int) -> Iterator[WatchEvent]:
        """The events of the updates after resourceVersion `since`, oldest first."""
        entries = list(self._entries)
        size = len(entries)
        i = 0
        while i < size:
            entry = entries[i]
            if isinstance(entry, FieldWriteGroup):
                end = i + 1
                while end < size and entries[end] is entry:
                    end += 1
                # the run's updates after `since`: the group's last ones
                wanted = min(end - i, entry.first_rv + len(entry.news) - 1 - since)
                if wanted > 0:
                    yield from entry.tail(wanted)
                i = end
            else:
                if entry.resource_version > since:
                    yield entry
                i += 1
