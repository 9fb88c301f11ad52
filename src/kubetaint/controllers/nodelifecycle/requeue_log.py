"""Speeds up a zone outage's re-queues (markNodeForTainting's Remove, then Add, of every untainted
not-Ready node at every pass) by logging them instead of moving the heap; off in reference mode
(`KUBETAINT_REFERENCE=1`) or with `UniqueQueue(lazy=False)`.

The re-queues and head pops a zone's tainting queue has not applied to its heap yet, and what
its head is meanwhile (bookkeeping for the UniqueQueue of
pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go; no upstream counterpart).

While a zone is out, every monitor pass re-queues each of its untainted Unknown nodes (Remove,
then Add at the pass's time), and between passes Try takes at most the head. The heap moves of a
pass depend on the whole heap, but its head after the pass does not: when a pass re-queues every
value in the heap, each once, at a time later than every time in it, the values not re-queued yet
always sit above the re-queued ones (a heap keeps smaller times above larger ones), so the last
to go is at the root; the one re-queued before it fills its place (an equal time never sifts) and
the last re-queued lands in the last slot. So the head is the value re-queued last but one, and
once that is taken (the last slot moves to the root, equal times again) the value re-queued last.

The queue logs such passes and pops instead of applying them and answers head() from the log;
anything else (another head, a different operation, a pass that is not whole) first applies the
log in order, with exactly the moves that applying it at once would have made.
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from kubetaint.controllers.nodelifecycle.rate_limited_queue import TimedValue

#: A logged operation: (items, now) re-queues the (value, uid) items at `now`; (value, POP) takes
#: `value` out of the heap (remove_from_queue).
POP = -1
Op = tuple[list[tuple[str, str]] | str, int]

_first = itemgetter(0)


class RequeueLog:
    """The pending operations of one queue and the pass they end with."""

    __slots__ = ("at", "count", "last", "ok", "ops", "popped", "pops", "prev", "seen", "size", "start_size")

    def __init__(self) -> None:
        self.ops: list[Op] = []
        #: the number of values in the heap once the log is applied
        self.size = 0
        #: values the logged pops take out of the heap
        self.popped: set[str] = set()
        #: the last pass: its time, values, item count, the heap size it began with
        self.at = 0
        self.seen: set[str] = set()
        self.count = 0
        self.start_size = 0
        #: whether every time in the heap was earlier than `at` when the pass began
        self.ok = False
        #: the pass's last two items (prev is None for a single item) and the pops after it
        self.prev: tuple[str, str] | None = None
        self.last: tuple[str, str] | None = None
        self.pops = 0

    def __bool__(self) -> bool:
        return bool(self.ops)

    def take(self) -> list[Op]:
        """The logged operations, in order; the log is empty afterwards."""
        ops = self.ops
        self.ops, self.popped = [], set()
        return ops

    def whole(self) -> bool:
        """Whether the last pass re-queued every value of the heap once, later than all their
        times."""
        return self.ok and self.count == self.start_size and self.count > 0

    def log_requeues(
        self, batch: list[tuple[str, str]], now: int, heap: list[TimedValue], slots: dict[str, int]
    ) -> bool:
        """Log the re-queue of `batch` at `now`; False (nothing logged) unless its values are
        distinct and all in the heap (`heap` and its `slots` as applied, less the popped values)."""
        names = set(map(_first, batch))
        if len(names) != len(batch) or not names <= slots.keys():
            return False
        popped = self.popped
        if popped and not names.isdisjoint(popped):
            return False
        if self.ops and self.pops == 0 and now == self.at:  # the pass goes on
            if not names.isdisjoint(self.seen):
                return False
            self.seen |= names
        else:  # a new pass
            if self.ops:
                ok = self.whole() and now > self.at  # after a whole pass every time is `at`
            else:
                ok = all(v.process_at < now for v in heap)
                self.size = len(heap)
            self.at, self.seen, self.count, self.ok = now, names, 0, ok
            self.start_size, self.pops, self.prev, self.last = self.size, 0, None, None
        self.count += len(batch)
        if len(batch) > 1:
            self.prev, self.last = batch[-2], batch[-1]
        else:
            self.prev, self.last = self.last, batch[0]
        self.ops.append((batch, now))
        return True

    def head(self) -> tuple[str, str] | Literal[False] | None:
        """(value, uid) at the head after the logged operations (re-queued at `at`), None for an
        empty heap, False when the log does not tell."""
        if not self.whole():
            return False
        if self.pops == 0:
            return self.prev if self.count > 1 else self.last
        if self.pops == 1:
            return self.last if self.count > 1 else None
        return False

    def log_pop(self, value: str) -> None:
        """Log taking `value` (the head) out of the heap."""
        self.ops.append((value, POP))
        self.popped.add(value)
        self.pops += 1
        self.size -= 1
