"""Informers: a cache of one resource kept current from a store, with add/update/delete handlers
(mirrors client-go tools/cache SharedIndexInformer, in-process).

Handlers run synchronously, in commit order, inside the store's dispatch: they must only record
work (enqueue, schedule on the clock) and never block. Cached objects are read-only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kubetaint.api.selectors import parse_field_selector, parse_label_selector
from kubetaint.store.interface import JSON, Store, WatchEvent, object_key
from kubetaint.store.watch import WatchFilter

OnAdd = Callable[[JSON], None]
OnUpdate = Callable[[JSON, JSON], None]
OnDelete = Callable[[JSON], None]


@dataclass
class EventHandlers:
    on_add: OnAdd | None = None
    on_update: OnUpdate | None = None
    on_delete: OnDelete | None = None


class Informer:
    """Lists `resource` once, then follows the store's committed changes."""

    def __init__(
        self,
        store: Store,
        resource: str,
        *,
        namespace: str = "",
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> None:
        self._store = store
        self.resource = resource
        self._filter = WatchFilter(
            resource,
            namespace,
            parse_label_selector(label_selector),
            parse_field_selector(field_selector, resource),
        )
        self._selectors = (namespace, label_selector, field_selector)
        self._cache: dict[tuple[str, str], JSON] = {}
        self._handlers: list[EventHandlers] = []
        self._unsubscribe: Callable[[], None] | None = None
        self._synced_rv = 0

    def add_handlers(self, handlers: EventHandlers) -> None:
        """Register handlers; when already started, replays the cache as adds (like client-go)."""
        self._handlers.append(handlers)
        if self._unsubscribe is not None and handlers.on_add is not None:
            for obj in list(self._cache.values()):
                handlers.on_add(obj)

    def start(self) -> None:
        """List the current state (delivering adds) and subscribe to later changes."""
        if self._unsubscribe is not None:
            return
        namespace, labels, fields = self._selectors
        self._unsubscribe = self._store.subscribe(self._on_event, self.resource)
        listed = self._store.list(
            self.resource, namespace=namespace, label_selector=labels, field_selector=fields
        )
        self._synced_rv = int(listed.resource_version)
        for obj in listed.items:
            self._cache[object_key(obj)] = obj
            for handlers in self._handlers:
                if handlers.on_add is not None:
                    handlers.on_add(obj)

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _on_event(self, event: WatchEvent) -> None:
        if event.resource_version <= self._synced_rv:
            return
        seen = self._filter.translate(event)
        if seen is None or seen.type == "BOOKMARK":
            return
        key = object_key(seen.object)
        old = self._cache.get(key)
        if seen.type == "DELETED":
            self._cache.pop(key, None)
            for handlers in self._handlers:
                if handlers.on_delete is not None:
                    handlers.on_delete(old if old is not None else seen.object)
            return
        self._cache[key] = seen.object
        for handlers in self._handlers:
            if old is None:
                if handlers.on_add is not None:
                    handlers.on_add(seen.object)
            elif handlers.on_update is not None:
                handlers.on_update(old, seen.object)

    # cache reads ---------------------------------------------------------------------------

    def get(self, namespace: str, name: str) -> JSON | None:
        return self._cache.get((namespace, name))

    def items(self) -> Iterator[JSON]:
        return iter(list(self._cache.values()))

    def __len__(self) -> int:
        return len(self._cache)

    def __bool__(self) -> bool:
        # An informer is always "given" even while its cache is empty: components write
        # `informer or Informer(...)`, which __len__ alone would turn into a second informer.
        return True
