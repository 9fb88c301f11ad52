"""TimedWorkerQueue on the virtual clock: exact firing times, no-op re-adds, nil workers."""

from __future__ import annotations

from collections.abc import Callable

from kubetaint.clock import VirtualClock
from kubetaint.controllers.tainteviction import TimedWorkerQueue


class Recorder:
    def __init__(self, clock: VirtualClock, finish_after: float = 0.0) -> None:
        self.clock = clock
        self.finish_after = finish_after
        self.fired: list[tuple[float, str, float]] = []

    def __call__(self, key: str, fire_at: float, done: Callable[[], None]) -> None:
        self.fired.append((self.clock.elapsed(), key, fire_at - self.clock.start))
        if self.finish_after:
            self.clock.call_later(self.finish_after, done)
        else:
            done()


def make(finish_after: float = 0.0) -> tuple[VirtualClock, Recorder, TimedWorkerQueue]:
    clock = VirtualClock()
    work = Recorder(clock, finish_after)
    return clock, work, TimedWorkerQueue(clock, work)


def test_work_fires_exactly_at_fire_time_and_the_key_is_then_removed() -> None:
    clock, work, queue = make()
    s = clock.start
    queue.add_work("ns/a", s, s + 5)
    queue.add_work("ns/b", s, s + 3)
    clock.run_until(s + 2.999)
    assert work.fired == []
    clock.run_until(s + 100)
    assert work.fired == [(3.0, "ns/b", 3.0), (5.0, "ns/a", 5.0)]
    assert len(queue) == 0


def test_adding_existing_work_is_a_no_op() -> None:
    clock, work, queue = make()
    s = clock.start
    queue.add_work("ns/a", s, s + 10)
    queue.add_work("ns/a", s, s + 1)
    clock.run_until(s + 100)
    assert work.fired == [(10.0, "ns/a", 10.0)]


def test_immediate_work_stores_a_nil_worker_that_cannot_be_cancelled() -> None:
    clock, work, queue = make()
    s = clock.start
    queue.add_work("ns/a", s, s)
    assert "ns/a" in queue and queue.get_worker("ns/a") is None
    assert queue.cancel_work("ns/a") is False
    assert "ns/a" not in queue
    clock.run_until(s)
    assert work.fired == [(0.0, "ns/a", 0.0)], "immediate work already started cannot be stopped"


def test_fire_time_in_the_past_runs_immediately() -> None:
    clock, work, queue = make()
    s = clock.start
    clock.run_until(s + 10)
    queue.add_work("ns/a", s, s - 1)
    clock.run_until(s + 10)
    assert work.fired == [(10.0, "ns/a", -1.0)]


def test_cancelled_timer_never_fires_and_reports_true() -> None:
    clock, work, queue = make()
    s = clock.start
    queue.add_work("ns/a", s, s + 5)
    worker = queue.get_worker("ns/a")
    assert worker is not None and worker.created_at == s and worker.fire_at == s + 5
    clock.run_until(s + 4)
    assert queue.cancel_work("ns/a") is True
    assert queue.cancel_work("ns/a") is False
    clock.run_until(s + 100)
    assert work.fired == []


def test_key_stays_until_long_running_work_finishes() -> None:
    clock, work, queue = make(finish_after=0.05)
    s = clock.start
    queue.add_work("ns/a", s, s + 1)
    clock.run_until(s + 1.01)
    assert "ns/a" in queue
    queue.add_work("ns/a", s + 1.01, s + 1.01)
    clock.run_until(s + 1.06)
    assert "ns/a" not in queue
    assert [f[0] for f in work.fired] == [1.0]


def test_cancel_all_forgets_everything() -> None:
    clock, work, queue = make()
    s = clock.start
    queue.add_work("ns/a", s, s + 5)
    queue.add_work("ns/b", s, s + 6)
    queue.cancel_all()
    clock.run_until(s + 100)
    assert work.fired == [] and len(queue) == 0
