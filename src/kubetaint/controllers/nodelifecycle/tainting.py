"""The per-zone NoExecute tainting queues and their pass (mirrors doNoExecuteTaintingPass and
zoneNoExecuteTainter in node_lifecycle_controller.go).

Upstream runs the pass every NodeEvictionPeriod (100 ms) from the controller's start. Here the
pass is only scheduled at the first grid point where some zone queue has work and its limiter
would accept: at every skipped grid point a polling pass would change nothing (a refused
TryAccept leaves the bucket untouched, an empty queue is not even tried). A pass never runs twice
at one grid point, so the results are those of polling. This holds in reference mode too: a pass
scheduled a grid step ahead would run before the other callbacks of its instant, not after them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kubetaint.clock.base import Clock, Handle
from kubetaint.controllers.nodelifecycle.rate_limited_queue import (
    NODE_EVICTION_PERIOD,
    ActionFunc,
    RateLimitedTimedQueue,
    to_nanos,
)

GRID_US = round(NODE_EVICTION_PERIOD * 1_000_000)


class ZoneTainters:
    """zoneNoExecuteTainter plus the 100 ms pass that drains it."""

    def __init__(self, clock: Clock, qps: float, action: ActionFunc) -> None:
        self._clock = clock
        self._qps = qps
        self._action = action
        self.queues: dict[str, RateLimitedTimedQueue] = {}
        self.start_us = 0
        self.running = False
        self._handle: Handle | None = None
        self._pending_k: int | None = None
        self.last_pass_k = -1
        #: Called after each pass (the controller re-arms or records); optional.
        self.after_pass: Callable[[], None] | None = None

    def start(self) -> None:
        self.start_us = round(self._clock.now() * 1_000_000)
        self.running = True

    def stop(self) -> None:
        self.running = False
        if self._handle is not None:
            self._handle.cancel()
        self._handle = None
        self._pending_k = None

    def new_zone(self, zone: str) -> None:
        """addPodEvictorForNewZone: a fresh queue with a full token bucket."""
        self.queues[zone] = RateLimitedTimedQueue(self._qps)

    def queue(self, zone: str) -> RateLimitedTimedQueue:
        if zone not in self.queues:
            self.new_zone(zone)
        return self.queues[zone]

    def swap_limiter(self, zone: str, qps: float) -> None:
        self.queue(zone).swap_limiter(qps, to_nanos(self._clock.now()))

    # the pass --------------------------------------------------------------------------------

    def grid_time(self, k: int) -> float:
        return (self.start_us + k * GRID_US) / 1_000_000

    def first_grid_index(self) -> int:
        """The first grid point at or after now that has not had its pass yet."""
        now_us = round(self._clock.now() * 1_000_000)
        return max(-(-(now_us - self.start_us) // GRID_US), self.last_pass_k + 1)

    def arm(self) -> None:
        """Schedule the pass at the first grid point where it can act (or cancel it)."""
        if not self.running:
            return
        k_min = self.first_grid_index()
        now_ns = to_nanos(self._clock.now())
        best: int | None = None
        for queue in self.queues.values():
            lower = queue.next_try(now_ns)
            if lower is None:
                continue
            k = max(k_min, math.ceil((lower // 1000 - self.start_us) / GRID_US))
            while not queue.limiter.would_accept(to_nanos(self.grid_time(k))):
                k += 1
            best = k if best is None else min(best, k)
        self.schedule(best)

    def schedule(self, k: int | None) -> None:
        if k == self._pending_k and (k is None or self._handle is not None):
            return
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._pending_k = k
        if k is not None:
            self._handle = self._clock.call_at(self.grid_time(k), self._run)

    def _run(self) -> None:
        self._handle = None
        self._pending_k = None
        now_us = round(self._clock.now() * 1_000_000)
        self.last_pass_k = (now_us - self.start_us) // GRID_US
        self.run_pass()
        if self.after_pass is not None:
            self.after_pass()
        else:
            self.arm()

    def run_pass(self) -> None:
        """doNoExecuteTaintingPass: Try every zone queue (zones in name order)."""
        now_ns = to_nanos(self._clock.now())
        for zone in sorted(self.queues):
            self.queues[zone].try_(now_ns, self._action)
