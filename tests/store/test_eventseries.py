"""Event recording as client-go's tools/events does (events.k8s.io/v1, kube-scheduler's recorder):
isomorphic events become an EventSeries on the first Event, written at the second, then at each
refresh and when the series finishes (ported from eventseries_test.go, with the cache timings)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.clock.base import format_micro_time
from kubetaint.store.eventseries import (
    FINISH_TIME,
    REFRESH_TIME,
    EventsV1Broadcaster,
    EventsV1Recorder,
    StoreSink,
)
from kubetaint.store.interface import JSON
from kubetaint.store.memory import MemoryStore

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "foo", "namespace": "baz", "uid": "bar", "resourceVersion": "7"},
}
PREEMPTOR: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "big", "namespace": "baz", "uid": "u-big", "resourceVersion": "9"},
}


class Writes(MemoryStore):
    """A store counting the writes of Events (creates and updates), refusing them when told."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__(clock)
        self.creates = 0
        self.updates = 0
        self.refuse = False

    def create(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        if resource == "events":
            self.creates += 1
            if self.refuse:
                raise StatusError(500, "InternalError", "refused")
        return super().create(resource, obj, dry_run=dry_run)

    def update(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        if resource == "events":
            self.updates += 1
            if self.refuse:
                raise StatusError(500, "InternalError", "refused")
        return super().update(resource, obj, dry_run=dry_run)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def store(clock: VirtualClock) -> Writes:
    return Writes(clock)


@pytest.fixture
def broadcaster(store: Writes, clock: VirtualClock) -> EventsV1Broadcaster:
    events = EventsV1Broadcaster(StoreSink(store), clock)
    events.start()
    return events


@pytest.fixture
def recorder(broadcaster: EventsV1Broadcaster) -> EventsV1Recorder:
    return broadcaster.new_recorder("default-scheduler")


def _events(store: Writes) -> list[dict[str, Any]]:
    return sorted(store.list("events").items, key=lambda e: e["metadata"]["name"])


def _failed(recorder: EventsV1Recorder, note: str = "0/3 nodes are available") -> JSON | None:
    return recorder.event(POD, "Warning", "FailedScheduling", note, "Pod", action="Scheduling")


def test_an_event_is_stored_as_the_api_server_serves_an_events_v1_event_in_core_v1(
    store: Writes, clock: VirtualClock, recorder: EventsV1Recorder
) -> None:
    _failed(recorder)
    (event,) = _events(store)
    nanos = int(clock.now() * 1_000_000_000)
    assert event["metadata"]["name"] == f"foo.{nanos:x}"
    assert event["metadata"]["namespace"] == "baz"
    assert {k: v for k, v in event.items() if k != "metadata"} == {
        "apiVersion": "v1",
        "kind": "Event",
        "involvedObject": {
            "kind": "Pod",
            "namespace": "baz",
            "name": "foo",
            "uid": "bar",
            "apiVersion": "v1",
            "resourceVersion": "7",
        },
        "reason": "FailedScheduling",
        "message": "0/3 nodes are available",
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "type": "Warning",
        "eventTime": format_micro_time(clock.now()),
        "action": "Scheduling",
        "reportingComponent": "default-scheduler",
        "reportingInstance": f"default-scheduler-{socket.gethostname()}",
    }


def test_a_related_object_is_referenced_and_part_of_what_makes_events_isomorphic(
    store: Writes, recorder: EventsV1Recorder
) -> None:
    for _ in range(2):
        recorder.event(POD, "Normal", "Preempted", "m", "Pod", action="Preempting", related=PREEMPTOR)
    recorder.event(POD, "Normal", "Preempted", "m", "Pod", action="Preempting", related=POD)
    first, second = _events(store)
    assert first["related"] == {
        "kind": "Pod",
        "namespace": "baz",
        "name": "big",
        "uid": "u-big",
        "apiVersion": "v1",
        "resourceVersion": "9",
    }
    assert first["series"]["count"] == 2
    assert "series" not in second


@pytest.mark.parametrize(
    ("change", "isomorphic"),
    [
        pytest.param({}, True, id="the same event again is isomorphic"),
        pytest.param({"note": "another note"}, True, id="another note is isomorphic (not in the key)"),
        pytest.param({"action": "stopped"}, False, id="another action is not isomorphic"),
        pytest.param({"event_type": "Normal"}, False, id="another type is not isomorphic"),
        pytest.param({"reason": "Scheduled"}, False, id="another reason is not isomorphic"),
        pytest.param({"resource_version": "8"}, False, id="another resourceVersion of the object is not"),
    ],
)
def test_which_events_are_isomorphic(
    store: Writes, recorder: EventsV1Recorder, change: dict[str, str], isomorphic: bool
) -> None:
    _failed(recorder)
    regarding = POD
    if "resource_version" in change:
        regarding = {**POD, "metadata": {**POD["metadata"], "resourceVersion": change["resource_version"]}}
    recorder.event(
        regarding,
        change.get("event_type", "Warning"),
        change.get("reason", "FailedScheduling"),
        change.get("note", "0/3 nodes are available"),
        "Pod",
        action=change.get("action", "Scheduling"),
    )
    events = _events(store)
    if isomorphic:
        (event,) = events
        assert event["series"]["count"] == 2
        assert event["message"] == "0/3 nodes are available"  # the first one's note stays
        assert (store.creates, store.updates) == (1, 1)
    else:
        assert [e.get("series") for e in events] == [None, None]
        assert (store.creates, store.updates) == (2, 0)


def test_repeats_after_the_second_count_in_the_cache_until_the_series_finishes(
    store: Writes, clock: VirtualClock, recorder: EventsV1Recorder, broadcaster: EventsV1Broadcaster
) -> None:
    for _ in range(5):
        _failed(recorder)
        clock.advance(10)
    (event,) = _events(store)
    assert event["series"]["count"] == 2  # the third to fifth are not written yet
    assert (store.creates, store.updates) == (1, 1)
    last_observed = format_micro_time(clock.now() - 10)
    clock.advance(2 * FINISH_TIME)  # not observed for FINISH_TIME: written a last time, forgotten
    (event,) = _events(store)
    assert event["series"] == {"count": 5, "lastObservedTime": last_observed}
    assert broadcaster.cached == 0
    _failed(recorder)  # a new Event once the series is forgotten
    assert len(_events(store)) == 2


def test_a_series_is_written_again_at_each_refresh_while_it_goes_on(
    store: Writes, clock: VirtualClock, recorder: EventsV1Recorder, broadcaster: EventsV1Broadcaster
) -> None:
    while clock.elapsed() < REFRESH_TIME + 1:
        _failed(recorder)
        clock.advance(60)
    (event,) = _events(store)
    # written at the second, then at the refresh (30 min: the 30 recorded before it)
    assert event["series"]["count"] == int(REFRESH_TIME // 60)
    assert store.updates == 2
    assert broadcaster.cached == 1


def test_a_single_event_is_forgotten_finish_time_after_it_was_recorded(
    store: Writes, clock: VirtualClock, recorder: EventsV1Recorder, broadcaster: EventsV1Broadcaster
) -> None:
    _failed(recorder)
    clock.advance(FINISH_TIME - 1)
    _failed(recorder)  # isomorphic still: a series
    assert [e.get("series", {}).get("count") for e in _events(store)] == [2]
    other = broadcaster.new_recorder("another-controller")
    other.event(POD, "Normal", "R", "m", "Pod", action="A")
    clock.advance(2 * FINISH_TIME + 1)
    assert broadcaster.cached == 0
    other.event(POD, "Normal", "R", "m", "Pod", action="A")
    assert [e.get("series") for e in _events(store)].count(None) == 2


def test_a_series_whose_event_is_gone_is_created_again_with_its_name(
    store: Writes, recorder: EventsV1Recorder
) -> None:
    recorder.event(POD, "Normal", "Preempted", "first note", "Pod", action="Preempting", related=PREEMPTOR)
    (first,) = _events(store)
    store.delete("events", "baz", first["metadata"]["name"])
    recorder.event(POD, "Normal", "Preempted", "second note", "Pod", action="Preempting", related=PREEMPTOR)
    (event,) = _events(store)
    assert event["metadata"]["name"] == first["metadata"]["name"]
    assert event["series"]["count"] == 2
    kept = ("metadata", "series")
    assert {k: v for k, v in event.items() if k not in kept} == {
        k: v for k, v in first.items() if k not in kept
    }


def test_a_refused_write_is_dropped_and_the_series_stays_cached_for_the_next_refresh(
    store: Writes, clock: VirtualClock, recorder: EventsV1Recorder, broadcaster: EventsV1Broadcaster
) -> None:
    _failed(recorder)
    store.refuse = True
    _failed(recorder)
    _failed(recorder)
    store.refuse = False
    assert broadcaster.cached == 1
    broadcaster.refresh_series()
    (event,) = _events(store)
    assert event["series"]["count"] == 3


def test_every_event_recorded_reaches_the_watchers_though_repeats_are_not_written(
    store: Writes, recorder: EventsV1Recorder, broadcaster: EventsV1Broadcaster
) -> None:
    seen: list[str] = []
    broadcaster.watchers.append(lambda event: seen.append(event["message"]))
    for attempt in range(4):
        _failed(recorder, f"attempt {attempt}")
    assert seen == ["attempt 0", "attempt 1", "attempt 2", "attempt 3"]
    assert (store.creates, store.updates) == (1, 1)


def test_stop_cancels_the_periodic_writes(
    store: Writes, clock: VirtualClock, recorder: EventsV1Recorder, broadcaster: EventsV1Broadcaster
) -> None:
    for _ in range(3):
        _failed(recorder)
    broadcaster.stop()
    clock.advance(REFRESH_TIME + FINISH_TIME)
    assert store.updates == 1
    assert broadcaster.cached == 1
