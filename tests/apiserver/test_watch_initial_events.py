"""Watch lists (`sendInitialEvents=true`, resourceVersionMatch=NotOlderThan), as the watch cache
serves them: the current state as ADDED events, then a bookmark annotated
`k8s.io/initial-events-end: "true"` at the state's resourceVersion, then every later change."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

from .builders import make_app, make_store, namespace, pod
from .test_watch import read_events

PODS = "/api/v1/namespaces/default/pods"
WATCH_LIST = (
    f"{PODS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
)


@pytest.fixture
def served() -> Iterator[tuple[MemoryStore, httpx.Client]]:
    clock = VirtualClock()
    store = make_store(clock)
    store.create("namespaces", namespace("default"))
    with (
        BackgroundServer(make_app(store, clock)) as server,
        httpx.Client(base_url=server.url, timeout=10) as client,
    ):
        yield store, client


def test_initial_events_end_with_an_annotated_bookmark_then_changes_follow(
    served: tuple[MemoryStore, httpx.Client],
) -> None:
    store, client = served
    store.create("pods", pod("a"))
    store.create("pods", pod("b"))
    listed_at = store.current_resource_version()
    events = read_events(client, WATCH_LIST, 4, after_first=lambda: store.create("pods", pod("c")))
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
        ("BOOKMARK", None),
        ("ADDED", "c"),
    ]
    bookmark = events[2]["object"]["metadata"]
    assert bookmark == {
        "resourceVersion": str(listed_at),
        "annotations": {"k8s.io/initial-events-end": "true"},
    }


def test_initial_events_from_a_resource_version_in_the_future_are_too_large(
    served: tuple[MemoryStore, httpx.Client],
) -> None:
    store, client = served
    now = store.current_resource_version()
    response = client.get(f"{WATCH_LIST}&resourceVersion={now + 9}")
    assert response.status_code == 504
    assert response.json()["message"] == f"Timeout: Too large resource version: {now + 9}, current: {now}"


def test_without_initial_events_a_watch_starts_at_the_current_version(
    served: tuple[MemoryStore, httpx.Client],
) -> None:
    store, client = served
    store.create("pods", pod("a"))
    url = f"{PODS}?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan"
    with client.stream("GET", url) as response:
        assert response.status_code == 200  # the watch exists once the headers are out
        store.create("pods", pod("b"))
        first = json.loads(next(response.iter_lines()))
    assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "b")
