"""Watch streams shared by the store backends: filtering by namespace and selectors (with the
ADDED/DELETED translation upstream's watch cache does when an object starts or stops matching),
and a thread-safe buffer that `wait()`s."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from kubetaint.api.selectors import FieldSelector, LabelSelector
from kubetaint.store.fieldwrite import FieldWriteGroup
from kubetaint.store.interface import JSON, EventType, Handler, WatchEvent


class WatchFilter:
    """Which changes of one resource a watcher wants."""

    def __init__(self, resource: str, namespace: str, labels: LabelSelector, fields: FieldSelector) -> None:
        self.resource = resource
        self.namespace = namespace
        self.labels = labels
        self.fields = fields
        # Without selectors only the namespace decides (a cheaper test for the common watcher).
        self._namespace_only = labels.empty and fields.empty

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
        self._progress = max([floor, *(event.resource_version for event in initial)])
        self._events: deque[WatchEvent] = deque(initial)
        self._cond = threading.Condition()
        self._stopped = False
        self._unsubscribe: Callable[[], None] | None = None
        self.waker: Callable[[], None] | None = None

    def attach(self, unsubscribe: Callable[[], None]) -> None:
        self._unsubscribe = unsubscribe

    def offer(self, event: WatchEvent) -> None:
        """Called by the store for every committed change."""
        if event.resource_version <= self._floor and event.type != "BOOKMARK":
            return
        seen = self._filter.translate(event)
        with self._cond:
            self._progress = max(self._progress, event.resource_version)
            if seen is None or self._stopped:
                return
            self._events.append(seen)
            self._cond.notify_all()
        if self.waker is not None:
            self.waker()

    def request_bookmark(self) -> None:
        """Queue a BOOKMARK at the newest resourceVersion this watch has fully seen: every change
        up to it has been queued before the bookmark (or did not match). Its object carries only
        metadata.resourceVersion; the API server adds kind and apiVersion."""
        with self._cond:
            if self._stopped:
                return
            rv = self._progress
            bookmark = {"metadata": {"resourceVersion": str(rv)}}
            self._events.append(WatchEvent("BOOKMARK", self._filter.resource, bookmark, rv))
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
        if self.waker is not None:  # a stream the store ends (etcd went away) ends for its reader
            self.waker()

    @property
    def stopped(self) -> bool:
        return self._stopped


#: A handler's optional way to take a group of events at once (see `Dispatcher.enqueue_group`).
GroupHandler = Callable[[list[WatchEvent]], None]
#: A handler's optional way to take a field-write group whole (see `Dispatcher.enqueue_field_group`).
FieldGroupHandler = Callable[[FieldWriteGroup], None]


def group_handler(handler: Handler) -> GroupHandler | None:
    """The `deliver_many` of a handler that takes groups of events (an object with both
    `__call__` and `deliver_many`, such as an Informer), else None."""
    deliver_many: GroupHandler | None = getattr(handler, "deliver_many", None)
    return deliver_many


class Dispatcher:
    """Delivers committed changes to subscribed handlers in commit order.

    A backend calls `enqueue` while it still holds its write lock (so the queue is in commit
    order) and `dispatch` after releasing it. Whichever thread finds the dispatcher idle delivers
    everything queued, including events that handlers themselves cause by writing (re-entrant
    writes queue up behind the current event instead of nesting).

    A *group* (`enqueue_group`: consecutive events of one resource, e.g. a batch of lease
    renewals) is delivered handler by handler: a handler with `deliver_many` (`group_handler`)
    takes the whole group in one call, any other gets its events one by one. Every handler still
    sees every event in commit order; only the interleaving between handlers differs, which no
    handler can rely on (each watcher of a real API server has its own stream). A field-write group
    (`enqueue_field_group`) is a group whose events are built only for the handlers that need
    them: one with `deliver_field_group` (an Informer) takes the `FieldWriteGroup` itself."""

    def __init__(self) -> None:
        self._handlers: list[tuple[Handler, str | None]] = []
        # per resource, the handlers that see its changes, in subscription order (rebuilt lazily)
        self._routes: dict[str, list[Handler]] = {}
        self._group_routes: dict[str, list[tuple[Handler, GroupHandler | None]]] = {}
        self._pending: deque[WatchEvent | list[WatchEvent] | FieldWriteGroup] = deque()
        self._dispatching = False
        self._lock = threading.Lock()

    def enqueue(self, event: WatchEvent) -> None:
        with self._lock:
            self._pending.append(event)

    def enqueue_many(self, events: list[WatchEvent]) -> None:
        with self._lock:
            self._pending.extend(events)

    def enqueue_group(self, events: list[WatchEvent]) -> None:
        """Queue consecutive events of one resource to be delivered as a group (the list is the
        dispatcher's from now on)."""
        if events:
            with self._lock:
                self._pending.append(events)

    def enqueue_field_group(self, group: FieldWriteGroup) -> None:
        """Queue the events of a field write to be delivered as a group (see the class doc)."""
        if len(group):
            with self._lock:
                self._pending.append(group)

    def _route(self, resource: str) -> list[Handler]:
        route = self._routes.get(resource)
        if route is None:
            with self._lock:
                route = self._routes[resource] = [
                    h for h, wanted in self._handlers if wanted in (None, resource)
                ]
        return route

    def _group_route(self, resource: str) -> list[tuple[Handler, GroupHandler | None]]:
        route = self._group_routes.get(resource)
        if route is None:
            route = self._group_routes[resource] = [(h, group_handler(h)) for h in self._route(resource)]
        return route

    def dispatch(self) -> None:
        with self._lock:
            if self._dispatching:
                return
            if not self._handlers:
                # what delivering would do: every route is empty (a store being loaded before
                # anything subscribes: 150,000 creates)
                self._pending.clear()
                return
            self._dispatching = True
        # Everything pending is taken at once (events handlers cause queue up behind it, so the
        # order is the commit order still); routes are looked up per queued event or group, so a
        # handler that unsubscribes another stops its deliveries from the next one on.
        batch: deque[WatchEvent | list[WatchEvent] | FieldWriteGroup] = deque()
        try:
            while True:
                with self._lock:
                    if not self._pending:
                        self._dispatching = False
                        return
                    batch, self._pending = self._pending, batch
                route = self._route
                while batch:
                    item = batch.popleft()
                    if type(item) is list:
                        self._deliver_group(item)
                        continue
                    if type(item) is FieldWriteGroup:
                        self._deliver_field_group(item)
                        continue
                    event: WatchEvent = item  # type: ignore[assignment]
                    for handler in route(event.resource):
                        handler(event)
        except BaseException:
            with self._lock:
                batch.extend(self._pending)  # what the failing handler left undelivered goes first
                self._pending = batch
                self._dispatching = False
            raise

    def _deliver_group(self, events: list[WatchEvent]) -> None:
        for handler, deliver_many in self._group_route(events[0].resource):
            if deliver_many is not None:
                deliver_many(events)
            else:
                for event in events:
                    handler(event)

    def _deliver_field_group(self, group: FieldWriteGroup) -> None:
        for handler, deliver_many in self._group_route(group.resource):
            deliver_field_group: FieldGroupHandler | None = getattr(handler, "deliver_field_group", None)
            if deliver_field_group is not None:
                deliver_field_group(group)
            elif deliver_many is not None:
                deliver_many(group.events())
            else:
                for event in group.events():
                    handler(event)

    def subscribe(self, handler: Handler, resource: str | None = None) -> Callable[[], None]:
        """Deliver every change (of `resource` only, when given) to `handler`."""
        entry = (handler, resource)
        with self._lock:
            self._handlers.append(entry)
            self._routes = {}
            self._group_routes = {}

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._handlers:
                    self._handlers.remove(entry)
                    self._routes = {}
                    self._group_routes = {}

        return unsubscribe

    def clear(self) -> None:
        with self._lock:
            self._handlers.clear()
            self._routes = {}
            self._group_routes = {}
