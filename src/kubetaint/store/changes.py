"""The change stream: what a store publishes when it commits, and what its subscribers receive.

Every commit yields one `ChangeBatch`: the watch events of the commit's changes, in commit order
(one event for a plain create, update or delete). A field write (the same field set to one value
on many objects: a round of lease renewals) also carries its compact view, a `FieldWriteGroup`
(keys, old and new objects, the field and the value), from which its events are built only when
someone reads them. A subscriber (`Store.subscribe`) is a `BatchHandler`: it receives every batch
of the resource it subscribed to, whole, in commit order (see docs/change-stream.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Literal, overload

JSON = dict[str, Any]
EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]
#: (part, field): `obj[part][field]`, e.g. ("spec", "renewTime")
FieldPath = tuple[str, str]


@dataclass(frozen=True, slots=True, init=False)
class WatchEvent:
    """One committed change (or a bookmark) for `resource` at `resource_version`."""

    type: EventType
    resource: str
    object: JSON
    resource_version: int
    #: The object before this change (None for ADDED and BOOKMARK); lets informers diff.
    old_object: JSON | None = None

    def __init__(
        self,
        type: EventType,
        resource: str,
        object: JSON,
        resource_version: int,
        old_object: JSON | None = None,
    ) -> None:
        # Every write makes one: the slot setters are twice as fast as the object.__setattr__
        # calls a generated frozen __init__ makes.
        _set_type(self, type)
        _set_resource(self, resource)
        _set_object(self, object)
        _set_resource_version(self, resource_version)
        _set_old_object(self, old_object)


_SlotSetter = Callable[[WatchEvent, Any], None]
_set_type: _SlotSetter = vars(WatchEvent)["type"].__set__
_set_resource: _SlotSetter = vars(WatchEvent)["resource"].__set__
_set_object: _SlotSetter = vars(WatchEvent)["object"].__set__
_set_resource_version: _SlotSetter = vars(WatchEvent)["resource_version"].__set__
_set_old_object: _SlotSetter = vars(WatchEvent)["old_object"].__set__


class FieldWriteGroup:
    """The compact view of a field write's committed updates: `olds[i]` was replaced by `news[i]`
    under `keys[i]` ((namespace, name)) at resourceVersion `first_rv + i`, each a MODIFIED event
    of `resource`; `news[i]` is `olds[i]` with `[part][field]` (`path`) set to `value` and a new
    resourceVersion.

    The events are built only for whoever asks (`events`, `tail`): an informer follows the group
    from its three lists; a store's bounded history needs only its tail. A group of one namespace
    (`in_namespace`: a round of lease renewals) holds its names, its keys built when asked."""

    __slots__ = (
        "_events",
        "_keys",
        "_names",
        "_namespace",
        "_namespaces",
        "_tail",
        "first_rv",
        "news",
        "olds",
        "path",
        "resource",
        "value",
    )

    def __init__(
        self,
        resource: str,
        keys: list[tuple[str, str]],
        olds: list[JSON],
        news: list[JSON],
        first_rv: int,
        *,
        path: FieldPath,
        value: object,
    ) -> None:
        self.resource = resource
        self.path = path
        self.value = value
        self._keys: list[tuple[str, str]] | None = keys
        self._names: list[str] | None = None
        self._namespace: str | None = None
        self.olds = olds
        self.news = news
        self.first_rv = first_rv
        self._events: list[WatchEvent] | None = None
        self._tail: list[WatchEvent] = []  # the events of the last len(_tail) updates
        self._namespaces: frozenset[str] | None = None

    @classmethod
    def in_namespace(
        cls,
        resource: str,
        namespace: str,
        names: list[str],
        olds: list[JSON],
        news: list[JSON],
        *,
        first_rv: int,
        path: FieldPath,
        value: object,
    ) -> FieldWriteGroup:
        """The group of updates of the objects `names` of `namespace`."""
        group = cls(resource, [], olds, news, first_rv, path=path, value=value)
        group._keys = None
        group._names = names
        group._namespace = namespace
        group._namespaces = frozenset((namespace,))
        return group

    def __len__(self) -> int:
        return len(self.news)

    @property
    def keys(self) -> list[tuple[str, str]]:
        """The (namespace, name) key of each update, in order (read-only)."""
        keys = self._keys
        if keys is None:
            keys = self._keys = list(self.each_key())
        return keys

    @property
    def names(self) -> list[str]:
        """The name of each update's object, in order (read-only)."""
        names = self._names
        if names is None:
            names = self._names = [key[1] for key in self.keys]
        return names

    def each_key(self) -> Iterator[tuple[str, str]]:
        """The keys, in order, without keeping them (for one pass)."""
        if self._keys is not None:
            return iter(self._keys)
        assert self._names is not None and self._namespace is not None
        return zip(repeat(self._namespace), self._names)

    def namespaces(self) -> frozenset[str]:
        """The namespaces of the keys (found once, for every informer that asks)."""
        spaces = self._namespaces
        if spaces is None:
            spaces = self._namespaces = frozenset([key[0] for key in self.keys])
        return spaces

    def _build(self, start: int, stop: int) -> list[WatchEvent]:
        resource, olds, news, rv = self.resource, self.olds, self.news, self.first_rv
        return [WatchEvent("MODIFIED", resource, news[i], rv + i, olds[i]) for i in range(start, stop)]

    def tail(self, count: int | None) -> list[WatchEvent]:
        """The events of the last `count` updates (None: all of them), in order."""
        size = len(self.news)
        count = size if count is None else max(0, min(count, size))
        tail = self._tail
        if count > len(tail):
            tail = self._tail = self._build(size - count, size - len(tail)) + tail
        return tail[len(tail) - count :] if count < len(tail) else tail

    def events(self) -> list[WatchEvent]:
        """Every update's event, in commit order (built once; read-only)."""
        events = self._events
        if events is None:
            events = self._events = self.tail(None)
        return events


class ChangeBatch(Sequence[WatchEvent]):
    """The watch events of one commit, in commit order: what a store publishes
    (`watch.Dispatcher.publish`) and what every subscriber receives.

    Build one with `ChangeBatch(events)` (any resources; read-only from then on), or
    `ChangeBatch.field_write_of(group)` for a field write: then `field_write` is its compact view
    and the events are built from it only when read. `resource` is the resource of every event
    when they share one (None for a batch of several resources or none)."""

    __slots__ = ("_events", "field_write", "resource")

    def __init__(self, events: Sequence[WatchEvent]) -> None:
        self._events: Sequence[WatchEvent] | None = events
        self.field_write: FieldWriteGroup | None = None
        first = events[0].resource if events else None
        if first is not None and len(events) > 1:
            for event in events:
                if event.resource != first:
                    first = None
                    break
        self.resource: str | None = first

    @classmethod
    def field_write_of(cls, group: FieldWriteGroup) -> ChangeBatch:
        """The batch of a field write (its events built from `group` when first read)."""
        batch = cls.__new__(cls)
        batch._events = None
        batch.field_write = group
        batch.resource = group.resource
        return batch

    @property
    def events(self) -> Sequence[WatchEvent]:
        """The events, in commit order."""
        events = self._events
        if events is None:
            assert self.field_write is not None
            events = self._events = self.field_write.events()
        return events

    def only(self, resource: str) -> ChangeBatch | None:
        """The batch of this one's events of `resource` (itself when they all are; None when
        none is)."""
        if self.resource == resource:
            return self
        if self.resource is not None:
            return None
        mine = [event for event in self.events if event.resource == resource]
        return ChangeBatch(mine) if mine else None

    def __len__(self) -> int:
        events = self._events
        if events is None:
            assert self.field_write is not None
            return len(self.field_write)
        return len(events)

    def __iter__(self) -> Iterator[WatchEvent]:
        return iter(self.events)

    @overload
    def __getitem__(self, index: int) -> WatchEvent: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[WatchEvent]: ...

    def __getitem__(self, index: int | slice) -> WatchEvent | Sequence[WatchEvent]:
        return self.events[index]

    def __repr__(self) -> str:
        return f"ChangeBatch({list(self.events)!r})"


#: A subscriber of a store: receives every batch of the resource it subscribed to, in commit order.
BatchHandler = Callable[[ChangeBatch], None]


def each_event(handler: Callable[[WatchEvent], None]) -> BatchHandler:
    """A subscriber that hands `handler` the events of each batch one by one, in order (for a
    subscriber that does not need batches)."""

    def deliver(batch: ChangeBatch) -> None:
        for event in batch.events:
            handler(event)

    return deliver
