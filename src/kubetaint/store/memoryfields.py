"""MemoryStore's field writes (mixed into `kubetaint.store.memory.MemoryStore`): a commit of one
`SetField` (a round of node lease renewals is one, ~1.2 M renewals in a simulated hour at 5,000
nodes). It stores exactly what the `Update`s of its `with_field` copies store, with the same
resourceVersions, events and history; the updates of current objects are published as one batch
with its compact view, a `FieldWriteGroup` (the one update of a batch that writes one object, as
its plain event), and stand in the store's bounded history as the group itself (`HistoryEntry`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice, repeat

from kubetaint.api import errors
from kubetaint.store.changes import ChangeBatch, FieldPath, FieldWriteGroup
from kubetaint.store.interface import JSON, Result, SetField, WatchEvent, with_field
from kubetaint.store.watch import Dispatcher


class FieldWrites:
    """Field writes over a MemoryStore's state (the attributes and methods below are its)."""

    _objects: dict[str, dict[str, dict[str, JSON]]]
    _rv: int
    _history: deque[HistoryEntry]
    _dispatcher: Dispatcher
    _lock: threading.RLock

    def _update_in(
        self, resource: str, spaces: dict[str, dict[str, JSON]], obj: JSON, indexed: bool
    ) -> tuple[JSON, WatchEvent | None]:
        raise NotImplementedError

    def _index(self, resource: str, old: JSON | None, new: JSON | None) -> None:
        raise NotImplementedError

    def _field_write(
        self, resource: str, objects: list[JSON], path: FieldPath, value: object
    ) -> tuple[list[JSON], errors.StatusError | None]:
        """A commit of one `SetField` (`MemoryStore.commit`), up to its first failure: the stored
        objects and that failure (None: none). An object that is still the one stored under its
        key (identity: nobody wrote it since) needs no precondition check nor comparison: it is
        stored with the field set and a new resourceVersion; any other takes an update's way. The
        batch's events are published as one batch (`Dispatcher.publish`): with its compact view,
        a `FieldWriteGroup` whose events are built only for the subscribers that read them (the
        history holds the group itself, `add_to_history`), while every write is of a
        current object. A batch that writes one object commits its one event as `update` does: a
        group of one would only cost its handlers more (a commit of one object's field write
        takes `_set_in`'s way, `MemoryStore.commit`)."""
        part, field = path
        if part == "metadata":
            raise ValueError("a field write sets a field outside metadata")
        # the results; None while they are `news` (every object so far current and changed)
        stored_objects: list[JSON] | None = None
        # the writes of current objects, in order (a FieldWriteGroup) until one takes an update's
        # way: from then on the events are built as they are written
        keys: list[tuple[str, str]] = []
        olds: list[JSON] = []
        news: list[JSON] = []
        events: list[WatchEvent] | None = None
        failure: errors.StatusError | None = None
        indexed = resource == "pods"
        append_key, append_old, append_new = keys.append, olds.append, news.append
        with self._lock:
            spaces = self._objects.get(resource, {})
            first_rv = self._rv
            remaining: Iterable[JSON] = objects
            if not indexed and len(objects) > 1:
                # the usual renewal round: its plainly current prefix in one tight loop
                write_current_run(
                    spaces, objects, path=path, value=value, first_rv=first_rv, written=(keys, olds, news)
                )
                if news:
                    remaining = islice(objects, len(news), None)
            rv = first_rv + len(news)
            # the bucket of the last namespace looked up (the objects of a batch share one)
            last_namespace: object = None
            bucket: dict[str, JSON] | None = None
            for obj in remaining:
                meta = obj.get("metadata")
                current = obj.get(part)
                if type(meta) is dict and type(current) is dict:
                    namespace = meta.get("namespace") or ""
                    name = meta.get("name") or ""
                    if namespace is not last_namespace:
                        bucket = spaces.get(namespace) if type(namespace) is str else None
                        last_namespace = namespace
                    key = (namespace, name)
                    if (
                        bucket is not None
                        and type(name) is str
                        and bucket.get(name) is obj
                        and "generation" not in meta
                        and "uid" in meta
                        and "creationTimestamp" in meta
                        and "resourceVersion" in meta
                    ):
                        if field in current and current[field] == value:
                            # unchanged: no write, as update's no-op
                            if stored_objects is None:
                                stored_objects = news.copy()
                            stored_objects.append(obj)
                            continue
                        rv += 1
                        stored = field_version(obj, meta, path, value, str(rv))
                        bucket[name] = stored
                        if indexed:
                            self._index(resource, obj, stored)
                        if events is None:
                            append_key(key)
                            append_old(obj)
                            append_new(stored)
                            if stored_objects is not None:
                                stored_objects.append(stored)
                        else:
                            events.append(WatchEvent("MODIFIED", resource, stored, rv, obj))
                            assert stored_objects is not None  # set when events were
                            stored_objects.append(stored)
                        continue
                if events is None:
                    events = FieldWriteGroup(
                        resource, keys, olds, news, first_rv + 1, path=path, value=value
                    ).events()
                if stored_objects is None:
                    stored_objects = news.copy()
                self._rv = rv
                try:
                    written, event = self._update_in(resource, spaces, with_field(obj, path, value), indexed)
                except errors.StatusError as err:
                    failure = err
                    break
                finally:
                    rv = self._rv
                stored_objects.append(written)
                if event is not None:
                    events.append(event)
            self._rv = rv
            if events is None:
                if len(news) == 1:  # one update: its event, as the store's update commits it
                    event = WatchEvent("MODIFIED", resource, news[0], first_rv + 1, olds[0])
                    self._history.append(event)
                    self._dispatcher.publish(ChangeBatch((event,)))
                elif news:
                    group = FieldWriteGroup(resource, keys, olds, news, first_rv + 1, path=path, value=value)
                    add_to_history(self._history, group)  # its events built only when read
                    self._dispatcher.publish(ChangeBatch.field_write_of(group))
            elif events:
                self._history.extend(events)
                self._dispatcher.publish(ChangeBatch(events))
        self._dispatcher.dispatch()
        return (news.copy() if stored_objects is None else stored_objects), failure

    def _set_in(
        self, op: SetField, results: list[Result], events: list[WatchEvent], stop_at_failure: bool
    ) -> bool:
        """A field write among other operations of a commit (lock held): each object written as
        `_field_write` writes it, its result appended to `results` and its event to `events`.
        False when it stopped at a failure (`stop_at_failure`)."""
        resource, path, value = op.resource, op.path, op.value
        part, field = path
        if part == "metadata":
            raise ValueError("a field write sets a field outside metadata")
        indexed = resource == "pods"
        spaces = self._objects.get(resource, {})
        for obj in op.objects:
            meta = obj.get("metadata")
            current = obj.get(part)
            if type(meta) is dict and type(current) is dict:
                namespace = meta.get("namespace") or ""
                name = meta.get("name") or ""
                bucket = spaces.get(namespace) if type(namespace) is str else None
                if (
                    bucket is not None
                    and type(name) is str
                    and bucket.get(name) is obj
                    and "generation" not in meta
                    and "uid" in meta
                    and "creationTimestamp" in meta
                    and "resourceVersion" in meta
                ):
                    if field in current and current[field] == value:
                        results.append(obj)  # unchanged: no write, as update's no-op
                        continue
                    rv = self._rv = self._rv + 1
                    stored = field_version(obj, meta, path, value, str(rv))
                    bucket[name] = stored
                    if indexed:
                        self._index(resource, obj, stored)
                    results.append(stored)
                    events.append(WatchEvent("MODIFIED", resource, stored, rv, obj))
                    continue
            try:
                written, event = self._update_in(resource, spaces, with_field(obj, path, value), indexed)
            except errors.StatusError as err:
                results.append(err)
                if stop_at_failure:
                    return False
                continue
            results.append(written)
            if event is not None:
                events.append(event)
        return True


def field_version(obj: JSON, meta: JSON, path: FieldPath, value: object, rv_text: str) -> JSON:
    """The stored version a field write makes of the stored `obj` (its metadata `meta`, its
    `obj[part]` a dict): copies of obj, its part and its metadata (same keys, same order, as an
    update of `with_field(obj, path, value)` stores), the field set and the resourceVersion
    `rv_text`. The two run loops below build the same inline (they write a renewal round)."""
    part, field = path
    stored = obj.copy()
    changed = stored[part] = obj[part].copy()
    changed[field] = value
    new_meta = stored["metadata"] = meta.copy()
    new_meta["resourceVersion"] = rv_text
    return stored


#: Stands for a field an object does not have (equal to no value).
_ABSENT = object()


def write_current_run(
    spaces: dict[str, dict[str, JSON]],
    objects: list[JSON],
    *,
    path: FieldPath,
    value: object,
    first_rv: int,
    written: tuple[list[tuple[str, str]], list[JSON], list[JSON]],
) -> None:
    """A store's field write of the run of `objects`, from the first, that are plainly current:
    each held by its store bucket (`spaces`: namespace -> name -> object) under its name, in the
    first object's namespace, without a generation to bump, its field differing from `value`.
    Each is replaced by a copy with the field set and resourceVersion `first_rv` + 1, + 2, ...;
    its key, old and new object are appended to `written` (keys, olds, news). The run stops
    before the first other object, which the store's general loop takes.

    The store's own checks of such an object (metadata a dict with uid, creationTimestamp and
    resourceVersion) hold for every object it stores, so only identity with the stored object is
    looked at: a lease renewal round is ~3,300 of these."""
    keys, olds, news = written
    try:
        namespace = objects[0]["metadata"].get("namespace") or ""
        bucket = spaces[namespace]
    except (IndexError, KeyError, TypeError, AttributeError):
        return
    if type(namespace) is not str:
        return
    part, field = path
    copy, absent = dict.copy, _ABSENT
    current_of = bucket.get
    append_key, append_old, append_new = keys.append, olds.append, news.append
    texts = map(str, range(first_rv + 1, first_rv + 1 + len(objects)))
    try:
        for obj, rv_text in zip(objects, texts, strict=True):
            meta = obj["metadata"]
            name = meta["name"]
            if current_of(name) is not obj or "generation" in meta:
                return
            current = obj[part]
            if current.get(field, absent) == value:
                return  # unchanged: the general loop's no-op
            changed = copy(current)  # (a TypeError unless a dict)
            changed[field] = value
            new_meta = copy(meta)
            new_meta["resourceVersion"] = rv_text
            stored = copy(obj)
            stored[part] = changed
            stored["metadata"] = new_meta
            bucket[name] = stored
            append_key((namespace, name))
            append_old(obj)
            append_new(stored)
    except (KeyError, TypeError, AttributeError):
        return  # an object of another shape: the general loop takes it


#: A bounded history's entry: an event, or one of a field-write group's updates. A group stands in
#: its history as `len(group)` references to itself, in a row (the bound drops the oldest first):
#: a run of `k` references to a group holds the events of its last `k` updates, built only when
#: read (`history_events`).
HistoryEntry = WatchEvent | FieldWriteGroup


def add_to_history(history: deque[HistoryEntry], group: FieldWriteGroup) -> None:
    """Record `group`'s updates at the end of `history` (as extending it by `group.events()`
    would, without building them)."""
    count = len(group.news)
    bound = history.maxlen
    history.extend(repeat(group, count if bound is None else min(count, bound)))


def history_events(history: Iterable[HistoryEntry], since: int = -1) -> Iterator[WatchEvent]:
    """The events `history` holds (see `HistoryEntry`) after resourceVersion `since`, oldest first."""
    entries = list(history)
    size = len(entries)
    i = 0
    while i < size:
        entry = entries[i]
        if isinstance(entry, FieldWriteGroup):
            end = i + 1
            while end < size and entries[end] is entry:
                end += 1
            # the run's updates after `since`: the group's last ones
            wanted = min(end - i, entry.first_rv + len(entry.news) - 1 - since)
            if wanted > 0:
                yield from entry.tail(wanted)
            i = end
        else:
            if entry.resource_version > since:
                yield entry
            i += 1
