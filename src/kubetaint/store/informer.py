"""Informers: a cache of one resource kept current from a store, telling handlers about each
batch of changes (mirrors client-go tools/cache SharedIndexInformer, in-process).

An informer subscribes to its store's change stream (`store.changes.ChangeBatch`, one per commit)
and tells each handler every batch its cache followed as one `Changes`: the changes in order, each
(kind, key, old, object). A component registers ONE handler (`add_handlers`): a function of
`Changes`, or `EventHandlers(on_add=..., on_update=..., on_delete=...)`, the per-object adapter for a
component that does not need batches. Starting lists the store and tells the handlers one batch of
ADDED; a handler added to a started informer is told the cache as one batch of ADDED (a replay:
the handlers added while the cache stays as it is are told the same batch).

Handlers run synchronously, in commit order, inside the store's dispatch: they must only record
work (enqueue, schedule on the clock) and never block. Cached objects are read-only. When a
handler is told, the cache already holds the whole batch (as client-go's handlers lag behind its
indexer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, KeysView
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Literal

from kubetaint.speed.reference import reference_mode
from kubetaint.store.changes import ChangeBatch, FieldWriteGroup
from kubetaint.store.interface import JSON, Store, object_key
from kubetaint.store.watch import WatchFilter

Key = tuple[str, str]
ChangeKind = Literal["ADDED", "MODIFIED", "DELETED"]
#: One change as an informer tells it: (kind, key, old, object), `key` the object's cache key
#: ((namespace, name)). ADDED: old is None, object the new one. MODIFIED: old is the object the
#: cache held, object the new one. DELETED: old is the object the cache held (None when it held
#: none), object the last one known (old when there is one).
Change = tuple[ChangeKind, Key, JSON | None, JSON]


class Changes(list[Change]):
    """One batch of changes as an informer's cache followed it, in commit order (read-only).

    `field_write` is the compact view of a field write whose every update the cache followed
    (keys, olds as cached, news, path and value): a handler may read it instead of the changes.
    `only` is the one kind every change has (None when they differ or there is none), e.g.
    "ADDED" for a listing or a replay."""

    __slots__ = ("field_write", "only")

    def __init__(self, changes: Iterable[Change] = (), *, only: ChangeKind | bool | None = False) -> None:
        """`only`: the kind every change has when the caller knows it (False: looked at here)."""
        super().__init__(changes)
        self.field_write: FieldWriteGroup | None = None
        if only is False:
            kinds = {change[0] for change in self}
            only = kinds.pop() if len(kinds) == 1 else None
        self.only: ChangeKind | None = only  # type: ignore[assignment]  # (not False by now)

    @classmethod
    def added(cls, items: Iterable[tuple[Key, JSON]]) -> Changes:
        """A batch of ADDED (a listing or a replay) of (key, object) pairs, in order."""
        return cls([("ADDED", key, None, obj) for key, obj in items], only="ADDED")

    @classmethod
    def of_field_write(cls, group: FieldWriteGroup) -> Changes:
        """The updates of a field write (the cache held `group`'s olds), listed only when read: a
        handler reading `field_write` alone costs nothing per update."""
        return _FieldWriteChanges(group)

    def runs(self) -> Iterator[tuple[ChangeKind, list[Change]]]:
        """The changes in maximal runs of one kind, in order: (kind, run)."""
        only = self.only
        if only is not None:
            yield only, self
            return
        run: list[Change] = []
        for change in self:
            if run and change[0] != run[0][0]:
                yield run[0][0], run
                run = []
            run.append(change)
        if run:
            yield run[0][0], run

    def __repr__(self) -> str:
        return f"Changes({list(self)!r})"


class _FieldWriteChanges(Changes):
    """Speeds up a field write's batch (a heartbeat round, ~3,300 updates, to handlers that read
    `field_write` alone): `Changes.of_field_write`, its changes listed when first read (off in
    reference mode, where informers get no field writes: each update is its own batch)."""

    __slots__ = ("_listed",)

    def __init__(self, group: FieldWriteGroup) -> None:
        super().__init__(only="MODIFIED")
        self.field_write = group
        self._listed = False

    def _list(self) -> None:
        if not self._listed:
            self._listed = True
            group = self.field_write
            assert group is not None
            self.extend(zip(repeat("MODIFIED"), group.each_key(), group.olds, group.news))

    def __iter__(self) -> Iterator[Change]:
        self._list()
        return super().__iter__()

    def __reversed__(self) -> Iterator[Change]:
        self._list()
        return super().__reversed__()

    def __len__(self) -> int:
        group = self.field_write
        return len(group) if group is not None and not self._listed else super().__len__()

    def __getitem__(self, index: Any) -> Any:
        self._list()
        return super().__getitem__(index)

    def __contains__(self, change: object) -> bool:
        self._list()
        return super().__contains__(change)

    def __eq__(self, other: object) -> bool:
        self._list()
        return super().__eq__(other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]  # (a list)

    def index(self, *args: Any) -> int:
        self._list()
        return super().index(*args)

    def count(self, change: Change) -> int:
        self._list()
        return super().count(change)

    def copy(self) -> list[Change]:
        self._list()
        return super().copy()


#: A component's handler of an informer: told every batch of changes, in order.
ChangesHandler = Callable[[Changes], None]

OnAdd = Callable[[JSON], None]
OnUpdate = Callable[[JSON, JSON], None]
OnDelete = Callable[[JSON], None]


@dataclass(frozen=True, slots=True)
class EventHandlers:
    """The per-object adapter: a `ChangesHandler` that tells each change of a batch, in order,
    to on_add(object), on_update(old, new) or on_delete(last known object). (An informer tells
    a change alone to these callbacks directly.)"""

    on_add: OnAdd | None = None
    on_update: OnUpdate | None = None
    on_delete: OnDelete | None = None

    def __call__(self, changes: Changes) -> None:
        on_add, on_update, on_delete = self.on_add, self.on_update, self.on_delete
        for kind, _, old, obj in changes:
            if kind == "MODIFIED":
                if on_update is not None:
                    on_update(old, obj)  # type: ignore[arg-type]  # (a MODIFIED change has its old)
            elif kind == "ADDED":
                if on_add is not None:
                    on_add(obj)
            elif on_delete is not None:
                on_delete(obj)


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
        self._filter = WatchFilter.parse(resource, namespace, label_selector, field_selector)
        self._selectors = (namespace, label_selector, field_selector)
        #: whether the namespace alone decides what the cache holds (no label or field selector)
        self._plain = self._filter.namespace_only
        self._cache: dict[Key, JSON] = {}
        #: replaced (never changed) when a handler is added: a batch is told to the handlers
        #: registered when it arrived; one added meanwhile is told the cache instead (a replay)
        self._handlers: tuple[ChangesHandler, ...] = ()
        #: per kind of change, what a change alone of that kind calls, in handler order: a batch
        #: handler (True: told a batch of one) or an EventHandlers' callback for that kind
        #: (False: called directly; handlers without one are left out)
        self._one: dict[str, tuple[tuple[Callable[..., None], bool], ...]] = {
            "ADDED": (),
            "MODIFIED": (),
            "DELETED": (),
        }
        self._unsubscribe: Callable[[], None] | None = None
        self._synced_rv = 0
        #: reference mode (read when the informer is made): a field write is followed event by
        #: event, each looked up in the cache
        self._reference = reference_mode()
        #: the cache as one batch of ADDED, told to every handler added while the cache stays
        #: as it is (None once a batch is followed): the handlers of a start share one replay
        #: (in reference mode each handler is told one built for it)
        self._replay: Changes | None = None

    def add_handlers(self, handler: ChangesHandler, *, replay: bool = True) -> None:
        """Register a component's handler; when already started, tells it the cache as one batch
        of ADDED (like client-go).

        `replay=False` skips that replay: only for a caller that has already told its handler
        about every cached object, so the adds would change nothing."""
        self._handlers = (*self._handlers, handler)
        one = self._one
        if isinstance(handler, EventHandlers):
            for kind, callback in (
                ("ADDED", handler.on_add),
                ("MODIFIED", handler.on_update),
                ("DELETED", handler.on_delete),
            ):
                if callback is not None:
                    one[kind] = (*one[kind], (callback, False))
        else:
            for kind in one:
                one[kind] = (*one[kind], (handler, True))
        if replay and self._unsubscribe is not None and self._cache:
            cached = self._replay
            if cached is None:
                cached = Changes.added(list(self._cache.items()))
                if not self._reference:
                    self._replay = cached
            handler(cached)

    def start(self) -> None:
        """List the current state (told as one batch of ADDED) and follow later changes."""
        if self._unsubscribe is not None:
            return
        told = self._handlers
        self._unsubscribe = self._store.subscribe(self._follow_batch, self.resource)
        keyed, self._synced_rv = self._listing()
        fresh = not self._cache
        self._cache.update(keyed)
        self._replay = None
        if keyed:
            listing = Changes.added(keyed)
            if fresh and not self._reference:  # the listing is the cache, in its order
                self._replay = listing
            for handler in told:
                handler(listing)

    def _listing(self) -> tuple[list[tuple[Key, JSON]], int]:
        """The store's listing for this informer, each object with its cache key (object_key),
        and its resourceVersion: from the store's `list_keyed` when the informer is unfiltered
        (the keys the store holds them by), else from `list`."""
        store = self._store
        if self.unfiltered:
            return store.list_keyed(self.resource)
        namespace, labels, fields = self._selectors
        listed = store.list(self.resource, namespace=namespace, label_selector=labels, field_selector=fields)
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
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # following the store -------------------------------------------------------------------

    def _follow_batch(self, batch: ChangeBatch) -> None:
        """The store's subscriber: the cache follows one committed batch, then each handler is
        told the changes it made.

        An update of an object in and out of the watched namespace (what `WatchFilter.translate`
        decides from the namespaces alone when there is no selector) is taken as it is; every
        other event is translated."""
        cache = self._cache
        self._replay = None
        group = batch.field_write
        plain = self._plain
        if group is not None and plain and group.first_rv > self._synced_rv and not self._reference:
            namespace = self._filter.namespace
            if not namespace or group.namespaces() == {namespace}:
                # The cache has followed every batch since its listing, so it holds each key's
                # old object; a field write keeps the metadata (the namespace among it): every
                # update is a MODIFIED of the cached object.
                cache.update(zip(group.each_key(), group.news, strict=True))
                if self._handlers:
                    told = Changes.of_field_write(group)
                    for handler in self._handlers:
                        handler(told)
                return
        synced, translate = self._synced_rv, self._filter.translate
        namespace = self._filter.namespace
        changes: list[Change] = []
        append = changes.append
        kind: str
        for event in batch.events:
            if event.resource_version <= synced:
                continue
            before = event.old_object
            if plain and before is not None and event.type == "MODIFIED":
                obj = event.object
                kind = "MODIFIED"
                if namespace:
                    inside = (obj.get("metadata") or {}).get("namespace", "") == namespace
                    if inside != ((before.get("metadata") or {}).get("namespace", "") == namespace):
                        seen = translate(event)  # moved in or out: an ADDED or DELETED
                        if seen is None:
                            continue
                        kind = seen.type
                    elif not inside:
                        continue
            else:
                seen = translate(event)
                if seen is None or seen.type == "BOOKMARK":
                    continue
                obj, kind = seen.object, seen.type
            meta = obj.get("metadata") or {}  # object_key(obj), inline
            space, name = meta.get("namespace") or "", meta.get("name") or ""
            key = (space, name) if type(space) is str and type(name) is str else object_key(obj)
            old = cache.get(key)
            if kind == "DELETED":
                cache.pop(key, None)
                append(("DELETED", key, old, old if old is not None else obj))
                continue
            cache[key] = obj
            append(("ADDED", key, None, obj) if old is None else ("MODIFIED", key, old, obj))
        if not changes or not self._handlers:
            return
        if len(changes) > 1:
            told = Changes(changes)
            for handler in self._handlers:
                handler(told)
            return
        # a change alone (most writes): the per-object callbacks are called directly
        kind, _, old, obj = changes[0]
        batch_of_one: Changes | None = None
        updated = kind == "MODIFIED"
        for call, batched in self._one[kind]:
            if batched:
                if batch_of_one is None:
                    batch_of_one = Changes(changes, only=kind)
                call(batch_of_one)
            elif updated:
                call(old, obj)
            else:
                call(obj)

    # cache reads ---------------------------------------------------------------------------

    def get(self, namespace: str, name: str) -> JSON | None:
        return self._cache.get((namespace, name))

    @property
    def get_keyed(self) -> Callable[[Key], JSON | None]:
        """The cache's lookup by key ((namespace, name)): the cached object or None. A function to
        keep for many lookups (`map(informer.get_keyed, keys)`); it reads the cache as it is."""
        return self._cache.get

    def keys(self) -> KeysView[Key]:
        """A live view of the cache keys ((namespace, name) of each cached object)."""
        return self._cache.keys()

    def items(self) -> Iterator[JSON]:
        return iter(list(self._cache.values()))

    def keyed_items(self) -> list[tuple[Key, JSON]]:
        """The cached objects with their keys (object_key of each), in cache order."""
        return list(self._cache.items())

    def __len__(self) -> int:
        return len(self._cache)

    def __bool__(self) -> bool:
        # An informer is always "given" even while its cache is empty: components write
        # `informer or Informer(...)`, which __len__ alone would turn into a second informer.
        return True
