"""Watch streams over a real uvicorn server: resourceVersion semantics, selectors, Tables,
bookmarks, timeoutSeconds and in-stream 410 Expired (kubectl-wire.md §4.5, §6)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

from .builders import TABLE_ACCEPT, make_app, make_store, namespace, pod

PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
def served() -> Iterator[tuple[MemoryStore, httpx.Client]]:
    clock = VirtualClock()
    store = make_store(clock, history_size=5)
    store.create("namespaces", namespace("default"))
    with (
        BackgroundServer(make_app(store, clock)) as server,
        httpx.Client(base_url=server.url, timeout=10) as client,
    ):
        yield store, client


def read_events(
    client: httpx.Client,
    url: str,
    count: int,
    headers: dict[str, str] | None = None,
    after_first: Callable[[], Any] | None = None,
) -> list[Any]:
    """The first `count` events of a watch (then the client hangs up); `after_first` runs once
    the first event has arrived, so the watch is surely established."""
    events: list[Any] = []
    with client.stream("GET", url, headers=headers or {}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        for line in response.iter_lines():
            events.append(json.loads(line))
            if len(events) == 1 and after_first is not None:
                after_first()
            if len(events) == count:
                break
    return events


def test_watch_without_resource_version_sends_synthetic_added_then_changes(
    served: tuple[MemoryStore, httpx.Client],
) -> None:
    store, client = served
    store.create("pods", pod("a"))
    events = read_events(client, f"{PODS}?watch=true", 2, after_first=lambda: store.create("pods", pod("b")))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "a"), ("ADDED", "b")]
    assert events[0]["object"]["kind"] == "Pod" and events[0]["object"]["apiVersion"] == "v1"


@pytest.mark.parametrize("flag", ["true", "True", "1"])
def test_watch_from_a_resource_version_replays_only_later_changes(
    served: tuple[MemoryStore, httpx.Client], flag: str
) -> None:
    store, client = served
    created = store.create("pods", pod("a"))
    rv = created["metadata"]["resourceVersion"]
    store.update("pods", {**created, "metadata": {**created["metadata"], "labels": {"v": "2"}}})
    store.delete("pods", "default", "a")
    events = read_events(client, f"{PODS}?watch={flag}&resourceVersion={rv}", 2)
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    assert events[0]["object"]["metadata"]["labels"] == {"v": "2"}


def test_single_object_watch_by_field_selector_from_zero(served: tuple[MemoryStore, httpx.Client]) -> None:
    store, client = served
    store.create("pods", pod("a"))
    store.create("pods", pod("b"))
    url = f"{PODS}?watch=true&resourceVersion=0&fieldSelector=metadata.name%3Db"
    events = read_events(client, url, 2, after_first=lambda: store.delete("pods", "default", "b"))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "b"),
        ("DELETED", "b"),
    ]


def test_too_old_resource_version_is_an_in_stream_410_error(served: tuple[MemoryStore, httpx.Client]) -> None:
    store, client = served
    for i in range(8):
        store.create("pods", pod(f"p{i}"))
    with client.stream("GET", f"{PODS}?watch=true&resourceVersion=1") as response:
        assert response.status_code == 200
        lines = list(response.iter_lines())
    assert len(lines) == 1
    event = json.loads(lines[0])
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
    assert event["object"]["message"].startswith("too old resource version: 1 (")


def test_table_watch_sends_column_definitions_only_in_the_first_event(
    served: tuple[MemoryStore, httpx.Client],
) -> None:
    store, client = served
    listed = client.get(PODS, headers={"Accept": TABLE_ACCEPT}).json()
    rv = listed["metadata"]["resourceVersion"]

    store.create("pods", pod("a"))
    store.create("pods", pod("b"))
    events = read_events(client, f"{PODS}?watch=true&resourceVersion={rv}", 2, {"Accept": TABLE_ACCEPT})
    first, second = (e["object"] for e in events)
    assert first["kind"] == "Table" and "columnDefinitions" in first
    assert "columnDefinitions" not in second
    assert first["rows"][0]["cells"][:3] == ["a", "0/1", "Pending"]
    assert first["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_bookmarks_are_sent_when_allowed(served: tuple[MemoryStore, httpx.Client]) -> None:
    store, client = served
    rv = store.current_resource_version()
    events = read_events(client, f"{PODS}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true", 1)
    assert events == [
        {
            "type": "BOOKMARK",
            "object": {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": str(rv)}},
        }
    ]


def test_timeout_seconds_ends_the_stream(served: tuple[MemoryStore, httpx.Client]) -> None:
    store, client = served
    store.create("pods", pod("a"))
    with client.stream("GET", f"{PODS}?watch=true&timeoutSeconds=1") as response:
        lines = list(response.iter_lines())
    assert [json.loads(line)["type"] for line in lines] == ["ADDED"]


def test_bad_selector_on_a_watch_is_a_400_status(served: tuple[MemoryStore, httpx.Client]) -> None:
    _, client = served
    response = client.get(f"{PODS}?watch=true&fieldSelector=spec.bogus%3D1")
    assert response.status_code == 400
    assert response.json()["message"] == "field label not supported: spec.bogus"


def _encoder() -> Any:
    from kubetaint.apiserver.resources import lookup
    from kubetaint.apiserver.rest import Target
    from kubetaint.apiserver.watch import _Encoder

    res = lookup("", "v1", "pods")
    assert res is not None
    return _Encoder(Target(res, "default"), VirtualClock(), False, "v1", "Metadata")


def _events() -> list[Any]:
    from kubetaint.store.interface import WatchEvent

    return [WatchEvent("ADDED", "pods", pod(name), rv) for rv, name in enumerate(["a", "b", "c"], 1)]


@pytest.mark.usefixtures("default_mode")
def test_the_events_a_drain_finds_are_written_as_one_chunk_of_their_lines() -> None:
    encoder = _encoder()
    chunks = encoder.chunks(_events())
    assert chunks == [b"".join(encoder.event(event) for event in _events())]
    assert [json.loads(line)["object"]["metadata"]["name"] for line in chunks[0].splitlines()] == [
        "a",
        "b",
        "c",
    ]


def test_in_reference_mode_each_event_is_a_chunk_of_its_own() -> None:
    from kubetaint.speed.reference import reference_mode_set

    encoder = _encoder()
    with reference_mode_set(True):
        chunks = encoder.chunks(_events())
    assert chunks == [encoder.event(event) for event in _events()]


def test_an_events_v1_watch_streams_the_core_events_as_events_v1_with_its_field_selector(
    served: tuple[MemoryStore, httpx.Client],
) -> None:
    store, client = served
    core = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web"},
        "reason": "Killing",
        "message": "Stopping container c",
        "type": "Normal",
    }
    other = {**core, "metadata": {"name": "db.1", "namespace": "default"}, "involvedObject": {"name": "db"}}
    url = "/apis/events.k8s.io/v1/namespaces/default/events?watch=true&fieldSelector=regarding.name%3Dweb"
    store.create("events", other)
    store.create("events", core)
    (added,) = read_events(client, url, 1)
    assert added["type"] == "ADDED"
    assert added["object"]["apiVersion"] == "events.k8s.io/v1"
    assert (added["object"]["regarding"]["name"], added["object"]["note"]) == ("web", "Stopping container c")


def test_a_bookmark_carries_the_version_of_changes_the_watch_filtered_out(
    served: tuple[MemoryStore, httpx.Client],
) -> None:
    """The watch cache's bookmarks carry the last resourceVersion it processed (cacher.go
    dispatchEvents: lastProcessedResourceVersion), so a watcher whose selector matches nothing
    still moves its resume point past the changes it was not sent."""
    store, client = served
    rv = store.current_resource_version()
    elsewhere = store.create("pods", pod("elsewhere"))
    url = (
        f"{PODS}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dmine"
    )
    events = read_events(client, url, 1)
    assert [e["type"] for e in events] == ["BOOKMARK"]
    assert int(events[0]["object"]["metadata"]["resourceVersion"]) >= int(
        elsewhere["metadata"]["resourceVersion"]
    )
