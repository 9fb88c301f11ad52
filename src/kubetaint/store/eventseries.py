"""Recording events as client-go's `tools/events` does (events.k8s.io/v1): kube-scheduler's
recorder, which `NewEventBroadcasterAdapter` picks when the API server serves events.k8s.io/v1.

An `EventsV1Recorder` (a broadcaster's `new_recorder(reporting_controller)`) makes one event per
call (recorderImpl.makeEvent: name `<regarding name>.<hex UnixNano>`, `eventTime` now, the
reporting controller and instance `<controller>-<hostname>`, action, reason, regarding, related,
note, type). The `EventsV1Broadcaster` hands each event to its watchers (every call, as the
broadcaster's watchers see them) and records it through its sink (recordToSink):

- an event with no isomorphic one cached (same type, action, reason, reporting controller and
  instance, regarding reference — its resourceVersion and fieldPath included — and related
  reference; the note is not part of the key) is created and cached;
- the second isomorphic event turns the cached one into a series (`count` 2, `lastObservedTime`
  now) written at once as a patch of the first Event's `series`;
- later ones only count in the cache (`count` + 1, `lastObservedTime`): the series is written
  again every `REFRESH_TIME` (refreshExistingEventSeries), and a final time when it has not been
  observed for `FINISH_TIME` (finishSeries, checked every `FINISH_TIME`), which also forgets it;
  a single event is forgotten `FINISH_TIME` after its `eventTime`. The Event keeps the note of
  the first one.

What is written is the Event as the API server stores it and serves it in core/v1 (the
conversion of pkg/apis/events/v1: regarding is `involvedObject`, note is `message`,
reportingController is `reportingComponent`; the deprecated fields are unset: `source` `{}`,
`firstTimestamp` and `lastTimestamp` null, no `count`), through its `EventSink`: a store
(`StoreSink`) or an API server's events.k8s.io/v1 (`store.remote_events`). Each write is made as
attemptRecording makes it (`store.recording`): a refused one is dropped (events are best effort),
one the server did not get is tried again after a sleep; the periodic writes of the series try
once (refreshExistingEventSeries, finishSeries)."""

from __future__ import annotations

import random
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle, format_micro_time
from kubetaint.store.events import object_reference, stamps_of
from kubetaint.store.interface import JSON, Store
from kubetaint.store.recording import EVENTS_V1_SLEEPS, Attempts, Write, patch_event, record_event

#: finishTime: a series not observed for this long is written a last time and forgotten.
FINISH_TIME = 6 * 60.0
#: refreshTime: how often every series is written again.
REFRESH_TIME = 30 * 60.0

EventKey = tuple[Any, ...]
#: A watcher of a broadcaster: called with each event recorded (core/v1 form, a fresh dict).
EventWatcher = Callable[[JSON], None]


_REFERENCE_FIELDS = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")


def _reference_key(ref: Mapping[str, Any] | None) -> tuple[str, ...]:
    ref = ref or {}
    return tuple(str(ref.get(field) or "") for field in _REFERENCE_FIELDS)


def _reference_of(key: tuple[str, ...]) -> JSON:
    """The ObjectReference a `_reference_key` was made of (as `object_reference` spells it)."""
    ref = dict(zip(_REFERENCE_FIELDS, key, strict=True))
    for optional in ("namespace", "fieldPath"):
        if not ref[optional]:
            del ref[optional]
    return ref


def event_key(event: Mapping[str, Any]) -> EventKey:
    """getKey: what makes two events isomorphic (the note is not part of it)."""
    return (
        event.get("type") or "",
        event.get("action") or "",
        event.get("reason") or "",
        event.get("reportingComponent") or "",
        event.get("reportingInstance") or "",
        _reference_key(event.get("involvedObject")),
        _reference_key(event.get("related")),
    )


def default_reporting_instance(reporting_controller: str) -> str:
    """NewRecorder's reportingInstance: `<controller>-<hostname>`."""
    return f"{reporting_controller}-{socket.gethostname()}"


@dataclass(slots=True)
class _Cached:
    """What the broadcaster's cache keeps of an event (besides its key): where it is stored,
    what it said and when, and its series (`count` 0: a single event). Small, so that the events
    of every pod scheduled in the last minutes cost little memory."""

    name: str
    namespace: str
    note: str
    event_time: float
    event_time_text: str
    count: int = 0
    last_observed: float = 0.0

    def series(self) -> JSON:
        return {"count": self.count, "lastObservedTime": format_micro_time(self.last_observed)}


def _event_of(key: EventKey, cached: _Cached) -> JSON:
    """The cached event as the recorder made it (core/v1 form), with its series."""
    event_type, action, reason, controller, instance, regarding, related = key
    event: JSON = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": cached.name, "namespace": cached.namespace},
        "involvedObject": _reference_of(regarding),
        "reason": reason,
        "message": cached.note,
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "type": event_type,
        "eventTime": cached.event_time_text,
        "series": cached.series(),
        "action": action,
    }
    if any(related):
        event["related"] = _reference_of(related)
    event["reportingComponent"] = controller
    event["reportingInstance"] = instance
    return event


class EventSink(Protocol):
    """EventSink: where a broadcaster writes its events (each given and returned in the core/v1
    form the API server stores); a refusal is a StatusError, an unreachable server a StoreError."""

    def create(self, event: JSON) -> JSON:
        """Create `event`."""
        ...

    def patch_series(self, event: JSON) -> JSON:
        """Patch the `series` of `event` onto the stored Event of its name (a 404 StatusError
        when that is gone)."""
        ...


class StoreSink:
    """A store as the sink: the Events created in it, a series patched as a read and an update."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def create(self, event: JSON) -> JSON:
        return self._store.create("events", event)

    def patch_series(self, event: JSON) -> JSON:
        meta = event["metadata"]
        series = event["series"]
        return patch_event(
            self._store, meta["namespace"], meta["name"], lambda current: {**current, "series": series}
        )


class EventsV1Broadcaster:
    """client-go's events.eventBroadcasterImpl on a sink and a clock (`rng` draws the sleeps
    before the writes an unreachable server did not get)."""

    def __init__(self, sink: EventSink, clock: Clock, *, rng: random.Random | None = None) -> None:
        self._sink = sink
        self._clock = clock
        self._attempts = Attempts(clock, rng or random.Random(0), EVENTS_V1_SLEEPS)
        self._stamps = stamps_of(clock)
        #: the cached events by isomorphic key
        self._cache: dict[EventKey, _Cached] = {}
        self._lock = threading.RLock()
        self._handles: list[Handle] = []
        #: called with every event recorded, before it is written (the broadcaster's watchers);
        #: the event handed over is read-only
        self.watchers: list[EventWatcher] = []

    def new_recorder(self, reporting_controller: str, reporting_instance: str = "") -> EventsV1Recorder:
        """NewRecorder: events reported by `reporting_controller` (instance: `<controller>-<hostname>`
        unless given)."""
        instance = reporting_instance or default_reporting_instance(reporting_controller)
        return EventsV1Recorder(self, reporting_controller, instance)

    def start(self) -> None:
        """StartRecordingToSink: refresh the series every REFRESH_TIME, finish them every
        FINISH_TIME (both first run at once, on an empty cache: nothing to do)."""
        if self._handles:
            return
        self._handles = [
            self._clock.call_later(FINISH_TIME, self._finish_periodically),
            self._clock.call_later(REFRESH_TIME, self._refresh_periodically),
        ]

    def stop(self) -> None:
        """Cancel the periodic writes and the tries still to come (the cache stays: a restart
        continues its series)."""
        for handle in self._handles:
            handle.cancel()
        self._handles = []
        self._attempts.stop()

    def _finish_periodically(self) -> None:
        self.finish_series()
        if self._handles:
            self._handles[0] = self._clock.call_later(FINISH_TIME, self._finish_periodically)

    def _refresh_periodically(self) -> None:
        self.refresh_series()
        if self._handles:
            self._handles[1] = self._clock.call_later(REFRESH_TIME, self._refresh_periodically)

    @property
    def cached(self) -> int:
        """How many events the broadcaster remembers (singles and series)."""
        return len(self._cache)

    def record(self, event: JSON, now: float) -> JSON | None:
        """Hand `event` (made at `now`) to the watchers and record it (recordToSink); returns what
        was written (None when nothing was: a repeat only counted, or a write refused)."""
        for watcher in self.watchers:
            watcher(event)
        key = event_key(event)
        with self._lock:
            cached = self._cache.get(key)
            if cached is None:
                meta = event["metadata"]
                cached = _Cached(meta["name"], meta["namespace"], event["message"], now, event["eventTime"])
                self._cache[key] = cached
                return self._create(event, cached)
            cached.last_observed = self._clock.now()
            if cached.count:
                cached.count += 1
                return None
            cached.count = 2
            return self._attempts.record(self._series_write(key, cached), series=True)

    def refresh_series(self) -> None:
        """refreshExistingEventSeries: write every series again (its current count), once."""
        with self._lock:
            for key, cached in list(self._cache.items()):
                if cached.count:
                    record_event(self._series_write(key, cached), series=True)

    def finish_series(self) -> None:
        """finishSeries: write a series a last time once not observed for FINISH_TIME, and forget
        it (unless the server was not reached: then the next check writes it); forget a single
        event FINISH_TIME after its eventTime."""
        horizon = self._clock.now() - FINISH_TIME
        with self._lock:
            for key, cached in list(self._cache.items()):
                if cached.count:
                    if cached.last_observed < horizon:
                        _, retry = record_event(self._series_write(key, cached), series=True)
                        if not retry:
                            del self._cache[key]
                elif cached.event_time < horizon:
                    del self._cache[key]

    def _series_write(self, key: EventKey, cached: _Cached) -> Write:
        """recordEvent's write of a series: its `series` patched onto the stored Event, or the
        Event created again (with its name) when it is gone."""

        def write() -> JSON:
            event = _event_of(key, cached)
            try:
                return self._sink.patch_series(event)
            except StatusError as error:
                if error.code != 404:
                    raise
            return self._sink.create(event)

        return write

    def _create(self, event: JSON, cached: _Cached) -> JSON | None:
        """The event created under its name, or a later nanosecond's when the name is taken
        (then the cache follows the name). The sink takes `event` over."""
        name = str(event["involvedObject"].get("name") or "")
        now = self._clock.now()
        current = [event]

        def rename() -> None:
            cached.name = f"{name}.{self._stamps.next(now):x}"
            current[0] = {**current[0], "metadata": {**current[0]["metadata"], "name": cached.name}}

        return self._attempts.record(lambda: self._sink.create(current[0]), rename=rename)


class EventsV1Recorder:
    """client-go's events.recorderImpl: `event(...)` is its Eventf."""

    def __init__(
        self, broadcaster: EventsV1Broadcaster, reporting_controller: str, reporting_instance: str
    ) -> None:
        self.broadcaster = broadcaster
        self.component = reporting_controller
        self.reporting_instance = reporting_instance
        self._stamped = (-1.0, "")

    def event(
        self,
        regarding: Mapping[str, Any],
        event_type: str,
        reason: str,
        note: str,
        kind: str = "",
        *,
        action: str,
        related: Mapping[str, Any] | None = None,
        related_kind: str = "",
    ) -> JSON | None:
        """Eventf(regarding, related, type, reason, action, note): record the event; returns the
        Event written (None when the repeat was only counted, or the write was refused)."""
        now = self.broadcaster._clock.now()
        event = self.make_event(
            regarding,
            event_type,
            reason,
            note,
            kind,
            now=now,
            action=action,
            related=related,
            related_kind=related_kind,
        )
        return self.broadcaster.record(event, now)

    def make_event(
        self,
        regarding: Mapping[str, Any],
        event_type: str,
        reason: str,
        note: str,
        kind: str,
        *,
        now: float,
        action: str,
        related: Mapping[str, Any] | None = None,
        related_kind: str = "",
    ) -> JSON:
        """makeEvent at `now`, in the core/v1 form the API server stores and serves."""
        if now != self._stamped[0]:  # (a virtual clock's instant: many events, one eventTime)
            self._stamped = (now, format_micro_time(now))
        ref = object_reference(regarding, kind)
        name = f"{ref['name']}.{self.broadcaster._stamps.next(now):x}"
        event: JSON = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": ref.get("namespace") or "default"},
            "involvedObject": ref,
            "reason": reason,
            "message": note,
            "source": {},
            "firstTimestamp": None,
            "lastTimestamp": None,
            "type": event_type,
            "eventTime": self._stamped[1],
            "action": action,
        }
        if related is not None:
            event["related"] = object_reference(related, related_kind)
        event["reportingComponent"] = self.component
        event["reportingInstance"] = self.reporting_instance
        return event
