"""A deduplicating, rate-limited work queue on an injected clock (client-go workqueue semantics:
a key is processed at most once at a time, re-adds while queued merge, failures back off
exponentially from 5 ms to 1000 s, AddAfter keeps the earliest pending time). On a clock with
time slices (a live server) a drain that has used its slice continues in a later callback.

Shared by the workload controllers of this package.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

from kubetaint.clock.base import Clock, Handle
from kubetaint.clock.slices import slices_of

K = TypeVar("K")
log = logging.getLogger(__name__)

BASE_DELAY = 0.005
MAX_DELAY = 1000.0
#: Failures retried before a key is dropped (the controllers' maxRetries is 15).
MAX_RETRIES = 15


class WorkQueue(Generic[K]):
    """Keys to sync; `sync(key)` raising an exception requeues the key with backoff."""

    def __init__(
        self, clock: Clock, sync: Callable[[K], None], name: str, max_retries: int = MAX_RETRIES
    ) -> None:
        self._clock = clock
        self._slices = slices_of(clock)
        self._sync = sync
        self.name = name
        self._max_retries = max_retries
        self._queued: dict[K, None] = {}
        self._drain_handle: Handle | None = None
        self._later: dict[K, Handle] = {}
        self._failures: dict[K, int] = {}

    def add(self, key: K) -> None:
        if key in self._queued:
            return
        self._queued[key] = None
        if self._drain_handle is None:
            self._drain_handle = self._clock.call_soon(self._drain)

    def add_after(self, key: K, delay: float) -> None:
        if delay <= 0:
            self.add(key)
            return
        when = self._clock.now() + delay
        pending = self._later.get(key)
        if pending is not None and not pending.cancelled and pending.when <= when:
            return
        if pending is not None:
            pending.cancel()
        self._later[key] = self._clock.call_at(when, lambda: self._fire(key))

    def _fire(self, key: K) -> None:
        self._later.pop(key, None)
        self.add(key)

    def __len__(self) -> int:
        return len(self._queued)

    def stop(self) -> None:
        """Cancel the pending drain and every delayed add; the keys queued are dropped."""
        if self._drain_handle is not None:
            self._drain_handle.cancel()
            self._drain_handle = None
        for handle in self._later.values():
            handle.cancel()
        self._later.clear()
        self._queued.clear()

    def _drain(self) -> None:
        self._drain_handle = None
        slices, synced = self._slices, 0
        while self._queued:
            if synced and slices is not None and slices.slice_over():
                self._drain_handle = self._clock.call_soon(self._drain)
                return
            synced += 1
            key = next(iter(self._queued))
            del self._queued[key]
            try:
                self._sync(key)
            except Exception:  # a bad object must never stop the controller
                failures = self._failures.get(key, 0) + 1
                if failures > self._max_retries:
                    log.exception("%s: dropping %r after %d retries", self.name, key, failures - 1)
                    self._failures.pop(key, None)
                    continue
                self._failures[key] = failures
                log.warning("%s: error syncing %r (retry %d)", self.name, key, failures, exc_info=True)
                self.add_after(key, min(BASE_DELAY * 2 ** (failures - 1), MAX_DELAY))
            else:
                self._failures.pop(key, None)
