"""Recording Kubernetes Events (core/v1) through a store, as client-go's record.EventRecorder does.

Event names follow upstream's makeEvent (`<involved name>.<hex of the event time's UnixNano>`). Every
recorder sharing a clock takes its nanoseconds from one sequence that never repeats, so events of
one instant of a virtual clock (where upstream's wall clock would still have moved on) get distinct
names and none is lost to a name collision. The same event recorded again (same source, involved
object, type, reason and message: the EventLogger of client-go's EventCorrelator) bumps `count` and
`lastTimestamp` of the first one instead of creating another. A failed write is dropped (events are
best effort).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle, format_time
from kubetaint.store.interface import JSON, Create, Store

_API_VERSIONS = {
    "Pod": "v1",
    "Node": "v1",
    "Namespace": "v1",
    "ReplicaSet": "apps/v1",
    "Deployment": "apps/v1",
    "DaemonSet": "apps/v1",
    "PodDisruptionBudget": "policy/v1",
}
#: One event of `EventRecorder.events`: its type, reason, message and field path ("" for none).
EventItem = tuple[str, str, str, str]
#: client-go's maxLruCacheEntries: how many distinct events one recorder remembers for counting.
MAX_LRU_CACHE_ENTRIES = 4096
#: How many later nanoseconds a create tries when another process took the name (bounded).
_NAME_ATTEMPTS = 8


class _Nanoseconds:
    """The nanosecond stamps handed out for one clock: the clock's, or one past the last stamp when
    the clock has not moved since (a virtual clock's instant, or two reads in one nanosecond)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = -1

    def next(self, now: float) -> int:
        stamp = int(now * 1_000_000_000)
        with self._lock:
            stamp = max(stamp, self._last + 1)
            self._last = stamp
        return stamp


_STAMPS: weakref.WeakKeyDictionary[Clock, _Nanoseconds] = weakref.WeakKeyDictionary()
_STAMPS_LOCK = threading.Lock()


def stamps_of(clock: Clock) -> _Nanoseconds:
    """The nanosecond sequence event names of `clock` take their stamps from."""
    with _STAMPS_LOCK:
        try:
            found = _STAMPS.get(clock)
            if found is None:
                found = _STAMPS[clock] = _Nanoseconds()
        except TypeError:  # a clock that cannot be weakly referenced keeps its own sequence
            return _Nanoseconds()
        return found


def object_reference(obj: Mapping[str, Any], kind: str = "", field_path: str = "") -> JSON:
    """reference.GetReference of a stored object (its kind: `kind`, else its own), with
    `field_path` (the part of it an event is about) when given."""
    meta = obj.get("metadata") or {}
    kind = kind or str(obj.get("kind") or "")
    ref: JSON = {
        "kind": kind,
        "namespace": str(meta.get("namespace") or ""),
        "name": str(meta.get("name") or ""),
        "uid": str(meta.get("uid") or ""),
        "apiVersion": str(obj.get("apiVersion") or _API_VERSIONS.get(kind, "v1")),
        "resourceVersion": str(meta.get("resourceVersion") or ""),
    }
    if not ref["namespace"]:
        del ref["namespace"]
    if field_path:
        ref["fieldPath"] = field_path
    return ref


@dataclass
class _Observation:
    """client-go's eventLog: what the recorder knows of an event it wrote."""

    count: int
    name: str
    namespace: str
    first_timestamp: str


class EventRecorder:
    """Writes Events for one component (`source.component`, e.g. `taint-eviction-controller`)."""

    def __init__(self, store: Store, clock: Clock, component: str, host: str = "") -> None:
        self._store = store
        self._clock = clock
        self.component = component
        self.host = host
        self._stamps = stamps_of(clock)
        self._seen: OrderedDict[tuple[str, ...], _Observation] = OrderedDict()
        self._lock = threading.Lock()

    def event(
        self,
        involved: Mapping[str, Any],
        event_type: str,
        reason: str,
        message: str,
        kind: str = "",
        *,
        field_path: str = "",
    ) -> JSON | None:
        """Record an event about `involved` (a stored object; `field_path`: the part of it the
        event is about, e.g. `spec.containers{c}`); returns the stored Event or None."""
        now = self._clock.now()
        key, event = self._prepare(involved, kind, now, (event_type, reason, message, field_path))
        bumped = self._bumped(key, event)
        if bumped is not None:
            return bumped
        created = self._create(event, str(event["involvedObject"]["name"]), now)
        if created is not None:
            self._remember(key, created)
        return created

    def events(
        self, batch: Sequence[tuple[Mapping[str, Any], Sequence[EventItem]]], kind: str = ""
    ) -> list[JSON | None]:
        """Record events about several objects (each object with its `(type, reason, message,
        field path)` items), as `event` records them one after another, the new ones created in
        one store commit (what a component's queued events cost when written together)."""
        now = self._clock.now()
        prepared = [
            (involved, *self._prepare(involved, kind, now, item))
            for involved, items in batch
            for item in items
        ]
        if len({key for _, key, _ in prepared}) < len(prepared):  # a repeat within: it counts on the first
            return [
                self.event(involved, *item[:3], kind, field_path=item[3])
                for involved, items in batch
                for item in items
            ]
        results: list[JSON | None] = []
        fresh: list[tuple[int, tuple[str, ...], JSON]] = []
        for _, key, event in prepared:
            results.append(self._bumped(key, event))
            if results[-1] is None:
                fresh.append((len(results) - 1, key, event))
        for _, _, event in fresh:
            event["metadata"]["name"] = f"{event['involvedObject']['name']}.{self._stamps.next(now):x}"
        outcomes = self._store.commit([Create("events", event) for _, _, event in fresh]) if fresh else []
        for (index, key, event), outcome in zip(fresh, outcomes, strict=True):
            created: JSON | None
            if isinstance(outcome, StatusError):
                retry = outcome.reason == "AlreadyExists"
                created = self._create(event, str(event["involvedObject"]["name"]), now) if retry else None
            else:
                created = outcome
            if created is not None:
                self._remember(key, created)
            results[index] = created
        return results

    def _prepare(
        self, involved: Mapping[str, Any], kind: str, now: float, item: EventItem
    ) -> tuple[tuple[str, ...], JSON]:
        """The correlation key and the new Event of one event about `involved` (no name yet)."""
        event_type, reason, message, field_path = item
        meta = involved.get("metadata") or {}
        involved_ref = object_reference(involved, kind, field_path)
        kind = involved_ref["kind"]
        key = (
            self.component,
            self.host,
            kind,
            involved_ref.get("namespace", ""),
            involved_ref["name"],
            involved_ref["uid"],
            involved_ref["apiVersion"],
            field_path,
            event_type,
            reason,
            message,
        )
        stamp_text = format_time(now)
        event: JSON = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "", "namespace": str(meta.get("namespace") or "default")},
            "involvedObject": involved_ref,
            "reason": reason,
            "message": message,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "firstTimestamp": stamp_text,
            "lastTimestamp": stamp_text,
            "count": 1,
            "type": event_type,
            "eventTime": None,
            "reportingComponent": self.component,
            "reportingInstance": self.host,
        }
        return key, event

    def _bumped(self, key: tuple[str, ...], event: JSON) -> JSON | None:
        """The first event of `key` bumped (count + 1, this event's time), or None when there is
        none to bump (then `event` is created)."""
        with self._lock:
            seen = self._seen.get(key)
            if seen is None:
                return None
            self._seen.move_to_end(key)
            bumped = self._bump(seen, str(event["lastTimestamp"]))
            if bumped is not None:
                seen.count = int(bumped.get("count") or seen.count + 1)
            return bumped

    def _remember(self, key: tuple[str, ...], created: JSON) -> None:
        meta = created["metadata"]
        with self._lock:
            self._seen[key] = _Observation(1, meta["name"], meta["namespace"], str(created["firstTimestamp"]))
            self._seen.move_to_end(key)
            while len(self._seen) > MAX_LRU_CACHE_ENTRIES:
                self._seen.popitem(last=False)

    def _create(self, event: JSON, involved_name: str, now: float) -> JSON | None:
        for _ in range(_NAME_ATTEMPTS):
            event["metadata"]["name"] = f"{involved_name}.{self._stamps.next(now):x}"
            try:
                return self._store.create("events", event)
            except StatusError as error:
                if error.reason != "AlreadyExists":
                    return None
        return None

    def _bump(self, seen: _Observation, stamp_text: str) -> JSON | None:
        """The EventLogger's patch of a repeated event: count + 1 and the new lastTimestamp on the
        first event's name. None when that event is gone (then a new one is created, as upstream)."""
        try:
            current = self._store.get("events", seen.namespace, seen.name)
        except StatusError:
            return None
        updated = {
            **current,
            "count": int(current.get("count") or seen.count) + 1,
            "lastTimestamp": stamp_text,
        }
        updated["metadata"] = dict(current["metadata"])
        try:
            return self._store.update("events", updated)
        except StatusError:
            return None


@dataclass
class _Queued:
    recorder: EventRecorder
    key: tuple[str, ...]
    event: JSON
    now: float


class EventQueue:
    """Events of several recorders written `delay` seconds after the first is queued, all in one
    store commit (client-go's broadcaster writes a component's events from its queue, not in the
    caller; writing those of many hollow kubelets together keeps them off the write path's
    per-commit cost). Each event keeps the time it was recorded at; a repeat is counted on the
    first as `EventRecorder.event` counts it."""

    def __init__(self, store: Store, clock: Clock, delay: float) -> None:
        self._store = store
        self._clock = clock
        self._delay = delay
        self._queued: list[_Queued] = []
        self._handle: Handle | None = None

    def add(
        self, recorder: EventRecorder, involved: Mapping[str, Any], items: Sequence[EventItem], kind: str
    ) -> None:
        """Queue `recorder`'s events about `involved` (each `(type, reason, message, field path)`)."""
        now = self._clock.now()
        for item in items:
            key, event = recorder._prepare(involved, kind, now, item)
            self._queued.append(_Queued(recorder, key, event, now))
        if self._handle is None:
            self._handle = self._clock.call_later(self._delay, self.flush)

    def flush(self) -> None:
        """Write what is queued: repeats bump their first event, the rest are created together
        (a repeat of an event created in this flush waits for that create)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        queued, self._queued = self._queued, []
        fresh: list[_Queued] = []
        keys: set[tuple[int, tuple[str, ...]]] = set()
        for entry in queued:
            if (id(entry.recorder), entry.key) in keys:
                self._create(fresh)
                fresh, keys = [], set()
            if entry.recorder._bumped(entry.key, entry.event) is None:
                fresh.append(entry)
                keys.add((id(entry.recorder), entry.key))
        self._create(fresh)

    def stop(self) -> None:
        """Drop what is queued (a stopped component's queue is lost with it)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._queued = []

    def _create(self, fresh: list[_Queued]) -> None:
        if not fresh:
            return
        for entry in fresh:
            name = entry.event["involvedObject"]["name"]
            entry.event["metadata"]["name"] = f"{name}.{entry.recorder._stamps.next(entry.now):x}"
        outcomes = self._store.commit([Create("events", entry.event) for entry in fresh])
        for entry, outcome in zip(fresh, outcomes, strict=True):
            created: JSON | None = outcome if not isinstance(outcome, StatusError) else None
            if isinstance(outcome, StatusError) and outcome.reason == "AlreadyExists":
                name = str(entry.event["involvedObject"]["name"])
                created = entry.recorder._create(entry.event, name, entry.now)
            if created is not None:
                entry.recorder._remember(entry.key, created)
