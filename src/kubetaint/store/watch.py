"""Watch streams shared by the store backends: filtering by namespace and selectors (with the
ADDED/DELETED translation upstream's watch cache does when an object starts or stops matching),
and a thread-safe buffer that `wait()`s."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from kubetaint.api.selectors import FieldSelector, LabelSelector
from kubetaint.store.interface import JSON, EventType, WatchEvent


class WatchFilter:
    """Which changes of one resource a watcher wants."""

    def __init__(self, resource: str, namespace: str, labels: LabelSelector, fields: FieldSelector) -> None:
        self.resource = resource
        self.namespace = namespace
        self.labels = labels
        self.fields = fields

    def matches(self, obj: JSON | None) -> bool:
        if obj is None:
            return False
        meta = obj.get("metadata") or {}
        if self.namespace and meta.get("namespace", "") != self.namespace:
            return False
        if not self.labels.empty and not self.labels.matches(meta.get("labels")):
            return False
        return self.fields.empty or self.fields.matches(obj)

    def translate(self, event: WatchEvent) -> WatchEvent | None:
        """The event this watcher sees, or None."""
        if event.resource != self.resource:
            return None
        if event.type == "BOOKMARK":
            return event
        now = self.matches(event.object)
        before = self.matches(event.old_object) if event.type == "MODIFIED" else now
        if event.type == "MODIFIED" and now != before:
            kind: EventType = "ADDED" if now else "DELETED"
            return WatchEvent(kind, event.resource, event.object, event.resource_version, event.old_object)
        return event if now else None


class BufferedWatch:
    """A watch stream fed by a store's dispatcher; stopping unsubscribes."""

    def __init__(self, watch_filter: WatchFilter, initial: list[WatchEvent]) -> None:
        self._filter = watch_filter
        self._events: deque[WatchEvent] = deque(initial)
        self._cond = threading.Condition()
        self._stopped = False
        self._unsubscribe: Callable[[], None] | None = None
        self.waker: Callable[[], None] | None = None

    def attach(self, unsubscribe: Callable[[], None]) -> None:
        self._unsubscribe = unsubscribe

    def offer(self, event: WatchEvent) -> None:
        """Called by the store for every committed change."""
        seen = self._filter.translate(event)
        if seen is None or self._stopped:
            return
        with self._cond:
            self._events.append(seen)
            self._cond.notify_all()
        if self.waker is not None:
            self.waker()

    def drain(self) -> list[WatchEvent]:
        with self._cond:
            events = list(self._events)
            self._events.clear()
        return events

    def wait(self, timeout: float) -> list[WatchEvent]:
        with self._cond:
            if not self._events and not self._stopped:
                self._cond.wait(timeout)
        return self.drain()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._unsubscribe is not None:
            self._unsubscribe()
        with self._cond:
            self._cond.notify_all()

    @property
    def stopped(self) -> bool:
        return self._stopped
