"""The work queue of the controllers that sync one name at a time (namespaces, CRDs, service
accounts, root CA ConfigMaps): names added before a drain merge, each drain (on the clock's next
turn) syncs the queued names in sorted order, and `add_after` queues a name once a delay has
passed (a later call replacing the pending one). A queue given a `component` name handles the
failures of its sync as a controller's processNextWorkItem does: logged, the name queued again
after its per-item exponential backoff (AddRateLimited: 5 ms doubling up to 1000 s), its failures
forgotten once it syncs (Forget). `NameQueueController` is what those controllers share around it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

from kubetaint.clock.base import Clock, Handle
from kubetaint.store.component_informers import ComponentInformers
from kubetaint.store.interface import Store

log = logging.getLogger(__name__)
S = TypeVar("S", bound=Store)

#: workqueue.DefaultTypedItemBasedRateLimiter's exponential backoff: the first retry's delay...
BASE_DELAY = 0.005
#: ...doubling per failure up to this.
MAX_DELAY = 1000.0


class SortedQueue:
    """Names to hand to `sync`: it handles its own failures (requeueing with `add_after`) unless
    the queue has a `component` (then a sync that raises is logged and retried with backoff)."""

    def __init__(self, clock: Clock, sync: Callable[[str], None], component: str = "") -> None:
        self._clock = clock
        self._sync = sync
        self._component = component
        self._failures: dict[str, int] = {}
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
            if not self._component:
                self._sync(name)
                continue
            try:
                self._sync(name)
            except Exception as err:  # one name's failure must not stop the others
                failures = self._failures.get(name, 0)
                self._failures[name] = failures + 1
                log.warning("%s: syncing %s failed: %s", self._component, name, err)
                self.add_after(name, min(BASE_DELAY * 2**failures, MAX_DELAY))
            else:
                self._failures.pop(name, None)


class NameQueueController(Generic[S]):
    """A controller that syncs one name at a time from its `queue` (a SortedQueue handing names
    to `sync`, with `component`'s failure handling when given): it writes through `store` and
    reads through `informers` (those it builds alone start and stop with it)."""

    def __init__(self, store: S, clock: Clock, sync: Callable[[str], None], component: str = "") -> None:
        self.store = store
        self.clock = clock
        self.informers = ComponentInformers(store)
        self.queue = SortedQueue(clock, sync, component)

    def start(self) -> None:
        self.informers.start()

    def stop(self) -> None:
        """Stop the queue and the informers this controller started."""
        self.queue.stop()
        self.informers.stop()
