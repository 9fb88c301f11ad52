"""The work queue of the controllers that sync one name at a time (namespaces, CRDs): names added
before a drain merge, each drain (on the clock's next turn) syncs the queued names in sorted
order, and `add_after` queues a name once a delay has passed (a later call replacing the
pending one)."""

from __future__ import annotations

from collections.abc import Callable

from kubetaint.clock.base import Clock, Handle


class SortedQueue:
    """Names to hand to `sync`, which handles its own failures (requeueing with `add_after`)."""

    def __init__(self, clock: Clock, sync: Callable[[str], None]) -> None:
        self._clock = clock
        self._sync = sync
        self._queued: set[str] = set()
        self._timers: dict[str, Handle] = {}
        self._draining = False
        self._stopped = False

    def add(self, name: str) -> None:
        if self._stopped:
            return
        self._queued.add(name)
        if not self._draining:
            self._draining = True
            self._clock.call_soon(self._drain)

    def add_after(self, name: str, delay: float) -> None:
        timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()

        def fire() -> None:
            self._timers.pop(name, None)
            self.add(name)

        self._timers[name] = self._clock.call_later(delay, fire)

    def stop(self) -> None:
        """Cancel the delayed adds; later adds are ignored."""
        self._stopped = True
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    def _drain(self) -> None:
        self._draining = False
        queued, self._queued = sorted(self._queued), set()
        for name in queued:
            self._sync(name)
