"""MemoryStore's field writes (mixed into `kubetaint.store.memory.MemoryStore`): a commit of one
`SetField` (a round of node lease renewals is one, ~1.2 M renewals in a simulated hour at 5,000
nodes), and field writes among a commit's other operations (`_set_in`). It stores exactly what
the `Update`s of its `with_field` copies store, with the same resourceVersions, events and
history; the updates of current objects are published as one batch with its compact view, a
`FieldWriteGroup` (the one update of a batch that writes one object, as its plain event), and
stand in the store's bounded history as the group itself (`HistoryEntry`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import count, repeat

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
        """A commit of one `SetField` of several objects (`MemoryStore.commit`), up to its first
        failure: the stored objects and that failure (None: none). The run of objects from the
        first that are plainly current (`write_current_run`: the usual lease renewal round) is
        written in one tight loop; while it is the whole write, the batch is published with its
        compact view, a `FieldWriteGroup` whose events are built only for the subscribers that
        read them (the history holds the group itself, `add_to_history`; a batch that writes one
        object commits its one event as `update` does: a group of one would only cost its
        handlers more). Any other object takes `_set_in`'s way, and the batch is its events."""
        part, _ = path
        if part == "metadata":
            raise ValueError("a field write sets a field outside metadata")
        names: list[str] = []
        olds: list[JSON] = []
        news: list[JSON] = []
        failure: errors.StatusError | None = None
        with self._lock:
            first_rv = self._rv
            namespace = ""  # the run's one namespace
            if resource != "pods":  # (a pod write keeps the store's node index: `_set_in`)
                spaces = self._objects.get(resource, {})
                namespace = write_current_run(
                    spaces, objects, path=path, value=value, first_rv=first_rv, written=(names, olds, news)
                )
            self._rv = first_rv + len(news)
            results: list[Result] = list(news)
            if len(news) == len(objects):
                if len(news) == 1:  # one update: its event, as the store's update commits it
                    event = WatchEvent("MODIFIED", resource, news[0], first_rv + 1, olds[0])
                    self._history.append(event)
                    self._dispatcher.publish(ChangeBatch((event,)))
                elif news:
                    group = FieldWriteGroup.in_namespace(
                        resource, namespace, names, olds, news, first_rv=first_rv + 1, path=path, value=value
                    )
                    add_to_history(self._history, group)  # its events built only when read
                    self._dispatcher.publish(ChangeBatch.field_write_of(group))
            else:
                events: list[WatchEvent] = [
                    WatchEvent("MODIFIED", resource, new, rv, old)
                    for rv, old, new in zip(count(first_rv + 1), olds, news)
                ]
                rest = SetField(resource, objects[len(news) :], path, value)
                if not self._set_in(rest, results, events, stop_at_failure=True):
                    failure = results.pop()  # type: ignore[assignment]  # (the failure it stopped at)
                if events:
                    self._history.extend(events)
                    self._dispatcher.publish(ChangeBatch(events))
        self._dispatcher.dispatch()
        return results, failure  # type: ignore[return-value]  # (stored objects only by now)

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
    written: tuple[list[str], list[JSON], list[JSON]],
) -> str:
    """A store's field write of the run of `objects`, from the first, that are plainly current:
    each held by its store bucket (`spaces`: namespace -> name -> object) under its name, in the
    first object's namespace, without a generation to bump, its field differing from `value`.
    Each is replaced by a copy with the field set and resourceVersion `first_rv` + 1, + 2, ...;
    its name, old and new object are appended to `written` (names, olds, news). The run stops
    before the first other object, which the store's general loop takes. Returns the run's
    namespace.

    The store's own checks of such an object (metadata a dict with uid, creationTimestamp and
    resourceVersion) hold for every object it stores, so only identity with the stored object is
    looked at: a lease renewal round is ~3,300 of these."""
    names, olds, news = written
    try:
        namespace = objects[0]["metadata"].get("namespace") or ""
        bucket = spaces[namespace]
    except (IndexError, KeyError, TypeError, AttributeError):
        return ""
    if type(namespace) is not str:
        return ""
    part, field = path
    copy, absent = dict.copy, _ABSENT
    current_of = bucket.get
    append_name, append_new = names.append, news.append
    start = len(news)
    texts = map(str, range(first_rv + 1, first_rv + 1 + len(objects)))
    try:
        for obj, rv_text in zip(objects, texts, strict=True):
            meta = obj["metadata"]
            name = meta["name"]
            if current_of(name) is not obj or "generation" in meta:
                break
            current = obj[part]
            if current.get(field, absent) == value:
                break  # unchanged: the general loop's no-op
            changed = copy(current)  # (a TypeError unless a dict)
            changed[field] = value
            new_meta = copy(meta)
            new_meta["resourceVersion"] = rv_text
            stored = copy(obj)
            stored[part] = changed
            stored["metadata"] = new_meta
            bucket[name] = stored
            append_name(name)
            append_new(stored)
    except (KeyError, TypeError, AttributeError):
        pass  # an object of another shape: the general loop takes it
    olds.extend(objects[: len(news) - start])
    return namespace


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
