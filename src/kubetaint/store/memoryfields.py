"""MemoryStore's field writes (mixed into `kubetaint.store.memory.MemoryStore`): a commit of one
`SetField` (a round of node lease renewals is one, ~1.2 M renewals in a simulated hour at 5,000
nodes), and field writes among a commit's other operations (`_set_in`). It stores exactly what
the `Update`s of its `with_field` copies store, with the same resourceVersions, events and
history; the updates of current objects are published as one batch with its compact view, a
`FieldWriteGroup` (the one update of a batch that writes one object, as its plain event), and
stand in the store's bounded history as the group itself (`WatchHistory.add_group`).

A round that renews the objects the last one wrote stores its versions in the dicts of the
versions the last one replaced where nothing can reach those any more (recycled versions:
`kubetaint.store.recycling`; off in reference mode).
"""

from __future__ import annotations

import threading
from itertools import count

from kubetaint.api import errors
from kubetaint.store.changes import ChangeBatch, FieldPath, FieldWriteGroup
from kubetaint.store.interface import JSON, Result, SetField, WatchEvent, with_field
from kubetaint.store.recycling import Spare, Spares, recycle_run
from kubetaint.store.watch import Dispatcher
from kubetaint.store.watchhistory import WatchHistory


class FieldWrites:
    """Field writes over a MemoryStore's state (the attributes and methods below are its)."""

    _objects: dict[str, dict[str, dict[str, JSON]]]
    _rv: int
    _history: WatchHistory
    _spares: Spares
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
        read them (the history holds the group itself, `WatchHistory.add_group`; a batch that writes one
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
                spare = self._spares.take(resource, objects, path, self._history)
                namespace = write_current_run(
                    spaces,
                    objects,
                    path=path,
                    value=value,
                    first_rv=first_rv,
                    written=(names, olds, news),
                    spare=spare,
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
                    self._history.add_group(group)  # its events built only when read
                    self._spares.keep(group)
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
    `rv_text`. The run loops of `write_current_run` and `recycling.recycle_run` build the same
    inline (they write a renewal round)."""
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
    spare: Spare | None = None,
) -> str:
    """A store's field write of the run of `objects`, from the first, that are plainly current:
    each held by its store bucket (`spaces`: namespace -> name -> object) under its name, in the
    first object's namespace, without a generation to bump, its field differing from `value`.
    Each is replaced by a copy with the field set and resourceVersion `first_rv` + 1, + 2, ...
    (or by the version it replaced, recycled: `spare`, see `recycling.recycle_run`); its name, old
    and new object are appended to `written` (names, olds, news). The run stops before the first
    other object, which the store's general loop takes. Returns the run's namespace.

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
    start = len(news)
    rest = objects
    if spare is not None and spare.namespace == namespace:
        if not recycle_run(
            bucket, objects, spare, path=path, value=value, first_rv=first_rv, written=written
        ):
            olds.extend(objects[: len(news) - start])
            return namespace  # (stopped before an object the general loop takes)
        done = len(news) - start
        rest = objects[done:]
        first_rv += done
    part, field = path
    copy, absent = dict.copy, _ABSENT
    current_of = bucket.get
    append_name, append_new = names.append, news.append
    texts = map(str, range(first_rv + 1, first_rv + 1 + len(rest)))
    try:
        for obj, rv_text in zip(rest, texts, strict=True):
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
