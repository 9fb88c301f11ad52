"""Watch streams shared by the store backends: filtering by namespace and selectors (with the
ADDED/DELETED translation upstream's watch cache does when an object starts or stops matching),
a thread-safe buffer that `wait()`s, and the `Dispatcher` that hands each commit's batch to the
store's subscribers."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable

from kubetaint.api.selectors import FieldSelector, LabelSelector, parse_field_selector, parse_label_selector
from kubetaint.store.changes import BatchHandler, ChangeBatch
from kubetaint.store.interface import JSON, EventType, WatchEvent


class WatchFilter:
    """Which changes of one resource a watcher wants."""

    def __init__(self, resource: str, namespace: str, labels: LabelSelector, fields: FieldSelector) -> None:
        self.resource = resource
        self.namespace = namespace
        self.labels = labels
        self.fields = fields
        # Without selectors only the namespace decides (a cheaper test for the common watcher).
        self._namespace_only = labels.empty and fields.empty

    @classmethod
    def parse(
        cls, resource: str, namespace: str, label_selector: str | None, field_selector: str | None
    ) -> WatchFilter:
        """The filter of a watch or list request's namespace and selectors (a selector that does
        not parse: 400 BadRequest)."""
        return cls(
            resource,
            namespace,
            parse_label_selector(label_selector),
            parse_field_selector(field_selector, resource),
        )

    @property
    def namespace_only(self) -> bool:
        """Whether only the namespace decides what matches (no label or field selector)."""
        return self._namespace_only

    def matches(self, obj: JSON | None) -> bool:
        if obj is None:
            return False
        meta = obj.get("metadata") or {}
        if self.namespace and meta.get("namespace", "") != self.namespace:
            return False
        if not self.labels.empty and not self.labels.matches(meta.get("labels")):
            return False
        return self.fields.empty or self.fields.matches(obj)

    def added(self, listed: Iterable[JSON]) -> list[WatchEvent]:
        """A watch's initial events: an ADDED event for each of the `listed` objects it matches,
        at the object's resourceVersion."""
        return [
            WatchEvent("ADDED", self.resource, obj, int(obj["metadata"]["resourceVersion"]))
            for obj in listed
            if self.matches(obj)
        ]

    def translate(self, event: WatchEvent) -> WatchEvent | None:
        """The event this watcher sees, or None."""
        if event.resource != self.resource:
            return None
        if event.type == "BOOKMARK":
            return event
        if self._namespace_only and (event.type != "MODIFIED" or event.old_object is not None):
            namespace = self.namespace
            if not namespace:
                return event  # every object matches, before and after
            now = (event.object.get("metadata") or {}).get("namespace", "") == namespace
            old = event.old_object
            if old is None or now == ((old.get("metadata") or {}).get("namespace", "") == namespace):
                return event if now else None
        now = self.matches(event.object)
        before = self.matches(event.old_object) if event.type == "MODIFIED" else now
        if event.type == "MODIFIED" and now != before:
            kind: EventType = "ADDED" if now else "DELETED"
            return WatchEvent(kind, event.resource, event.object, event.resource_version, event.old_object)
        return event if now else None


class BufferedWatch:
    """A watch stream fed by a store's dispatcher; stopping unsubscribes.

    `floor` is the resourceVersion the initial events cover: a change at or below it that the
    dispatcher still delivers (committed before the watch started, dispatched after) is dropped,
    so no event is seen twice."""

    def __init__(self, watch_filter: WatchFilter, initial: list[WatchEvent], floor: int = 0) -> None:
        self._filter = watch_filter
        self._floor = floor
        self._events: deque[WatchEvent] = deque(initial)
        self._cond = threading.Condition()
        self._stopped = False
        #: the newest resourceVersion of the resource offered (filtered or not), and its value
        #: when the queue was last drained
        self._offered = floor
        self._drained = 0 if initial else floor
        self._unsubscribe: Callable[[], None] | None = None
        self.waker: Callable[[], None] | None = None

    def attach(self, unsubscribe: Callable[[], None]) -> None:
        self._unsubscribe = unsubscribe

    def offer(self, batch: Iterable[WatchEvent]) -> None:
        """The store's subscriber: the events of one commit (a `ChangeBatch`), in order."""
        floor, translate, added = self._floor, self._filter.translate, False
        resource = self._filter.resource
        with self._cond:
            for event in batch:
                if event.resource_version <= floor and event.type != "BOOKMARK":
                    continue
                if event.resource == resource and event.resource_version > self._offered:
                    self._offered = event.resource_version
                seen = translate(event)
                if seen is None or self._stopped:
                    continue
                self._events.append(seen)
                added = True
            if not added:
                return
            self._cond.notify_all()
        if self.waker is not None:
            self.waker()

    def push_to(self, waker: Callable[[], None] | None) -> bool:
        self.waker = waker
        return True

    def drain(self) -> list[WatchEvent]:
        with self._cond:
            events = list(self._events)
            self._events.clear()
            self._drained = self._offered
        return events

    @property
    def progress(self) -> int:
        return self._drained

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
        if self.waker is not None:  # a stream the store ends (etcd went away) ends for its reader
            self.waker()

    @property
    def stopped(self) -> bool:
        return self._stopped


class Dispatcher:
    """Delivers committed batches to subscribed handlers in commit order: the one way every
    backend hands its changes to subscribers.

    A backend calls `publish(batch)` (a `ChangeBatch`: the events of one commit) while it still
    holds its write lock, so the queue is in commit order, and `dispatch()` after releasing it.
    Whichever thread finds the dispatcher idle delivers everything queued, including batches that
    handlers themselves cause by writing (re-entrant writes queue up behind the current batch
    instead of nesting).

    A batch is delivered handler by handler: each handler of its resource receives it whole (a
    handler of one resource, the batch of that resource's events only). Every handler sees every
    change in commit order; only the interleaving between handlers differs from event-by-event
    delivery, which no handler can rely on (each watcher of a real API server has its own stream)."""

    def __init__(self) -> None:
        self._handlers: list[tuple[BatchHandler, str | None]] = []
        # per resource, the handlers that see its changes, in subscription order (rebuilt lazily)
        self._routes: dict[str, list[BatchHandler]] = {}
        self._pending: deque[ChangeBatch] = deque()
        self._dispatching = False
        self._lock = threading.Lock()

    def publish(self, batch: ChangeBatch) -> None:
        """Queue one commit's batch (call while holding the write lock; empty batches are dropped)."""
        if batch.resource is not None or len(batch):  # (a batch of one resource is not empty)
            with self._lock:
                self._pending.append(batch)

    def _route(self, resource: str) -> list[BatchHandler]:
        route = self._routes.get(resource)
        if route is None:
            with self._lock:
                route = self._routes[resource] = [
                    h for h, wanted in self._handlers if wanted in (None, resource)
                ]
        return route

    def dispatch(self) -> None:
        """Deliver everything published, unless another thread (or an outer call) is at it."""
        with self._lock:
            if self._dispatching:
                return
            if not self._handlers:
                # what delivering would do: every route is empty (a store being loaded before
                # anything subscribes: 150,000 creates)
                self._pending.clear()
                return
            self._dispatching = True
        # Everything pending is taken at once (batches handlers cause queue up behind it, so the
        # order is the commit order still); routes are looked up per batch, so a handler that
        # unsubscribes another stops its deliveries from the next batch on.
        taken: deque[ChangeBatch] = deque()
        try:
            while True:
                with self._lock:
                    if not self._pending:
                        self._dispatching = False
                        return
                    taken, self._pending = self._pending, taken
                while taken:
                    batch = taken.popleft()
                    resource = batch.resource
                    if resource is not None:
                        for handler in self._route(resource):
                            handler(batch)
                    else:
                        self._deliver_mixed(batch)
        except BaseException:
            with self._lock:
                taken.extend(self._pending)  # what the failing handler left undelivered goes first
                self._pending = taken
                self._dispatching = False
            raise

    def _deliver_mixed(self, batch: ChangeBatch) -> None:
        """A batch of several resources: each handler its resource's events (all, unfiltered),
        the batch split by resource once for all of them."""
        with self._lock:
            handlers = list(self._handlers)
        by_resource: dict[str, list[WatchEvent]] = {}
        for event in batch.events:
            events = by_resource.get(event.resource)
            if events is None:
                events = by_resource[event.resource] = []
            events.append(event)
        parts: dict[str, ChangeBatch] = {}
        for handler, wanted in handlers:
            if wanted is None:
                handler(batch)
                continue
            mine = parts.get(wanted)
            if mine is None:
                events = by_resource.get(wanted)
                if events is None:
                    continue
                mine = parts[wanted] = ChangeBatch(events)
            handler(mine)

    def subscribe(self, handler: BatchHandler, resource: str | None = None) -> Callable[[], None]:
        """Deliver every batch (of `resource` only, when given: its events of it) to `handler`."""
        entry = (handler, resource)
        with self._lock:
            self._handlers.append(entry)
            self._routes = {}

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._handlers:
                    self._handlers.remove(entry)
                    self._routes = {}

        return unsubscribe

    def clear(self) -> None:
        with self._lock:
            self._handlers.clear()
            self._routes = {}
