"""The controllers' work queue on the virtual clock: dedup, add_after keeps the earliest time,
exponential retry backoff at exact virtual times, dropping after max retries."""

from __future__ import annotations

from kubetaint.clock import VirtualClock
from kubetaint.controllers.replicaset.workqueue import WorkQueue


def test_keys_are_deduplicated_while_queued() -> None:
    clock = VirtualClock()
    seen: list[str] = []
    queue: WorkQueue[str] = WorkQueue(clock, seen.append, "test")
    for key in ("a", "b", "a"):
        queue.add(key)
    assert len(queue) == 2
    clock.run_pending()
    assert seen == ["a", "b"]


def test_add_after_keeps_the_earliest_pending_time() -> None:
    clock = VirtualClock()
    seen: list[float] = []
    queue: WorkQueue[str] = WorkQueue(clock, lambda _k: seen.append(clock.elapsed()), "test")
    queue.add_after("a", 30)
    queue.add_after("a", 10)
    queue.add_after("a", 20)
    clock.advance(60)
    assert seen == [10.0]


def test_failures_back_off_exponentially_then_drop() -> None:
    clock = VirtualClock()
    attempts: list[float] = []

    def failing(_key: str) -> None:
        attempts.append(round(clock.elapsed(), 6))
        raise RuntimeError("boom")

    queue: WorkQueue[str] = WorkQueue(clock, failing, "test", max_retries=3)
    queue.add("a")
    clock.advance(10)
    assert attempts == [0.0, 0.005, 0.015, 0.035]


def test_success_resets_the_backoff() -> None:
    clock = VirtualClock()
    outcomes = iter([True, False, True, False])
    attempts: list[float] = []

    def flaky(_key: str) -> None:
        attempts.append(round(clock.elapsed(), 6))
        if next(outcomes):
            raise RuntimeError("boom")

    queue: WorkQueue[str] = WorkQueue(clock, flaky, "test")
    queue.add("a")
    clock.advance(1)
    queue.add("a")
    clock.advance(1)
    assert attempts == [0.0, 0.005, 1.0, 1.005]
