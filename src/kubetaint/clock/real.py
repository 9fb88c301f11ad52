"""The real clock: wall time, with timers on an asyncio event loop (for `kubetaint up`)."""

from __future__ import annotations

import asyncio
import time

from kubetaint.clock.base import Callback
from kubetaint.clock.slices import SliceTimer


class RealHandle:
    """A timer on the asyncio loop."""

    __slots__ = ("_handle", "_when")

    def __init__(self, when: float, handle: asyncio.TimerHandle | asyncio.Handle) -> None:
        self._when = when
        self._handle = handle

    @property
    def when(self) -> float:
        return self._when

    @property
    def cancelled(self) -> bool:
        return self._handle.cancelled()

    def cancel(self) -> None:
        self._handle.cancel()


class RealClock:
    """Wall-clock time; timers run on `loop` (the running loop when not given).

    Priorities only order callbacks due at the same instant on a VirtualClock; the asyncio loop
    already runs same-time callbacks FIFO, which is all a live server needs. Each callback gets
    a time slice (`clock.slices`): the loop serves requests too.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop
        self._slice = SliceTimer()

    def _run(self, callback: Callback) -> None:
        self._slice.begin()
        callback()

    def slice_over(self) -> bool:
        """Whether the running callback has kept the loop for its whole slice."""
        return self._slice.over()

    def _get_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    def now(self) -> float:
        return time.time()

    def call_at(self, when: float, callback: Callback, *, priority: int = 0) -> RealHandle:
        return self.call_later(when - self.now(), callback, priority=priority)

    def call_later(self, delay: float, callback: Callback, *, priority: int = 0) -> RealHandle:
        loop = self._get_loop()
        handle = loop.call_later(max(delay, 0.0), self._run, callback)
        return RealHandle(self.now() + max(delay, 0.0), handle)

    def call_soon(self, callback: Callback, *, priority: int = 0) -> RealHandle:
        loop = self._get_loop()
        return RealHandle(self.now(), loop.call_soon(self._run, callback))
