"""MemoryStore's field writes (mixed into `kubetaint.store.memory.MemoryStore`): a commit of one
`SetField` (a round of node lease renewals is one). It stores exactly what the `Update`s of its
`with_field` copies store, with the same resourceVersions, events and history; the updates of
current objects are published as one batch with its compact view, a `FieldWriteGroup` (the one
update of a batch that writes one object, as its plain event).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from itertools import islice

from kubetaint.api import errors
from kubetaint.store.changes import ChangeBatch, FieldPath, FieldWriteGroup
from kubetaint.store.fieldwrite import (
    HistoryEntry,
    add_to_history,
    field_version,
    with_field,
    write_current_run,
)
from kubetaint.store.interface import JSON, WatchEvent
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
        history holds the group itself, `fieldwrite.add_to_history`), while every write is of a
        current object. A batch that writes one object (a
        status round writes a lease, then a node, node after node) commits its one event as
        `update` does: a group of one would only cost its handlers more."""
        part, field = path
        if part == "metadata":
            raise ValueError("a field write sets a field outside metadata")
        if len(objects) == 1 and resource != "pods":
            written = self._write_one(resource, objects[0], path, value)
            if written is not None:
                return [written], None
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

    def _write_one(
        self,
        resource: str,
        obj: JSON,
        path: FieldPath,
        value: object,
    ) -> JSON | None:
        """`_field_write` of one object that is plainly current (stored under its key; no
        generation to bump; the store's system fields) and whose
        field differs from `value`: the general loop's write and single event, without its
        lists. The stored object; None (nothing done) for any other object, which the general
        loop takes."""
        part, field = path
        meta = obj.get("metadata")
        current = obj.get(part)
        if type(meta) is not dict or type(current) is not dict:
            return None
        namespace = meta.get("namespace") or ""
        name = meta.get("name") or ""
        if (
            type(namespace) is not str
            or type(name) is not str
            or "generation" in meta
            or "uid" not in meta
            or "creationTimestamp" not in meta
            or "resourceVersion" not in meta
            or (field in current and current[field] == value)
        ):
            return None
        with self._lock:
            bucket = self._objects.get(resource, {}).get(namespace)
            if bucket is None or bucket.get(name) is not obj:
                return None
            rv = self._rv = self._rv + 1
            stored = field_version(obj, meta, path, value, str(rv))
            bucket[name] = stored
            event = WatchEvent("MODIFIED", resource, stored, rv, obj)
            self._history.append(event)
            self._dispatcher.publish(ChangeBatch((event,)))
        self._dispatcher.dispatch()
        return stored
