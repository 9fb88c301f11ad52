"""RateLimitedTimedQueue: the per-zone queue of nodes to taint NoExecute
(mirrors pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go).

A unique-value priority queue ordered by ProcessAt (Go's container/heap algorithm, so ties break
as upstream's do), rate limited by a token bucket with burst 1 (EvictionRateLimiterBurst). A value
stays in the set after it was processed, so it is not queued again until Remove is called.
Times are integer nanoseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kubetaint.controllers.nodelifecycle.rate_limiter import (
    NeverRateLimiter,
    RateLimiter,
    TokenBucketRateLimiter,
    float32,
)
from kubetaint.controllers.nodelifecycle.requeue_log import POP, RequeueLog
from kubetaint.speed.reference import reference_mode

#: NodeEvictionPeriod: how often doNoExecuteTaintingPass runs (seconds).
NODE_EVICTION_PERIOD = 0.1
#: EvictionRateLimiterBurst.
EVICTION_RATE_LIMITER_BURST = 1


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
    nothing needs the heap itself (see `.requeue_log`); `lazy=False` (the default in reference
    mode) applies everything at once."""

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
        goes on or begins a pass, see `.requeue_log`)."""
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
