"""TimedWorkerQueue on an injected clock (mirrors pkg/controller/tainteviction/timed_workers.go).

Work is keyed by `namespace/name`. AddWork is a no-op while the key exists. Work whose delay
(`fire_at - created_at`) is <= 0 starts at once (on the clock's next turn, as upstream starts a
goroutine) and leaves a nil worker under its key, so cancelling it reports False (no event). The
key is removed when the work finishes; work may finish later than it starts (retries).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from kubetaint.clock.base import Clock, Handle

log = logging.getLogger(__name__)

#: The work: called with (key, fire_at, done); it must call done() exactly once when finished.
WorkFunc = Callable[[str, float, Callable[[], None]], None]


@dataclass
class TimedWorker:
    """A pending timer: runs the work not earlier than `fire_at`."""

    key: str
    created_at: float
    fire_at: float
    handle: Handle | None = None
    cancelled: bool = field(default=False)

    def cancel(self) -> None:
        self.cancelled = True
        if self.handle is not None:
            self.handle.cancel()


class TimedWorkerQueue:
    """Timers for keyed work (one per key)."""

    def __init__(self, clock: Clock, work: WorkFunc) -> None:
        self._clock = clock
        self._work = work
        #: key → worker; None marks work that started immediately and is still running.
        self.workers: dict[str, TimedWorker | None] = {}

    def add_work(self, key: str, created_at: float, fire_at: float) -> None:
        """AddWork: schedule `key` at `fire_at` unless work for it already exists."""
        if key in self.workers:
            log.debug("Trying to add already existing work, skipping: %s", key)
            return
        worker = TimedWorker(key, created_at, fire_at)
        if fire_at - created_at <= 0:
            self.workers[key] = None
            self._clock.call_soon(lambda: self._start(worker))
            return
        worker.handle = self._clock.call_at(fire_at, lambda: self._start(worker))
        self.workers[key] = worker

    def cancel_work(self, key: str) -> bool:
        """CancelWork: forget `key`; True only when a real (non-nil) timer was cancelled."""
        if key not in self.workers:
            return False
        worker = self.workers.pop(key)
        if worker is None:
            return False
        worker.cancel()
        return True

    def get_worker(self, key: str) -> TimedWorker | None:
        """GetWorkerUnsafe: the pending timer for `key` (None when absent or already running)."""
        return self.workers.get(key)

    def cancel_all(self) -> None:
        """CancelAndWait: cancel every timer and forget all keys."""
        for worker in self.workers.values():
            if worker is not None:
                worker.cancel()
        self.workers.clear()

    def _start(self, worker: TimedWorker) -> None:
        if worker.cancelled:
            return

        def done() -> None:
            # Upstream deletes the key unconditionally when the work returns.
            self.workers.pop(worker.key, None)

        try:
            self._work(worker.key, worker.fire_at, done)
        except Exception:
            log.exception("TaintEvictionController: timed worker failed: %s", worker.key)
            done()

    def __len__(self) -> int:
        return len(self.workers)

    def __contains__(self, key: object) -> bool:
        return key in self.workers
