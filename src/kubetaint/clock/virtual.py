"""A deterministic discrete-event clock: a heap keyed by (time, priority, sequence).

Callbacks scheduled for the same instant run by priority (lower first), then FIFO. Time only moves
when the owner runs events (`run_until`, `advance`, `step`), so hours pass in milliseconds.
"""

from __future__ import annotations

import heapq

from kubetaint.clock.base import Callback

#: Default start of virtual time: 2026-01-01T00:00:00Z.
DEFAULT_EPOCH = 1767225600.0


class VirtualHandle:
    """A timer on a VirtualClock."""

    __slots__ = ("_callback", "_cancelled", "_when")

    def __init__(self, when: float, callback: Callback) -> None:
        self._when = when
        self._callback: Callback | None = callback
        self._cancelled = False

    @property
    def when(self) -> float:
        return self._when

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        self._cancelled = True
        self._callback = None

    def _run(self) -> None:
        callback = self._callback
        self._callback = None
        if callback is not None and not self._cancelled:
            callback()


class VirtualClock:
    """Discrete-event clock; `now()` starts at `start` (seconds since the epoch)."""

    def __init__(self, start: float = DEFAULT_EPOCH) -> None:
        self._now = float(start)
        self.start = float(start)
        self._heap: list[tuple[float, int, int, VirtualHandle]] = []
        self._sequence = 0

    def now(self) -> float:
        return self._now

    def elapsed(self) -> float:
        """Seconds since the clock started."""
        return self._now - self.start

    def call_at(self, when: float, callback: Callback, *, priority: int = 0) -> VirtualHandle:
        handle = VirtualHandle(max(when, self._now), callback)
        self._sequence += 1
        heapq.heappush(self._heap, (handle.when, priority, self._sequence, handle))
        return handle

    def call_later(self, delay: float, callback: Callback, *, priority: int = 0) -> VirtualHandle:
        return self.call_at(self._now + max(delay, 0.0), callback, priority=priority)

    def call_soon(self, callback: Callback, *, priority: int = 0) -> VirtualHandle:
        return self.call_at(self._now, callback, priority=priority)

    def next_time(self) -> float | None:
        """When the next live callback is due, or None when nothing is scheduled."""
        while self._heap and self._heap[0][3].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def step(self) -> bool:
        """Run the next due callback (moving time to it); False when nothing is scheduled."""
        if self.next_time() is None:
            return False
        when, _, _, handle = heapq.heappop(self._heap)
        self._now = when
        handle._run()
        return True

    def run_until(self, when: float) -> None:
        """Run every callback due at or before `when`, then set the time to `when`."""
        while True:
            due = self.next_time()
            if due is None or due > when:
                break
            self.step()
        self._now = max(self._now, when)

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`, running everything due on the way."""
        self.run_until(self._now + seconds)

    def run_pending(self) -> None:
        """Run everything due now (including callbacks those schedule for now)."""
        self.run_until(self._now)
