"""Recording Kubernetes Events (core/v1) through a store, as client-go's record.EventRecorder does.

Event names follow upstream's makeEvent (`<involved name>.<hex of the event time's UnixNano>`). Every
recorder sharing a clock takes its nanoseconds from one sequence that never repeats, so events of
one instant of a virtual clock (where upstream's wall clock would still have moved on) get distinct
names and none is lost to a name collision. The same event recorded again (same source, involved
object, type, reason and message: the EventLogger of client-go's EventCorrelator) bumps `count` and
`lastTimestamp` of the first one instead of creating another (a new one when the first is gone).
Each write is made as recordToSink makes it (`store.recording`): a refused one is dropped (events
are best effort), one the server did not get is tried again after a sleep.
"""

from __future__ import annotations

import random
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle, format_time
from kubetaint.store.interface import JSON, Create, Store, StoreError
from kubetaint.store.recording import CORE_SLEEPS, Attempts, patch_event

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


class EventRecorder:
    """Writes Events for one component (`source.component`, e.g. `taint-eviction-controller`);
    `rng` draws the sleeps before the writes an unreachable server did not get."""

    def __init__(
        self, store: Store, clock: Clock, component: str, host: str = "", *, rng: random.Random | None = None
    ) -> None:
        self._store = store
        self._clock = clock
        self.component = component
        self.host = host
        self._stamps = stamps_of(clock)
        self._seen: OrderedDict[tuple[str, ...], _Observation] = OrderedDict()
        self._lock = threading.RLock()
        self._attempts = Attempts(clock, rng or random.Random(0), CORE_SLEEPS)

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
        event is about, e.g. `spec.containers{c}`); returns the stored Event or None (refused,
        or not written yet)."""
        now = self._clock.now()
        key, event = self._prepare(involved, kind, now, (event_type, reason, message, field_path))
        repeated, written = self._repeat(key, event, now)
        if repeated:
            return written
        return self._create(key, event, now)

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
            repeated, written = self._repeat(key, event, now)
            results.append(written)
            if not repeated:
                fresh.append((len(results) - 1, key, event))
        for _, _, event in fresh:
            self._rename(event, now)
        outcomes = _committed(self._store, [event for _, _, event in fresh])
        for (index, key, event), outcome in zip(fresh, outcomes, strict=True):
            results[index] = self._created(key, event, now, outcome)
        return results

    def stop(self) -> None:
        """Drop the writes still to come (a shut down broadcaster's)."""
        self._attempts.stop()

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

    def _repeat(self, key: tuple[str, ...], event: JSON, now: float) -> tuple[bool, JSON | None]:
        """Whether `event` repeats one this recorder wrote (then recorded as its bump: count + 1,
        this event's time; or, when that one is gone, created anew) and what was written."""
        with self._lock:
            seen = self._seen.get(key)
            if seen is None:
                return False, None
            self._seen.move_to_end(key)
            stamp_text = str(event["lastTimestamp"])
            gone = False

            def write() -> JSON:
                nonlocal gone
                if not gone:
                    try:
                        return patch_event(
                            self._store, seen.namespace, seen.name, self._bump(seen, stamp_text)
                        )
                    except StatusError as error:
                        if error.code != 404:
                            raise
                    gone = True
                    self._rename(event, now)
                return self._store.create("events", event)

            def recorded(stored: JSON) -> None:
                if gone:
                    self._remember(key, stored)
                else:
                    seen.count = int(stored.get("count") or seen.count + 1)

            return True, self._attempts.record(
                write, rename=lambda: self._rename(event, now), recorded=recorded
            )

    def _remember(self, key: tuple[str, ...], created: JSON) -> None:
        meta = created["metadata"]
        with self._lock:
            self._seen[key] = _Observation(1, meta["name"], meta["namespace"])
            self._seen.move_to_end(key)
            while len(self._seen) > MAX_LRU_CACHE_ENTRIES:
                self._seen.popitem(last=False)

    def _rename(self, event: JSON, now: float) -> None:
        """Name `event` for its object and the next nanosecond of `now`."""
        event["metadata"]["name"] = f"{event['involvedObject']['name']}.{self._stamps.next(now):x}"

    def _create(self, key: tuple[str, ...], event: JSON, now: float) -> JSON | None:
        """Create `event` under the next name of its object (a later one when that is taken)."""
        self._rename(event, now)
        return self._attempts.record(
            lambda: self._store.create("events", event),
            rename=lambda: self._rename(event, now),
            recorded=lambda created: self._remember(key, created),
        )

    def _created(
        self, key: tuple[str, ...], event: JSON, now: float, outcome: JSON | StatusError | StoreError
    ) -> JSON | None:
        """What became of `event`, created in a commit with others: remembered when stored, created
        on its own when its name was taken or the server not reached, dropped when refused."""
        if isinstance(outcome, StoreError) or (
            isinstance(outcome, StatusError) and outcome.reason == "AlreadyExists"
        ):
            return self._create(key, event, now)
        if isinstance(outcome, StatusError):
            return self._attempts.record(_raising(outcome))
        self._remember(key, outcome)
        return outcome

    @staticmethod
    def _bump(seen: _Observation, stamp_text: str) -> Callable[[JSON], JSON]:
        """The EventLogger's patch of a repeated event: count + 1 and the new lastTimestamp."""

        def bumped(current: JSON) -> JSON:
            updated = {
                **current,
                "count": int(current.get("count") or seen.count) + 1,
                "lastTimestamp": stamp_text,
            }
            updated["metadata"] = dict(current["metadata"])
            return updated

        return bumped


def _committed(store: Store, events: list[JSON]) -> list[JSON | StatusError | StoreError]:
    """The outcome of each create of `events` in one commit (the commit's StoreError for each when
    the store was not reached)."""
    if not events:
        return []
    try:
        return list(store.commit([Create("events", event) for event in events]))
    except StoreError as error:
        return [error] * len(events)


def _raising(error: Exception) -> Callable[[], JSON]:
    """A write whose outcome is already known to be `error` (a refusal a commit answered)."""

    def write() -> JSON:
        raise error

    return write


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
            if not entry.recorder._repeat(entry.key, entry.event, entry.now)[0]:
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
        for entry in fresh:
            entry.recorder._rename(entry.event, entry.now)
        outcomes = _committed(self._store, [entry.event for entry in fresh])
        for entry, outcome in zip(fresh, outcomes, strict=True):
            entry.recorder._created(entry.key, entry.event, entry.now, outcome)
