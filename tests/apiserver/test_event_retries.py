"""Event writes over real HTTP as client-go's broadcasters make them (recordToSink,
attemptRecording): a server that cannot be reached gets the event again after a sleep, 12 writes at
most (tools/record: a random part of 10 s first, then 10 s; tools/events: 10 s and up to a quarter
more), a refusal is not tried again; an events.k8s.io/v1 series is a patch of the first Event."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.clock.base import format_micro_time
from kubetaint.store.events import EventRecorder
from kubetaint.store.eventseries import EventsV1Broadcaster, EventsV1Recorder
from kubetaint.store.memory import MemoryStore
from kubetaint.store.recording import MAX_TRIES_PER_EVENT, SLEEP_DURATION
from kubetaint.store.remote import RemoteStore
from kubetaint.store.remote_config import Connection
from kubetaint.store.remote_events import EventsV1Sink

from .builders import make_store, namespace

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "7"},
}
SEED = 5
RETRY_LOG = "kubetaint.store.recording"


@dataclass
class Server:
    """An API server bound to its port but not serving until `start` (until then a connection
    is refused), and a client's RemoteStore of it."""

    store: MemoryStore
    background: BackgroundServer
    remote: RemoteStore
    clock: VirtualClock

    def start(self) -> None:
        self.background.start()

    def events(self) -> list[dict[str, Any]]:
        return list(self.store.list("events").items)


@pytest.fixture
def server() -> Iterator[Server]:
    clock = VirtualClock()
    store = make_store(clock)
    store.create("namespaces", namespace("default"))
    background = BackgroundServer(create_app(store, clock, rng=random.Random(7)))
    remote = RemoteStore(Connection(server=background.url))
    yield Server(store, background, remote, VirtualClock())
    remote.close()
    background.stop()


def _core(server: Server) -> EventRecorder:
    return EventRecorder(server.remote, server.clock, "node-controller", rng=random.Random(SEED))


def _events_v1(server: Server) -> EventsV1Recorder:
    broadcaster = EventsV1Broadcaster(EventsV1Sink(server.remote), server.clock, rng=random.Random(SEED))
    return broadcaster.new_recorder("default-scheduler")


def _record_core(server: Server) -> dict[str, Any] | None:
    return _core(server).event(POD, "Normal", "NodeNotReady", "Node is not ready")


def test_a_core_event_the_server_did_not_get_is_written_after_a_random_part_of_the_sleep(
    server: Server,
) -> None:
    assert _record_core(server) is None
    first = SLEEP_DURATION * random.Random(SEED).random()
    server.start()
    server.clock.advance(first - 0.001)
    assert server.events() == []
    server.clock.advance(0.002)
    (event,) = server.events()
    assert (event["reason"], event["source"], event["count"]) == (
        "NodeNotReady",
        {"component": "node-controller"},
        1,
    )


def test_a_core_events_later_writes_are_the_whole_sleep_apart(server: Server) -> None:
    _record_core(server)
    server.clock.advance(SLEEP_DURATION * random.Random(SEED).random())  # the second write: refused too
    server.start()
    server.clock.advance(SLEEP_DURATION - 0.001)
    assert server.events() == []
    server.clock.advance(0.002)
    assert len(server.events()) == 1


def test_an_events_v1_write_sleeps_the_sleep_and_up_to_a_quarter_more(server: Server) -> None:
    recorder = _events_v1(server)
    assert recorder.event(POD, "Warning", "FailedScheduling", "0/3 nodes", "Pod", action="Scheduling") is None
    sleep = SLEEP_DURATION * (1 + 0.25 * random.Random(SEED).random())
    assert SLEEP_DURATION < sleep < 1.25 * SLEEP_DURATION
    server.start()
    server.clock.advance(sleep - 0.001)
    assert server.events() == []
    server.clock.advance(0.002)
    (event,) = server.events()
    assert (event["reason"], event["action"], event["reportingComponent"]) == (
        "FailedScheduling",
        "Scheduling",
        "default-scheduler",
    )


def test_events_written_together_are_each_written_again_when_the_commit_did_not_reach_the_server(
    server: Server,
) -> None:
    other = {**POD, "metadata": {**POD["metadata"], "name": "db", "uid": "u-2"}}
    batch = [
        (POD, [("Normal", "Killing", "Stopping container c", "spec.containers{c}")]),
        (other, [("Normal", "Killing", "Stopping container d", "spec.containers{d}")]),
    ]
    assert _core(server).events(batch, "Pod") == [None, None]
    server.start()
    server.clock.advance(SLEEP_DURATION)
    written = sorted((e["involvedObject"]["name"], e["message"]) for e in server.events())
    assert written == [("db", "Stopping container d"), ("web", "Stopping container c")]


@pytest.mark.parametrize("api", ["core/v1", "events.k8s.io/v1"])
def test_an_event_gets_twelve_writes_at_most(
    server: Server, api: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, RETRY_LOG)
    if api == "core/v1":
        _record_core(server)
    else:
        _events_v1(server).event(POD, "Warning", "FailedScheduling", "m", "Pod", action="Scheduling")
    for _ in range(MAX_TRIES_PER_EVENT):
        server.clock.advance(1.25 * SLEEP_DURATION)
    messages = [record.getMessage() for record in caplog.records]
    assert sum("(may retry after sleeping)" in m for m in messages) == MAX_TRIES_PER_EVENT
    assert messages[-1] == "Unable to write event (retry limit exceeded!)"
    server.start()
    server.clock.advance(10 * SLEEP_DURATION)
    assert server.events() == []


def test_a_refused_event_is_not_written_again(server: Server, caplog: pytest.LogCaptureFixture) -> None:
    """events.k8s.io/v1 validation: a note of more than 1024 bytes is a 422."""
    caplog.set_level(logging.WARNING, RETRY_LOG)
    server.start()
    recorder = _events_v1(server)
    assert recorder.event(POD, "Normal", "Scheduled", "x" * 1025, "Pod", action="Binding") is None
    (message,) = [record.getMessage() for record in caplog.records]
    assert message.startswith("Server rejected event: ") and message.endswith("(will not retry!)")
    assert "can have at most 1024 characters" in message
    server.clock.advance(10 * SLEEP_DURATION)
    assert server.events() == []


def _served(server: Server, name: str) -> dict[str, Any]:
    with httpx.Client(base_url=server.background.url) as client:
        response = client.get(f"/apis/events.k8s.io/v1/namespaces/default/events/{name}")
    assert response.status_code == 200, response.text
    served: dict[str, Any] = response.json()
    return served


def test_an_events_v1_series_is_patched_onto_the_first_event(server: Server) -> None:
    server.start()
    recorder = _events_v1(server)
    first = recorder.event(POD, "Warning", "FailedScheduling", "0/3 nodes", "Pod", action="Scheduling")
    assert first is not None
    name = first["metadata"]["name"]
    server.clock.advance(30)
    recorder.event(POD, "Warning", "FailedScheduling", "0/4 nodes", "Pod", action="Scheduling")
    served = _served(server, name)
    assert served["series"] == {"count": 2, "lastObservedTime": _micro(server.clock.now())}
    assert served["note"] == "0/3 nodes"
    server.clock.advance(30)
    recorder.event(POD, "Warning", "FailedScheduling", "0/4 nodes", "Pod", action="Scheduling")
    assert _served(server, name)["series"]["count"] == 2  # counted, written at the refresh
    recorder.broadcaster.refresh_series()
    assert _served(server, name)["series"] == {"count": 3, "lastObservedTime": _micro(server.clock.now())}


def test_an_events_v1_series_whose_event_is_gone_creates_it_again(server: Server) -> None:
    server.start()
    recorder = _events_v1(server)
    first = recorder.event(POD, "Warning", "FailedScheduling", "0/3 nodes", "Pod", action="Scheduling")
    assert first is not None
    server.store.delete("events", "default", first["metadata"]["name"])
    recorder.event(POD, "Warning", "FailedScheduling", "0/3 nodes", "Pod", action="Scheduling")
    served = _served(server, first["metadata"]["name"])
    assert served["series"]["count"] == 2
    assert (served["reason"], served["action"], served["note"]) == (
        "FailedScheduling",
        "Scheduling",
        "0/3 nodes",
    )


def _micro(seconds: float) -> str:
    return format_micro_time(seconds)
