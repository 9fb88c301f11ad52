"""`QueueController`: what the workload controllers share around their work queue (upstream's
controllers each build the same: the client they write through, informers, an event recorder and
a rate-limited queue of the keys their `sync` reconciles).

Shared by the workload controllers of every controller package.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from kubetaint.clock.base import Clock
from kubetaint.controllers.replicaset.workqueue import WorkQueue
from kubetaint.store.component_informers import ComponentInformers
from kubetaint.store.events import EventRecorder
from kubetaint.store.interface import Store

S = TypeVar("S", bound=Store)
Key = tuple[str, str]


class QueueController(Generic[S]):
    """A controller whose `sync(key)` reconciles the object `key` (namespace, name) taken from
    its `queue`: it writes through `store`, reads through `informers` (those it builds alone start
    and stop with it), and records events as `component` unless given a `recorder`."""

    def __init__(
        self, store: S, clock: Clock, component: str, queue_name: str, recorder: EventRecorder | None
    ) -> None:
        self.store = store
        self.clock = clock
        self.informers = ComponentInformers(store)
        self.recorder = recorder or EventRecorder(store, clock, component)
        self.queue: WorkQueue[Key] = WorkQueue(clock, self.sync, queue_name)

    def sync(self, key: Key) -> None:
        raise NotImplementedError

    def start(self) -> None:
        self.informers.start()

    def stop(self) -> None:
        """Stop the informers this controller started and cancel its queued work."""
        self.informers.stop()
        self.queue.stop()
