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
`firstTimestamp` and `lastTimestamp` null, no `count`). A failed write is dropped (events are best
effort; upstream's retries of an unreachable server are not modelled: the store is reached or
refuses)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle, format_micro_time, parse_time
from kubetaint.store.events import object_reference, stamps_of
from kubetaint.store.interface import JSON, Store

#: finishTime: a series not observed for this long is written a last time and forgotten.
FINISH_TIME = 6 * 60.0
#: refreshTime: how often every series is written again.
REFRESH_TIME = 30 * 60.0
#: How many later nanoseconds a create tries when another process took the name (bounded).
_NAME_ATTEMPTS = 8
#: How many times a series write retries an update that lost a race with another writer.
_CONFLICT_ATTEMPTS = 4

EventKey = tuple[Any, ...]
#: A watcher of a broadcaster: called with each event recorded (core/v1 form, a fresh dict).
EventWatcher = Callable[[JSON], None]


def _reference_key(ref: Mapping[str, Any] | None) -> tuple[str, ...]:
    ref = ref or {}
    fields = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    return tuple(str(ref.get(field) or "") for field in fields)


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


def _copy(event: Mapping[str, Any]) -> JSON:
    """A copy of a cached event a store may take ownership of (its nested objects copied)."""
    copied = dict(event)
    for field in ("metadata", "involvedObject", "related", "series", "source"):
        if isinstance(copied.get(field), dict):
            copied[field] = dict(copied[field])
    return copied


def default_reporting_instance(reporting_controller: str) -> str:
    """NewRecorder's reportingInstance: `<controller>-<hostname>`."""
    return f"{reporting_controller}-{socket.gethostname()}"


class EventsV1Broadcaster:
    """client-go's events.eventBroadcasterImpl on a store (the sink) and a clock."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._stamps = stamps_of(clock)
        #: the cached events by isomorphic key (core/v1 form, `series` once repeated)
        self._cache: dict[EventKey, JSON] = {}
        self._lock = threading.RLock()
        self._handles: list[Handle] = []
        #: called with every event recorded, before it is written (the broadcaster's watchers)
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
        """Cancel the periodic writes (the cache stays: a restart continues its series)."""
        for handle in self._handles:
            handle.cancel()
        self._handles = []

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

    def record(self, event: JSON) -> JSON | None:
        """Hand `event` to the watchers and record it (recordToSink); returns what was written
        (None when nothing was: a repeat only counted, or a write refused)."""
        for watcher in self.watchers:
            watcher(_copy(event))
        now = self._clock.now()
        key = event_key(event)
        with self._lock:
            cached = self._cache.get(key)
            if cached is None:
                self._cache[key] = event
                return self._create(event)
            series = cached.get("series")
            if series is not None:
                series["count"] = int(series.get("count") or 0) + 1
                series["lastObservedTime"] = format_micro_time(now)
                return None
            cached["series"] = {"count": 2, "lastObservedTime": format_micro_time(now)}
            return self._write_series(cached)

    def refresh_series(self) -> None:
        """refreshExistingEventSeries: write every series again (its current count)."""
        with self._lock:
            for key, event in list(self._cache.items()):
                if event.get("series") is not None:
                    written = self._write_series(event)
                    if written is not None:
                        self._cache[key] = {**written, "series": dict(written.get("series") or {})}

    def finish_series(self) -> None:
        """finishSeries: write a series a last time once not observed for FINISH_TIME, and forget
        it; forget a single event FINISH_TIME after its eventTime."""
        horizon = self._clock.now() - FINISH_TIME
        with self._lock:
            for key, event in list(self._cache.items()):
                series = event.get("series")
                if series is not None:
                    if parse_time(str(series["lastObservedTime"])) < horizon:
                        self._write_series(event)
                        del self._cache[key]
                elif parse_time(str(event.get("eventTime"))) < horizon:
                    del self._cache[key]

    def _write_series(self, event: Mapping[str, Any]) -> JSON | None:
        """recordEvent of a series: its `series` patched onto the stored Event, or the Event
        created again (with its name) when it is gone."""
        meta = event["metadata"]
        series = dict(event["series"])
        for _ in range(_CONFLICT_ATTEMPTS):
            try:
                current = self._store.get("events", meta["namespace"], meta["name"])
            except StatusError as error:
                if error.code != 404:
                    return None
                recreated = {**_copy(event), "series": series}
                recreated["metadata"].pop("resourceVersion", None)
                try:
                    return self._store.create("events", recreated)
                except StatusError:
                    return None
            try:
                return self._store.update("events", {**current, "series": series})
            except StatusError as error:
                if error.code != 409:
                    return None
        return None

    def _create(self, cached: JSON) -> JSON | None:
        """The cached event created under its name, or a later nanosecond's when the name is
        taken (then the cache follows the name)."""
        name = str(cached["involvedObject"].get("name") or "")
        now = self._clock.now()
        for attempt in range(_NAME_ATTEMPTS):
            if attempt:
                cached["metadata"] = {**cached["metadata"], "name": f"{name}.{self._stamps.next(now):x}"}
            try:
                return self._store.create("events", _copy(cached))
            except StatusError as error:
                if error.reason != "AlreadyExists":
                    return None
        return None


class EventsV1Recorder:
    """client-go's events.recorderImpl: `event(...)` is its Eventf."""

    def __init__(
        self, broadcaster: EventsV1Broadcaster, reporting_controller: str, reporting_instance: str
    ) -> None:
        self.broadcaster = broadcaster
        self.component = reporting_controller
        self.reporting_instance = reporting_instance

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
        return self.broadcaster.record(
            self.make_event(
                regarding,
                event_type,
                reason,
                note,
                kind,
                action=action,
                related=related,
                related_kind=related_kind,
            )
        )

    def make_event(
        self,
        regarding: Mapping[str, Any],
        event_type: str,
        reason: str,
        note: str,
        kind: str,
        *,
        action: str,
        related: Mapping[str, Any] | None = None,
        related_kind: str = "",
    ) -> JSON:
        """makeEvent, in the core/v1 form the API server stores and serves."""
        now = self.broadcaster._clock.now()
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
            "eventTime": format_micro_time(now),
            "action": action,
        }
        if related is not None:
            event["related"] = object_reference(related, related_kind)
        event["reportingComponent"] = self.component
        event["reportingInstance"] = self.reporting_instance
        return event
