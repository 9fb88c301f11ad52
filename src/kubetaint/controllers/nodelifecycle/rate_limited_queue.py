"""RateLimitedTimedQueue: the per-zone queue of nodes to taint NoExecute (mirrors
pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go, and the token bucket of client-go
util/flowcontrol it is limited by).

A unique-value priority queue ordered by ProcessAt (Go's container/heap algorithm, so ties break
as upstream's do), rate limited by a token bucket with burst 1 (EvictionRateLimiterBurst). A value
stays in the set after it was processed, so it is not queued again until Remove is called.
Times are integer nanoseconds.

The token bucket (NewTokenBucketRateLimiter over golang.org/x/time/rate's Limiter.AllowN): tokens
accrue continuously at `qps` (a float32, as the controller's flags are), capped at `burst`; the
bucket starts full; a refused request changes nothing.

A zone outage re-queues every untainted not-Ready node at every monitor pass; `RequeueLog` (at the
end) logs such whole passes instead of moving the heap (off in reference mode).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import itemgetter
from typing import Literal

from kubetaint.speed.reference import reference_mode

#: NodeEvictionPeriod: how often doNoExecuteTaintingPass runs (seconds).
NODE_EVICTION_PERIOD = 0.1
#: EvictionRateLimiterBurst.
EVICTION_RATE_LIMITER_BURST = 1
NANOS = 1_000_000_000

# the token bucket (client-go util/flowcontrol) ------------------------------------------------


def float32(value: float) -> float:
    """The float32 nearest `value` (the controller's QPS flags are float32)."""
    return float(struct.unpack("f", struct.pack("f", value))[0])


def to_nanos(seconds: float) -> int:
    """Clock seconds → integer nanoseconds, rounded to the microsecond (virtual clock times are
    exact to well under a microsecond, so this removes float noise)."""
    return round(seconds * 1_000_000) * 1000


def _seconds(nanos: int) -> float:
    """time.Duration.Seconds()."""
    whole, frac = divmod(nanos, NANOS)
    return whole + frac / 1e9


class TokenBucketRateLimiter:
    """flowcontrol.NewTokenBucketRateLimiter(qps, burst)."""

    def __init__(self, qps: float, burst: int) -> None:
        self._qps = float32(qps)
        self._burst = burst
        self._tokens = 0.0
        self._last: int | None = None  # Go's zero time: the first request sees a full bucket

    def qps(self) -> float:
        return self._qps

    def _advance(self, now: int) -> float:
        if self._last is None:
            return float(self._burst)
        last = min(self._last, now)
        tokens = self._tokens + _seconds(now - last) * self._qps
        return min(tokens, float(self._burst))

    def would_accept(self, now: int) -> bool:
        """Whether try_accept at `now` would succeed (without taking a token)."""
        tokens = self._advance(now) - 1
        if tokens >= 0:
            return self._burst >= 1
        wait = int(NANOS * (-tokens / self._qps))  # durationFromTokens truncates
        return self._burst >= 1 and wait <= 0

    def try_accept(self, now: int) -> bool:
        if not self.would_accept(now):
            return False
        self._tokens = self._advance(now) - 1
        self._last = now
        return True

    def next_accept(self, now: int) -> int:
        """A lower bound (within a microsecond) of the first time >= now that would be accepted."""
        missing = 1 - self._advance(now)
        if missing <= 0:
            return now
        return now + max(0, math.floor(missing / self._qps * NANOS) - 1000)


class NeverRateLimiter:
    """flowcontrol.NewFakeNeverRateLimiter: refuses every request; QPS 0."""

    def qps(self) -> float:
        return 0.0

    def would_accept(self, now: int) -> bool:
        return False

    def try_accept(self, now: int) -> bool:
        return False

    def next_accept(self, now: int) -> int | None:
        return None


RateLimiter = TokenBucketRateLimiter | NeverRateLimiter


# the queue (scheduler/rate_limited_queue.go) -------------------------------------------------


@dataclass(eq=False, slots=True)
class TimedValue:
    value: str
    uid: str
    added_at: int
    process_at: int


#: ActionFunc: (value) → (done, retry wait in nanoseconds).
ActionFunc = Callable[[TimedValue], tuple[bool, int]]


class UniqueQueue:
    """A heap of TimedValues by process_at plus the set of values ever added and not removed.

    Whole passes of re-queues and the pops of their heads are logged rather than applied while
    nothing needs the heap itself (`RequeueLog`); `lazy=False` (the default in reference mode)
    applies everything at once."""

    def __init__(self, lazy: bool | None = None) -> None:
        self._heap: list[TimedValue] = []
        self.values: set[str] = set()
        #: value → its position in the heap (kept current by every swap).
        self._slots: dict[str, int] = {}
        if lazy is None:
            lazy = not reference_mode()
        self._log: RequeueLog | None = RequeueLog() if lazy else None

    @property
    def heap(self) -> list[TimedValue]:
        """The heap, with every logged operation applied."""
        self._settle()
        return self._heap

    @property
    def _positions(self) -> dict[str, int]:
        self._settle()
        return self._slots

    def __len__(self) -> int:
        log = self._log
        return log.size if log else len(self._heap)

    def _settle(self) -> None:
        """Apply the logged operations in order."""
        log = self._log
        if not log:
            return
        for item, now in log.take():
            if now == POP:
                assert isinstance(item, str)
                self._remove_from_heap(item)
            else:
                assert isinstance(item, list)
                self._requeue_items(item, now)

    def _index(self, value: str) -> int | None:
        return self._slots.get(value)

    # Go container/heap --------------------------------------------------------------------

    def _less(self, i: int, j: int) -> bool:
        return self._heap[i].process_at < self._heap[j].process_at

    def _swap(self, i: int, j: int) -> None:
        heap = self._heap
        heap[i], heap[j] = heap[j], heap[i]
        self._slots[heap[i].value] = i
        self._slots[heap[j].value] = j

    def _up(self, j: int) -> None:
        while j > 0:
            i = (j - 1) // 2
            if not self._less(j, i):
                break
            self._swap(i, j)
            j = i

    def _down(self, i0: int, n: int) -> bool:
        i = i0
        while True:
            j1 = 2 * i + 1
            if j1 >= n:
                break
            j = j1
            j2 = j1 + 1
            if j2 < n and self._less(j2, j1):
                j = j2
            if not self._less(j, i):
                break
            self._swap(i, j)
            i = j
        return i > i0

    def _push(self, value: TimedValue) -> None:
        self._heap.append(value)
        self._slots[value.value] = len(self._heap) - 1
        self._up(len(self._heap) - 1)

    def _remove_at(self, i: int) -> TimedValue:
        n = len(self._heap) - 1
        if n != i:
            self._swap(i, n)
            if not self._down(i, n):
                self._up(i)
        removed = self._heap.pop()
        del self._slots[removed.value]
        return removed

    # UniqueQueue ----------------------------------------------------------------------------

    def add(self, value: TimedValue) -> bool:
        if value.value in self.values:
            return False
        self._settle()
        self._push(value)
        self.values.add(value.value)
        return True

    def replace(self, value: TimedValue) -> bool:
        self._settle()
        i = self._index(value.value)
        if i is None:
            return False
        self._remove_at(i)
        self._push(value)
        return True

    def remove_from_queue(self, value: str) -> bool:
        if value not in self.values:
            return False
        log = self._log
        if log:
            head = log.head()
            if head is not None and head is not False and head[0] == value:  # the head is taken: log it
                log.log_pop(value)
                return True
            self._settle()
        return self._remove_from_heap(value)

    def _remove_from_heap(self, value: str) -> bool:
        i = self._index(value)
        if i is None:
            return False
        self._remove_at(i)
        return True

    def remove(self, value: str) -> bool:
        if value not in self.values:
            return False
        self._settle()
        self.values.discard(value)
        i = self._index(value)
        if i is not None:
            self._remove_at(i)
        return True

    def head(self) -> TimedValue | None:
        log = self._log
        if log:
            logged = log.head()
            if logged is None:
                return None
            if logged is not False:
                return TimedValue(logged[0], logged[1], log.at, log.at)
            self._settle()
        if not self._heap:
            return None
        head = self._heap[0]
        return TimedValue(head.value, head.uid, head.added_at, head.process_at)

    def clear(self) -> None:
        if self._log is not None:
            self._log.take()
        self._heap.clear()
        self.values.clear()
        self._slots.clear()

    def requeue_many(self, items: Iterable[tuple[str, str]], now: int) -> None:
        """remove(value) then add(value, uid, now) for each (value, uid) in turn (logged when it
        goes on or begins a pass, see `RequeueLog`)."""
        batch = list(items)
        if not batch:
            return
        log = self._log
        if log is not None and log.log_requeues(batch, now, self._heap, self._slots):
            return
        self._settle()
        self._requeue_items(batch, now)

    def _requeue_items(self, items: list[tuple[str, str]], now: int) -> None:
        """requeue_many applied to the heap, with the very same heap moves as remove then add:
        the slot the removed entry leaves last is the one the new entry is pushed into, so it
        goes there directly, and the removed entry (the heap's own, never handed out: head()
        copies) is reused as the new one."""
        positions, heap = self._slots, self._heap
        for value, uid in items:
            i = positions.get(value)
            if i is None:
                if value in self.values:
                    self.values.discard(value)
                self._push(TimedValue(value, uid, now, now))
                self.values.add(value)
                continue
            entry = heap[i]
            n = len(heap) - 1
            if n != i:
                # Swap(i, n), then down(i, n) or else up(i), moving a hole instead of swapping
                # (each comparison is against the moved entry either way)
                moved = heap[n]
                key = moved.process_at
                j = i
                child = 2 * j + 1
                while child < n:
                    below = heap[child]
                    right = child + 1
                    if right < n:
                        other = heap[right]
                        if other.process_at < below.process_at:
                            below, child = other, right
                    if not below.process_at < key:
                        break
                    heap[j] = below
                    positions[below.value] = j
                    j = child
                    child = 2 * j + 1
                if j == i and j > 0 and key < heap[(j - 1) >> 1].process_at:
                    j = _hole_up(heap, positions, j, key)
                heap[j] = moved
                positions[moved.value] = j
            # the removed entry's slot n is the one the new entry is pushed into: it sifts up (Push)
            entry.uid, entry.added_at, entry.process_at = uid, now, now
            j = n
            if n > 0 and now < heap[(n - 1) >> 1].process_at:
                j = _hole_up(heap, positions, n, now)
            heap[j] = entry
            positions[value] = j


class RateLimitedTimedQueue:
    """NewRateLimitedTimedQueue(NewTokenBucketRateLimiter(qps, 1))."""

    def __init__(self, qps: float) -> None:
        self.queue = UniqueQueue()
        self.limiter: RateLimiter = (
            TokenBucketRateLimiter(qps, EVICTION_RATE_LIMITER_BURST) if qps > 0 else NeverRateLimiter()
        )

    def try_(self, now: int, fn: ActionFunc) -> None:
        """Try: process due values while the limiter accepts (each attempt takes a token)."""
        value = self.queue.head()
        while value is not None:
            if not self.limiter.try_accept(now):
                break
            if now < value.process_at:
                break
            done, wait = fn(value)
            if not done:
                value.process_at = now + wait + 1
                self.queue.replace(value)
            else:
                self.queue.remove_from_queue(value.value)
            value = self.queue.head()

    def add(self, value: str, uid: str, now: int) -> bool:
        if value in self.queue.values:  # already queued: nothing to build or change
            return False
        return self.queue.add(TimedValue(value, uid, now, now))

    def requeue(self, value: str, uid: str, now: int) -> bool:
        """remove(value) then add(value, uid, now). (markNodeForTainting does this for every
        untainted not-Ready node each pass.)"""
        self.requeue_many(((value, uid),), now)
        return True

    def requeue_many(self, items: Iterable[tuple[str, str]], now: int) -> None:
        """requeue(value, uid, now) for each (value, uid) in turn."""
        self.queue.requeue_many(items, now)

    def remove(self, value: str) -> bool:
        return self.queue.remove(value)

    def clear(self) -> None:
        self.queue.clear()

    def swap_limiter(self, qps: float, now: int) -> None:
        """SwapLimiter: a never-accepting limiter for qps <= 0, else a fresh bucket that starts
        empty when the old one was exhausted."""
        new_qps = float32(qps)
        if self.limiter.qps() == new_qps:
            return
        new_limiter: RateLimiter
        if new_qps <= 0:
            new_limiter = NeverRateLimiter()
        else:
            new_limiter = TokenBucketRateLimiter(new_qps, EVICTION_RATE_LIMITER_BURST)
            if not self.limiter.try_accept(now):
                new_limiter.try_accept(now)
        self.limiter = new_limiter

    @property
    def pending(self) -> bool:
        """Whether Try has anything to look at."""
        return len(self.queue) > 0

    def next_try(self, now: int) -> int | None:
        """Lower bound of the next time a Try could change anything (None: never, until a change)."""
        if not len(self.queue):
            return None
        return self.limiter.next_accept(now)


def _hole_up(heap: list[TimedValue], positions: dict[str, int], j: int, key: int) -> int:
    """Move the hole at `j` up past every parent that an entry processed at `key` sorts before
    (container/heap's up(), moving the hole instead of swapping); the slot where it stops."""
    while j > 0:
        parent = (j - 1) // 2
        above = heap[parent]
        if not key < above.process_at:
            break
        heap[j] = above
        positions[above.value] = j
        j = parent
    return j


# the logged re-queues --------------------------------------------------------------------------

#: A logged operation: (items, now) re-queues the (value, uid) items at `now`; (value, POP) takes
#: `value` out of the heap (remove_from_queue).
POP = -1
Op = tuple[list[tuple[str, str]] | str, int]

_first = itemgetter(0)


class RequeueLog:
    """Speeds up a zone outage's re-queues (markNodeForTainting's Remove, then Add, of every
    untainted not-Ready node at every pass) by logging them instead of moving the heap; off in
    reference mode (`KUBETAINT_REFERENCE=1`) or with `UniqueQueue(lazy=False)`.

    The re-queues and head pops a zone's queue has not applied to its heap yet, and what its head
    is meanwhile (no upstream counterpart). While a zone is out, every monitor pass re-queues each
    of its untainted Unknown nodes (Remove, then Add at the pass's time), and between passes Try
    takes at most the head. The heap moves of a pass depend on the whole heap, but its head after
    the pass does not: when a pass re-queues every value in the heap, each once, at a time later
    than every time in it, the values not re-queued yet always sit above the re-queued ones (a heap
    keeps smaller times above larger ones), so the last to go is at the root; the one re-queued
    before it fills its place (an equal time never sifts) and the last re-queued lands in the last
    slot. So the head is the value re-queued last but one, and once that is taken (the last slot
    moves to the root, equal times again) the value re-queued last.

    The queue logs such passes and pops instead of applying them and answers head() from the log;
    anything else (another head, a different operation, a pass that is not whole) first applies the
    log in order, with exactly the moves that applying it at once would have made.
    """

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
