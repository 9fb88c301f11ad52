"""Events a component records on a remote API server as client-go's
`events.NewEventBroadcasterAdapter` records them (kube-scheduler's broadcaster): through
events.k8s.io/v1 when the server serves it (discovery), its isomorphic events as EventSeries
(`EventsV1Broadcaster` on an `EventsV1Sink`); through core/v1 otherwise (`EventRecorder`
behind an `EventRecorderAdapter`)."""

from __future__ import annotations

import logging
import random

from kubetaint.api.events_conversion import API_VERSION, GROUP, to_served, to_stored
from kubetaint.clock.base import Clock
from kubetaint.store.events import EventRecorder
from kubetaint.store.events_adapter import EventRecorderAdapter, EventsRecorder
from kubetaint.store.eventseries import EventsV1Broadcaster
from kubetaint.store.interface import JSON
from kubetaint.store.remote import RemoteStore, resource_path

log = logging.getLogger(__name__)

#: The events.k8s.io/v1 Events' resource (what `resource_path` takes).
RESOURCE = f"events.{GROUP}"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"


class EventsV1Sink:
    """EventSinkImpl: Events created through events.k8s.io/v1 (POST), a series written as a
    strategic merge patch of `series` (createPatchBytesForSeries's two-way merge patch of the
    Event without and with its series); Events given and returned in the core/v1 form."""

    def __init__(self, store: RemoteStore) -> None:
        self._store = store

    def create(self, event: JSON) -> JSON:
        meta = event["metadata"]
        body = to_served(event)
        body["metadata"] = {"name": meta["name"], "namespace": meta["namespace"]}
        created: JSON = self._store.request("POST", resource_path(RESOURCE, meta["namespace"]), body=body)
        return to_stored(created)

    def patch_series(self, event: JSON) -> JSON:
        meta = event["metadata"]
        path = resource_path(RESOURCE, meta["namespace"], meta["name"])
        body = {"series": event["series"]}
        patched: JSON = self._store.request("PATCH", path, body=body, content_type=STRATEGIC_MERGE_PATCH)
        return to_stored(patched)


class EventBroadcasterAdapter:
    """NewEventBroadcasterAdapter on `store`'s server: its recorders write events.k8s.io/v1 when
    the server serves it, core/v1 otherwise (`rng` draws the sleeps before the writes an
    unreachable server did not get)."""

    def __init__(self, store: RemoteStore, clock: Clock, rng: random.Random) -> None:
        self._store = store
        self._clock = clock
        self._rng = rng
        #: the events.k8s.io/v1 broadcaster, None when the server does not serve events.k8s.io/v1
        self.events_v1: EventsV1Broadcaster | None = None
        if store.serves(API_VERSION):
            self.events_v1 = EventsV1Broadcaster(EventsV1Sink(store), clock, rng=rng)
        else:
            log.info("the API server does not serve %s: events are recorded through core/v1", API_VERSION)
        self._core: list[EventRecorder] = []

    def new_recorder(self, name: str) -> EventsRecorder:
        """NewRecorder: events reported by `name` (instance `<name>-<hostname>`), or, in core/v1,
        from the source component `name`."""
        if self.events_v1 is not None:
            return self.events_v1.new_recorder(name)
        recorder = EventRecorder(self._store, self._clock, name, rng=self._rng)
        self._core.append(recorder)
        return EventRecorderAdapter(recorder)

    def start(self) -> None:
        """StartRecordingToSink (the series' periodic writes of events.k8s.io/v1)."""
        if self.events_v1 is not None:
            self.events_v1.start()

    def stop(self) -> None:
        """Shutdown: no more periodic writes, the tries still to come dropped."""
        if self.events_v1 is not None:
            self.events_v1.stop()
        for recorder in self._core:
            recorder.stop()
