"""Informers: a cache of one resource kept current from a store, with add/update/delete handlers
(mirrors client-go tools/cache SharedIndexInformer, in-process).

Handlers run synchronously, in commit order, inside the store's dispatch: they must only record
work (enqueue, schedule on the clock) and never block. Cached objects are read-only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, KeysView
from dataclasses import dataclass

from kubetaint.api.selectors import parse_field_selector, parse_label_selector
from kubetaint.store.fieldruns import FieldRuns
from kubetaint.store.fieldwrite import FieldPath, FieldWriteGroup
from kubetaint.store.interface import JSON, EventType, Store, WatchEvent, object_key
from kubetaint.store.watch import WatchFilter

OnAdd = Callable[[JSON], None]
OnUpdate = Callable[[JSON, JSON], None]
OnDelete = Callable[[JSON], None]
#: Takes the (old, new) pairs of consecutive updates at once, in order.
OnUpdateMany = Callable[[list[tuple[JSON, JSON]]], None]
#: Takes consecutive updates that each set one field to one value at once: (keys, olds, news,
#: (part, field), value), `news[i]` being `olds[i]` with `[part][field]` set to value, metadata
#: kept (so its (namespace, name) `keys[i]`) but for the resourceVersion.
OnFieldUpdates = Callable[[list[tuple[str, str]], list[JSON], list[JSON], FieldPath, object], None]
#: Takes the replay of a started informer's cache at once: (cache key, object) pairs in cache order.
OnReplay = Callable[[list[tuple[tuple[str, str], JSON]]], None]


@dataclass
class EventHandlers:
    on_add: OnAdd | None = None
    on_update: OnUpdate | None = None
    on_delete: OnDelete | None = None
    #: Optional: a group of updates (store.watch.Dispatcher groups) in one call instead of one
    #: on_update call each; must do exactly what those calls would.
    on_update_many: OnUpdateMany | None = None
    #: Optional: a field-write group (store.fieldwrite.FieldWriteGroup) in one call instead of
    #: on_update_many (or on_update) calls; must do exactly what those calls would.
    on_field_updates: OnFieldUpdates | None = None
    #: Optional: `add_handlers`' replay of the cache in one call, each object with its cache key
    #: (its object_key), instead of one on_add call each; must do exactly what those calls would.
    on_replay: OnReplay | None = None


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
        #: field-write groups rewriting the same objects round after round: their newest objects
        #: stand for their keys' cache entries (`fieldruns`)
        self._runs = FieldRuns(self._cache)
        self._handlers: list[EventHandlers] = []
        self._unsubscribe: Callable[[], None] | None = None
        self._synced_rv = 0

    def add_handlers(self, handlers: EventHandlers, *, replay: bool = True) -> None:
        """Register handlers; when already started, replays the cache as adds (like client-go).

        `replay=False` skips that replay: only for a caller that has already told its handlers
        about every cached object, so the adds would change nothing."""
        self._handlers.append(handlers)
        on_add = handlers.on_add
        self._runs.settle()
        if replay and self._unsubscribe is not None and on_add is not None:
            if handlers.on_replay is not None:
                handlers.on_replay(list(self._cache.items()))
                return
            for obj in list(self._cache.values()):
                on_add(obj)

    def start(self) -> None:
        """List the current state (delivering adds) and subscribe to later changes."""
        if self._unsubscribe is not None:
            return
        # the informer itself is the handler: callable per event, with deliver_many for groups
        self._unsubscribe = self._store.subscribe(self, self.resource)
        keyed, self._synced_rv = self._listing()
        cache, every = self._cache, self._handlers
        count, adds = -1, []
        for key, obj in keyed:
            cache[key] = obj
            if len(every) != count:  # a handler set added by a handler gets the later adds too
                count = len(every)
                adds = [h.on_add for h in every if h.on_add is not None]
            for on_add in adds:
                on_add(obj)
            if len(every) != count:  # added while obj was delivered: a loop over `every` tells them too
                added = count
                while added < len(every):
                    late = every[added].on_add
                    if late is not None:
                        late(obj)
                    added += 1

    def _listing(self) -> tuple[list[tuple[tuple[str, str], JSON]], int]:
        """The store's listing for this informer, each object with its cache key (object_key),
        and its resourceVersion: from the store's `list_keyed` when the informer is unfiltered
        (the keys the store holds them by), else from `list`."""
        namespace, labels, fields = self._selectors
        if not namespace and not labels and not fields:
            return self._store.list_keyed(self.resource)
        listed = self._store.list(
            self.resource, namespace=namespace, label_selector=labels, field_selector=fields
        )
        return [(object_key(obj), obj) for obj in listed.items], int(listed.resource_version)

    @property
    def started(self) -> bool:
        """Whether the cache is listed and following the store (until `stop`)."""
        return self._unsubscribe is not None

    @property
    def unfiltered(self) -> bool:
        """Whether the cache holds every object of the resource (no namespace or selector)."""
        namespace, labels, fields = self._selectors
        return not namespace and not labels and not fields

    def stop(self) -> None:
        self._runs.settle()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def __call__(self, event: WatchEvent) -> None:
        """The store's handler: one committed change."""
        if event.resource_version <= self._synced_rv:
            return
        self._runs.settle()
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

    _on_event = __call__

    def deliver_many(self, events: list[WatchEvent]) -> None:
        """The store's handler for a group of changes (store.watch.Dispatcher): the cache follows
        them all, then each handler set is told in order, a group of plain updates through
        on_update_many when it has one. (A handler may so find the cache ahead of the change it
        is told about, as with client-go, whose handlers lag behind the indexer.)"""
        self._runs.settle()
        pairs, changes = self._follow(events)
        if changes is None:
            if pairs:
                self._tell_updates(pairs)
            return
        for handlers in self._handlers:
            self._tell(handlers, changes)

    def deliver_field_group(self, group: FieldWriteGroup) -> None:
        """The store's handler for a field-write group (store.watch.Dispatcher): `deliver_many` of
        its events. The usual group (lease renewals: updates of cached objects that stay in the
        watched namespace, none before the listing) is followed from the group's lists at once,
        as `_follow_updates` would take its events one by one; any other takes the events."""
        if self._filter.namespace_only and group.first_rv > self._synced_rv:
            runs = self._runs
            run = runs.rewritten_by(group.olds)
            if run is not None:  # the next round of a run: its objects are the group's olds
                olds = run.news
                runs.advance(run, group.news)
                self._tell_field_updates(run.keys, olds, group.news, group)
                return
            runs.settle_any_of(group.keys)
            # every object cached: each in the watched namespace, and there still (a field write
            # keeps the metadata), so each event is an update `_follow_updates` takes as it is
            cache, keys = self._cache, group.keys
            try:
                # (a missing key stops it: the cached objects themselves are not looked at)
                olds_cached: list[JSON] | None = list(map(cache.__getitem__, keys))
            except KeyError:
                olds_cached = None
            if olds_cached is not None:
                news = group.news
                if not runs.start(keys, olds_cached, news):
                    cache.update(zip(keys, news, strict=True))
                self._tell_field_updates(keys, olds_cached, news, group)
                return
        self.deliver_many(group.events())

    def _tell_field_updates(
        self, keys: list[tuple[str, str]], olds: list[JSON], news: list[JSON], group: FieldWriteGroup
    ) -> None:
        """Each handler set in order about a field-write group's updates (olds: as cached)."""
        pairs: list[tuple[JSON, JSON]] | None = None
        for handlers in self._handlers:
            if handlers.on_field_updates is not None:
                handlers.on_field_updates(keys, olds, news, group.path, group.value)
                continue
            if pairs is None:
                pairs = list(zip(olds, news, strict=True))
            self._tell_updates(pairs, handlers)

    def _tell_updates(self, pairs: list[tuple[JSON, JSON]], only: EventHandlers | None = None) -> None:
        """Each handler set in order (or `only` that one) about a group of plain updates
        (on_update_many if it has one)."""
        for handlers in self._handlers if only is None else (only,):
            if handlers.on_update_many is not None:
                handlers.on_update_many(pairs)
            else:
                for old, obj in pairs:
                    if handlers.on_update is not None:
                        handlers.on_update(old, obj)

    def _follow(
        self, events: list[WatchEvent]
    ) -> tuple[list[tuple[JSON, JSON]], list[tuple[EventType, JSON | None, JSON]] | None]:
        """Apply a group of changes to the cache: the (old, new) pairs of its updates and, unless
        it held only updates (then None), every change in order.

        An update of an object in and out of the watched namespace (what `WatchFilter.translate`
        decides from the namespaces alone when there is no selector) is taken as it is; every
        other event is translated."""
        pairs: list[tuple[JSON, JSON]] = []
        start = self._follow_updates(events, pairs) if self._filter.namespace_only else 0
        if start == len(events):
            return pairs, None
        return self._follow_from(events, start, pairs)

    def _follow_updates(self, events: list[WatchEvent], pairs: list[tuple[JSON, JSON]]) -> int:
        """The usual group (lease renewals): apply its leading run of updates of cached objects
        that stay in the watched namespace, each of which `_follow_from` would take as it is,
        adding their (old, new) pairs; returns how many events that run holds."""
        synced, cache, append = self._synced_rv, self._cache, pairs.append
        namespace = self._filter.namespace
        done = 0
        for event in events:
            before = event.old_object
            obj = event.object
            meta = obj.get("metadata")
            if before is None or event.type != "MODIFIED" or type(meta) is not dict:
                break
            space, name = meta.get("namespace"), meta.get("name")
            if type(space) is not str or type(name) is not str or event.resource_version <= synced:
                break
            if namespace and (space != namespace or (before.get("metadata") or {}).get("namespace") != space):
                break
            key = (space, name)
            old = cache.get(key)
            if old is None:
                break
            cache[key] = obj
            append((old, obj))
            done += 1
        return done

    def _follow_from(
        self, events: list[WatchEvent], start: int, pairs: list[tuple[JSON, JSON]]
    ) -> tuple[list[tuple[JSON, JSON]], list[tuple[EventType, JSON | None, JSON]] | None]:
        """`_follow` from `events[start]` on, after `pairs` (the leading updates already applied)."""
        synced, translate, cache = self._synced_rv, self._filter.translate, self._cache
        plain = self._filter.namespace_only
        namespace = self._filter.namespace
        changes: list[tuple[EventType, JSON | None, JSON]] | None = None
        for event in events[start:] if start else events:
            if event.resource_version <= synced:
                continue
            before = event.old_object
            if plain and before is not None and event.type == "MODIFIED":
                obj = event.object
                meta = obj.get("metadata") or {}
                space, name = meta.get("namespace") or "", meta.get("name") or ""
                key = (space, name) if type(space) is str and type(name) is str else object_key(obj)
                if namespace:
                    inside = meta.get("namespace", "") == namespace
                    if inside != ((before.get("metadata") or {}).get("namespace", "") == namespace):
                        seen = translate(event)  # moved in or out: an ADDED or DELETED
                        if seen is None:
                            continue
                        kind: EventType = seen.type
                        key = object_key(obj)
                    elif not inside:
                        continue
                    else:
                        kind = "MODIFIED"
                else:
                    kind = "MODIFIED"
            else:
                seen = translate(event)
                if seen is None or seen.type == "BOOKMARK":
                    continue
                obj, kind = seen.object, seen.type
                key = object_key(obj)
            old = cache.get(key)
            if kind == "DELETED":
                cache.pop(key, None)
                if changes is None:
                    changes = [("MODIFIED", o, n) for o, n in pairs]
                changes.append(("DELETED", old, obj))
                continue
            cache[key] = obj
            if old is None:
                if changes is None:
                    changes = [("MODIFIED", o, n) for o, n in pairs]
                changes.append(("ADDED", None, obj))
                continue
            pairs.append((old, obj))
            if changes is not None:
                changes.append(("MODIFIED", old, obj))
        return pairs, changes

    @staticmethod
    def _tell(handlers: EventHandlers, changes: list[tuple[EventType, JSON | None, JSON]]) -> None:
        """Each change through the handler method `__call__` would have used."""
        for kind, old, obj in changes:
            if kind == "DELETED":
                if handlers.on_delete is not None:
                    handlers.on_delete(old if old is not None else obj)
            elif old is None:
                if handlers.on_add is not None:
                    handlers.on_add(obj)
            elif handlers.on_update is not None:
                handlers.on_update(old, obj)

    # cache reads ---------------------------------------------------------------------------

    def get(self, namespace: str, name: str) -> JSON | None:
        key = (namespace, name)
        if self._runs:
            held = self._runs.get(key)
            if held is not None:
                return held
        return self._cache.get(key)

    def keys(self) -> KeysView[tuple[str, str]]:
        """A live view of the cache keys ((namespace, name) of each cached object)."""
        return self._cache.keys()

    def items(self) -> Iterator[JSON]:
        self._runs.settle()
        return iter(list(self._cache.values()))

    def keyed_items(self) -> list[tuple[tuple[str, str], JSON]]:
        """The cached objects with their keys (object_key of each), in cache order."""
        self._runs.settle()
        return list(self._cache.items())

    def __len__(self) -> int:
        return len(self._cache)

    def __bool__(self) -> bool:
        # An informer is always "given" even while its cache is empty: components write
        # `informer or Informer(...)`, which __len__ alone would turn into a second informer.
        return True
