"""Event recording as client-go's record.EventRecorder and EventCorrelator do: names
`<object>.<hex nanoseconds>` unique across recorders of one clock, repeats counted on the first."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.clock import VirtualClock
from kubetaint.clock.base import format_time
from kubetaint.store.events import EventQueue, EventRecorder
from kubetaint.store.memory import MemoryStore

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "7"},
}


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def store(clock: VirtualClock) -> MemoryStore:
    return MemoryStore(clock)


def _events(store: MemoryStore) -> list[dict[str, Any]]:
    return sorted(store.list("events").items, key=lambda e: e["metadata"]["name"])


def test_an_event_is_named_for_its_object_and_the_hex_of_the_clocks_nanoseconds(
    store: MemoryStore, clock: VirtualClock
) -> None:
    event = EventRecorder(store, clock, "taint-eviction-controller").event(POD, "Normal", "R", "m")
    assert event is not None
    assert event["metadata"]["name"] == f"web.{int(clock.now() * 1_000_000_000):x}"


def test_events_of_one_virtual_instant_from_two_components_are_both_kept(
    store: MemoryStore, clock: VirtualClock
) -> None:
    """The scheduler's Scheduled and an immediate eviction's TaintManagerEviction share an instant."""
    EventRecorder(store, clock, "default-scheduler").event(POD, "Normal", "Scheduled", "assigned")
    EventRecorder(store, clock, "taint-eviction-controller").event(
        POD, "Normal", "TaintManagerEviction", "Marking for deletion Pod default/web"
    )
    events = _events(store)
    assert [e["reason"] for e in events] == ["Scheduled", "TaintManagerEviction"]
    stamps = [int(e["metadata"]["name"].split(".", 1)[1], 16) for e in events]
    assert stamps == [int(clock.now() * 1_000_000_000), int(clock.now() * 1_000_000_000) + 1]


def test_a_name_another_writer_took_moves_to_the_next_nanosecond(
    store: MemoryStore, clock: VirtualClock
) -> None:
    taken = f"web.{int(clock.now() * 1_000_000_000):x}"
    store.create(
        "events", {"apiVersion": "v1", "kind": "Event", "metadata": {"name": taken, "namespace": "default"}}
    )
    event = EventRecorder(store, VirtualClock(clock.now()), "kubelet").event(POD, "Normal", "Killing", "m")
    assert event is not None and event["metadata"]["name"] != taken


def test_the_same_event_again_bumps_count_and_last_timestamp_of_the_first(
    store: MemoryStore, clock: VirtualClock
) -> None:
    recorder = EventRecorder(store, clock, "node-controller")
    first = recorder.event(POD, "Normal", "NodeNotReady", "Node is not ready")
    clock.advance(30)
    again = recorder.event(POD, "Normal", "NodeNotReady", "Node is not ready")
    assert first is not None and again is not None
    (stored,) = _events(store)
    assert stored["metadata"]["name"] == first["metadata"]["name"]
    assert (stored["count"], stored["firstTimestamp"]) == (2, first["firstTimestamp"])
    assert stored["lastTimestamp"] == format_time(clock.now())


@pytest.mark.parametrize(
    ("change", "value"),
    [
        pytest.param("message", "other message", id="another message is another event"),
        pytest.param("reason", "OtherReason", id="another reason is another event"),
        pytest.param("event_type", "Warning", id="another type is another event"),
    ],
)
def test_an_event_that_differs_is_created_anew(
    store: MemoryStore, clock: VirtualClock, change: str, value: str
) -> None:
    recorder = EventRecorder(store, clock, "node-controller")
    args = {"event_type": "Normal", "reason": "NodeNotReady", "message": "Node is not ready"}
    recorder.event(POD, **args)
    recorder.event(POD, **{**args, change: value})
    assert [e["count"] for e in _events(store)] == [1, 1]


def test_a_repeat_of_a_deleted_event_creates_it_again(store: MemoryStore, clock: VirtualClock) -> None:
    recorder = EventRecorder(store, clock, "node-controller")
    first = recorder.event(POD, "Normal", "NodeNotReady", "Node is not ready")
    assert first is not None
    store.delete("events", "default", first["metadata"]["name"])
    clock.advance(1)
    again = recorder.event(POD, "Normal", "NodeNotReady", "Node is not ready")
    assert again is not None and again["metadata"]["name"] != first["metadata"]["name"]
    assert [e["count"] for e in _events(store)] == [1]


def test_queued_events_of_several_recorders_are_written_together_with_their_own_times(
    store: MemoryStore, clock: VirtualClock
) -> None:
    queue = EventQueue(store, clock, 0.5)
    one, two = (
        EventRecorder(store, clock, "kubelet", "node-1"),
        EventRecorder(store, clock, "kubelet", "node-2"),
    )
    queue.add(one, POD, [("Normal", "Pulling", 'Pulling image "x"', "spec.containers{c}")], "Pod")
    clock.advance(0.25)
    queue.add(two, POD, [("Normal", "Started", "Container started", "spec.containers{c}")], "Pod")
    assert _events(store) == []
    rv = store.current_resource_version()
    clock.advance(0.25)
    written = _events(store)
    assert [(e["reason"], e["source"]["host"], e["involvedObject"]["fieldPath"]) for e in written] == [
        ("Pulling", "node-1", "spec.containers{c}"),
        ("Started", "node-2", "spec.containers{c}"),
    ]
    assert [e["firstTimestamp"] for e in written] == [
        format_time(clock.now() - 0.5),
        format_time(clock.now() - 0.25),
    ]
    assert store.current_resource_version() == rv + 2


def test_a_queued_repeat_bumps_the_first_event(store: MemoryStore, clock: VirtualClock) -> None:
    queue = EventQueue(store, clock, 0.5)
    recorder = EventRecorder(store, clock, "kubelet", "node-1")
    item = ("Normal", "Killing", "Stopping container c", "spec.containers{c}")
    queue.add(recorder, POD, [item], "Pod")
    queue.add(recorder, POD, [item], "Pod")
    clock.advance(1)
    (event,) = _events(store)
    assert event["count"] == 2


def test_a_stopped_queue_writes_nothing(store: MemoryStore, clock: VirtualClock) -> None:
    queue = EventQueue(store, clock, 0.5)
    queue.add(EventRecorder(store, clock, "kubelet"), POD, [("Normal", "R", "m", "")], "Pod")
    queue.stop()
    clock.advance(1)
    assert _events(store) == []
