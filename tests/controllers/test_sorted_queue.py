"""The name queue of the namespace, CRD, service account and root CA controllers: names added
before a drain merge and are synced in sorted order; a delayed add replaces the pending one;
nothing is synced after stop."""

from __future__ import annotations

from kubetaint.clock.virtual import VirtualClock
from kubetaint.controllers.sorted_queue import SortedQueue


def test_names_added_before_a_drain_are_synced_once_in_sorted_order() -> None:
    clock = VirtualClock()
    synced: list[str] = []
    queue = SortedQueue(clock, synced.append)
    for name in ("b", "a", "c", "a"):
        queue.add(name)
    assert synced == []
    clock.run_pending()
    assert synced == ["a", "b", "c"]


def test_a_later_delayed_add_replaces_the_pending_one() -> None:
    clock = VirtualClock()
    synced: list[tuple[str, float]] = []
    queue = SortedQueue(clock, lambda name: synced.append((name, clock.elapsed())))
    queue.add_after("a", 5)
    queue.add_after("a", 2)
    clock.advance(10)
    assert synced == [("a", 2.0)]


def test_nothing_is_synced_after_stop() -> None:
    clock = VirtualClock()
    synced: list[str] = []
    queue = SortedQueue(clock, synced.append)
    queue.add_after("a", 1)
    queue.stop()
    queue.add("b")
    clock.advance(5)
    assert synced == []
