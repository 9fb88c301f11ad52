"""Dispatching with no handler subscribed (a store being loaded before anything watches) drops
what is pending at once: exactly what delivering it to the empty routes did. A handler subscribed
before the dispatch still gets everything queued before it, and one subscribed after gets
nothing of it, as with delivery event by event."""

from __future__ import annotations

import pytest

from kubetaint.clock import VirtualClock
from kubetaint.store.changes import ChangeBatch, each_event
from kubetaint.store.interface import WatchEvent
from kubetaint.store.memory import MemoryStore
from kubetaint.store.watch import Dispatcher


def event(n: int, resource: str = "pods") -> WatchEvent:
    return WatchEvent("ADDED", resource, {"n": n}, n)


@pytest.mark.parametrize(
    ("subscribe_before_dispatch", "expected"),
    [
        pytest.param(True, [1, 2, 3], id="a handler subscribed between enqueue and dispatch gets it all"),
        pytest.param(False, [], id="a handler subscribed after the dispatch gets nothing queued before"),
    ],
)
def test_pending_events_reach_exactly_the_handlers_there_at_dispatch(
    subscribe_before_dispatch: bool, expected: list[int]
) -> None:
    dispatcher = Dispatcher()
    seen: list[int] = []
    dispatcher.publish(ChangeBatch([event(1)]))
    dispatcher.publish(ChangeBatch([event(2), event(3)]))
    if subscribe_before_dispatch:
        dispatcher.subscribe(each_event(lambda e: seen.append(e.resource_version)))
    dispatcher.dispatch()
    if not subscribe_before_dispatch:
        dispatcher.subscribe(each_event(lambda e: seen.append(e.resource_version)))
    dispatcher.dispatch()
    assert seen == expected


def test_after_an_unsubscribe_leaves_no_handler_later_events_go_nowhere_and_later_ones_arrive() -> None:
    dispatcher = Dispatcher()
    first: list[int] = []
    unsubscribe = dispatcher.subscribe(each_event(lambda e: first.append(e.resource_version)))
    dispatcher.publish(ChangeBatch([event(1)]))
    dispatcher.dispatch()
    unsubscribe()
    dispatcher.publish(ChangeBatch([event(2)]))
    dispatcher.dispatch()
    second: list[int] = []
    dispatcher.subscribe(each_event(lambda e: second.append(e.resource_version)))
    dispatcher.publish(ChangeBatch([event(3)]))
    dispatcher.dispatch()
    assert (first, second) == ([1], [3])


def test_a_store_loaded_before_any_subscriber_keeps_its_history_for_watches() -> None:
    store = MemoryStore(VirtualClock())
    for name in ("a", "b"):
        store.create("pods", {"metadata": {"name": name, "namespace": "default"}, "spec": {}})
    watch = store.watch("pods", resource_version="0")
    store.create("pods", {"metadata": {"name": "c", "namespace": "default"}, "spec": {}})
    assert [(e.type, e.object["metadata"]["name"]) for e in watch.drain()] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
        ("ADDED", "c"),
    ]
