"""The in-memory store's field writes (`SetField` commits: a node lease's spec.renewTime,
~1.2 M times in a simulated hour at 5,000 nodes) and the `FieldWriteGroup` that carries their
events.

A `SetField` commit stores exactly what the `Update`s of its `with_field` copies store: each with
the object's own metadata (so its resourceVersion is the precondition), its own resourceVersion
and watch event, in order. The memory store writes the updates of current objects without
comparing whole objects and publishes them as one batch with its compact view
(`changes.FieldWriteGroup`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from itertools import repeat

from kubetaint.store.changes import FieldPath, FieldWriteGroup
from kubetaint.store.interface import JSON, WatchEvent, with_field

__all__ = [  # FieldPath and FieldWriteGroup are the change stream's (.changes)
    "FieldPath",
    "FieldWriteGroup",
    "HistoryEntry",
    "add_to_history",
    "field_version",
    "history_events",
    "with_field",
    "write_current_run",
]


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
