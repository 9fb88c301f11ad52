"""The backoffQ as 1.35 keeps it (pkg/scheduler/backend/queue/backoff_queue_test.go and
active_queue.go): with SchedulerPopFromBackoffQ a backoff ends at the start of its 1-second
ordering window and pods of one window leave in activeQ's order; a flush moves the rejected
pods whose backoff is over, then those that failed with an error; and when activeQ is empty the
scheduler takes the head of the rejected pods' backoffQ, backing off or not, never a pod that
failed with an error."""

from __future__ import annotations

import pytest

from kubetaint.clock.virtual import VirtualClock
from kubetaint.scheduler.plugins.priority_sort import PrioritySort
from kubetaint.scheduler.podinfo import make_pod_info
from kubetaint.scheduler.queue import BACKOFF, QueuedPodInfo, SchedulingQueue
from kubetaint.scheduler.status import Status
from scheduler.builders import pod

WINDOW_START = 1_767_225_600.0  # a whole second


def _queue(clock: VirtualClock, pop_from_backoff: bool = True) -> SchedulingQueue:
    return SchedulingQueue(
        clock,
        sort_key=PrioritySort().sort_key,
        pre_enqueue=lambda _pi: Status(),
        pop_from_backoff=pop_from_backoff,
    )


def _in_backoff(
    q: SchedulingQueue, name: str, timestamp: float, *, priority: int = 0, error: bool = False
) -> QueuedPodInfo:
    """A pod that failed once at `timestamp` (rejected by "plugin", or with an error), placed in
    the backoffQ."""
    qpi = QueuedPodInfo(make_pod_info(pod(name, priority=priority)), timestamp)
    qpi.attempts = 1
    if error:
        qpi.consecutive_errors_count = 1
    else:
        qpi.unschedulable_count = 1
        qpi.unschedulable_plugins = {"plugin"}
    q.pods[qpi.pod_info.key] = qpi
    q._to_backoff(qpi)
    return qpi


def _moved(q: SchedulingQueue) -> list[str]:
    """The pods moved to activeQ, in the order they were moved."""
    return [q.pods[key].pod_info.name for _, _, key in sorted(q._active, key=lambda entry: entry[1])]


def test_pods_of_one_window_leave_in_priority_order() -> None:
    """TestBackoffQueueOrdering (PopFromBackoffQ enabled): a clock on a window's start; a 1 s
    backoff that ends at the window's start still backs off; the others leave by window, then
    by priority."""
    clock = VirtualClock(WINDOW_START)
    q = _queue(clock)
    now = clock.now()
    for name, priority, timestamp in [
        ("pod0", 1, now),
        ("pod1", 1, now - 1),
        ("pod2", 2, now - 2 + 0.001),
        ("pod3", 1, now - 2),
        ("pod4", 2, now - 2),
        ("pod5", 1, now - 3),
    ]:
        _in_backoff(q, name, timestamp, priority=priority)
    q.flush_backoff_completed()
    assert sorted(q.pods[k].pod_info.name for k, place in q.where.items() if place == BACKOFF) == [
        "pod0",
        "pod1",
    ]
    assert _moved(q) == ["pod5", "pod4", "pod2", "pod3"]


@pytest.mark.parametrize(
    ("in_backoff", "moved"),
    [
        pytest.param([], [], id="both queues empty, no pods moved to activeQ"),
        pytest.param(["pod0", "pod1"], ["pod0"], id="pods only in backoffQ, some pods moved to activeQ"),
        pytest.param(["pod2", "pod3"], ["pod2"], id="pods only in errorBackoffQ, some pods moved to activeQ"),
        pytest.param(
            ["pod0", "pod1", "pod2", "pod3"],
            ["pod0", "pod2"],
            id="pods in both queues, some pods moved to activeQ",
        ),
        pytest.param(["pod0", "pod2"], ["pod0", "pod2"], id="pods in both queues, all pods moved to activeQ"),
        pytest.param(["pod1", "pod3"], [], id="pods in both queues, no pods moved to activeQ"),
    ],
)
@pytest.mark.parametrize("pop_from_backoff", [True, False])
def test_a_flush_moves_the_pods_whose_backoff_is_over(
    in_backoff: list[str], moved: list[str], pop_from_backoff: bool
) -> None:
    """TestBackoffQueue_popEachBackoffCompleted: pod0 and pod2 failed 2 s ago, pod1 and pod3
    fail 1 s from now; pod2 and pod3 with an error."""
    clock = VirtualClock(WINDOW_START + 0.5)
    q = _queue(clock, pop_from_backoff)
    now = clock.now()
    pods = {
        "pod0": (now - 2, False),
        "pod1": (now + 1, False),
        "pod2": (now - 2, True),
        "pod3": (now + 1, True),
    }
    for name in in_backoff:
        timestamp, error = pods[name]
        _in_backoff(q, name, timestamp, error=error)
    q.flush_backoff_completed()
    assert _moved(q) == moved
    assert len(q._backoff) == len(in_backoff) - len(moved)


def test_an_idle_scheduler_takes_the_head_of_the_rejected_pods_backoffq() -> None:
    """activeQ empty: Pop takes the rejected pod with the earliest window (backing off or not),
    never a pod that failed with an error; a pod in activeQ comes first."""
    clock = VirtualClock(WINDOW_START)
    q = _queue(clock)
    now = clock.now()
    _in_backoff(q, "failed", now, error=True)
    _in_backoff(q, "later", now, priority=5)
    _in_backoff(q, "earlier", now - 0.5)
    q.add(make_pod_info(pod("new")))
    assert [q.pop().pod_info.name for _ in range(3)] == ["new", "earlier", "later"]  # type: ignore[union-attr]
    assert q.pop() is None, "a pod that failed with an error waits for its flush"
    assert q.pending()["backoffQ"] == ["uid-failed"]


def test_without_pop_from_backoff_an_idle_scheduler_waits_for_the_flush() -> None:
    clock = VirtualClock(WINDOW_START)
    q = _queue(clock, pop_from_backoff=False)
    _in_backoff(q, "rejected", clock.now())
    assert q.pop() is None
    clock.advance(1.0)
    assert q.pop() is None, "its backoff ends now: the flush after it moves it"
    clock.advance(1.0)
    assert q.pop().pod_info.name == "rejected"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("failed_at", "released_at"),
    [
        pytest.param(0.0, 2.0, id="a failure on a whole second is flushed a second after its window"),
        pytest.param(0.3, 2.0, id="a failure within a second is flushed on the second after its window"),
        pytest.param(0.999, 2.0, id="a failure just before a whole second too"),
    ],
)
def test_a_1s_backoff_is_over_on_the_whole_second_after_its_window(
    failed_at: float, released_at: float
) -> None:
    clock = VirtualClock(WINDOW_START)
    q = _queue(clock)
    clock.advance(failed_at)
    _in_backoff(q, "p", clock.now())
    clock.advance(released_at - failed_at - 0.5)
    assert q.pending()["backoffQ"] == ["uid-p"]
    clock.advance(0.5)
    assert q.pending()["activeQ"] == ["uid-p"]
