"""A binding the store refuses: the pod goes back to the queue with upstream's backoff
(podInitialBackoffDuration 1 s doubling to podMaxBackoffDuration 10 s, by consecutive errors;
with SchedulerPopFromBackoffQ the backoff ends at the start of its 1-second window and the
backoffQ of pods that failed with an error is flushed on the whole second after it), with
FailedScheduling and PodScheduled=False/SchedulerError, and binds once the store writes again."""

from __future__ import annotations

from typing import Any

from kubetaint.clock import VirtualClock
from kubetaint.controlplane import ControlPlane
from kubetaint.store.memory import MemoryStore

from .builders import DISK_FULL, BindingsFail, node, pod


def _cluster() -> tuple[ControlPlane, BindingsFail, VirtualClock]:
    clock = VirtualClock()
    store = BindingsFail(clock)
    plane = ControlPlane(store, clock, seed=1)
    plane.ensure_system_namespaces()
    plane.fleet.add(node("n1"))
    plane.start()
    return plane, store, clock


def _scheduler_events(store: MemoryStore) -> list[dict[str, Any]]:
    return [
        e for e in store.list("events", namespace="default").items if e.get("reason") == "FailedScheduling"
    ]


def test_a_binding_that_keeps_failing_is_retried_on_the_flush_after_its_1_2_4_8_then_10_second_backoff() -> (
    None
):
    plane, store, clock = _cluster()
    plane.registry.create("pods", pod("web"))
    clock.advance(60)
    gaps = [round(b - a, 6) for a, b in zip(store.attempts, store.attempts[1:], strict=False)]
    assert gaps[:5] == [2, 3, 5, 9, 11]
    assert all(gap == 11 for gap in gaps[4:])


def test_a_failed_binding_reports_failed_scheduling_and_a_scheduler_error_condition() -> None:
    plane, store, clock = _cluster()
    plane.registry.create("pods", pod("web"))
    clock.advance(0.5)
    message = f'running Bind plugin "DefaultBinder": Internal error occurred: {DISK_FULL}'
    assert [(e["type"], e["message"]) for e in _scheduler_events(store)] == [("Warning", message)]
    conditions = store.get("pods", "default", "web")["status"]["conditions"]
    scheduled = next(c for c in conditions if c["type"] == "PodScheduled")
    assert (scheduled["status"], scheduled["reason"], scheduled["message"]) == (
        "False",
        "SchedulerError",
        message,
    )


def test_the_pod_binds_at_its_next_retry_once_the_store_writes_again() -> None:
    plane, store, clock = _cluster()
    plane.registry.create("pods", pod("web"))
    clock.advance(5.5)  # attempts at 0, 2 and 5 s; the next one at 10 s
    store.full = False
    clock.advance(4)
    assert not store.get("pods", "default", "web")["spec"].get("nodeName")
    clock.advance(1)
    bound = store.get("pods", "default", "web")
    assert bound["spec"]["nodeName"] == "n1"
    assert [t - clock.start for t in store.attempts] == [0, 2, 5, 10]
    scheduled = next(c for c in bound["status"]["conditions"] if c["type"] == "PodScheduled")
    assert scheduled["status"] == "True"


def test_a_pod_deleted_while_its_binding_backs_off_is_not_retried() -> None:
    plane, store, clock = _cluster()
    plane.registry.create("pods", pod("web"))
    clock.advance(0.5)
    store.delete("pods", "default", "web")
    clock.advance(30)
    assert len(store.attempts) == 1
