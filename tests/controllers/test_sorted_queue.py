"""The name queue of the namespace, CRD, service account and root CA controllers: names added
before a drain merge and are synced in sorted order; a delayed add replaces the pending one;
nothing is synced after stop; a queue of a component retries a failed sync with backoff."""

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


def test_a_component_queue_retries_a_failed_sync_with_exponential_backoff_and_syncs_the_others() -> None:
    clock = VirtualClock()
    attempts: list[tuple[str, float]] = []
    failing = {"a": 3}

    def sync(name: str) -> None:
        attempts.append((name, round(clock.elapsed(), 6)))
        if failing.get(name):
            failing[name] -= 1
            raise RuntimeError("refused")

    queue = SortedQueue(clock, sync, "test-controller")
    queue.add("a")
    queue.add("b")
    clock.advance(1)
    # AddRateLimited: 5 ms, then 10 ms, then 20 ms after each failure; "b" is synced meanwhile
    assert attempts == [("a", 0.0), ("b", 0.0), ("a", 0.005), ("a", 0.015), ("a", 0.035)]


def test_a_component_queue_forgets_the_failures_of_a_name_once_it_syncs() -> None:
    clock = VirtualClock()
    attempts: list[float] = []
    failing = [True, False, True, False]

    def sync(name: str) -> None:
        attempts.append(round(clock.elapsed(), 6))
        if failing.pop(0):
            raise RuntimeError("refused")

    queue = SortedQueue(clock, sync, "test-controller")
    queue.add("a")
    clock.advance(1)
    queue.add("a")
    clock.advance(1)
    assert attempts == [0.0, 0.005, 1.0, 1.005]  # the next failure waits 5 ms again
