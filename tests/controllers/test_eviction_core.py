"""Pure taint-eviction decisions (kubetaint.core.eviction) against upstream's tables."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetaint.core.eviction import (
    FOREVER,
    TimerDecision,
    decide_timer,
    min_toleration_seconds,
    no_execute_taints,
    node_update_needs_processing,
    pod_update_needs_processing,
)

from .builders import node, pod, taint, toleration, upstream_taint, upstream_toleration


def secs(*values: int | None) -> list[dict]:
    return [{} if v is None else {"tolerationSeconds": v} for v in values]


@pytest.mark.parametrize(
    ("tolerations", "expected"),
    [
        pytest.param([], 0.0, id="no tolerations in use means evict now"),
        pytest.param(secs(None), FOREVER, id="a single unbounded toleration means forever"),
        pytest.param(secs(1, 2), 1.0, id="the smallest of two bounded tolerations"),
        pytest.param(secs(1, None), 1.0, id="bounded then unbounded takes the bounded one"),
        pytest.param(secs(None, 1), 1.0, id="unbounded then bounded takes the bounded one"),
        pytest.param(secs(0), 0.0, id="zero seconds means evict now"),
        pytest.param(secs(-5, None), 0.0, id="negative seconds means evict now"),
        pytest.param(secs(300, 0, 100), 0.0, id="any non-positive value wins over positive ones"),
        pytest.param(secs(None, None), FOREVER, id="several unbounded tolerations mean forever"),
        pytest.param(secs(2**63 - 1), FOREVER, id="math.MaxInt64 seconds is the starting minimum: forever"),
        pytest.param(secs(10**10), FOREVER, id="317 years wrap around to a negative duration: forever"),
        pytest.param(secs(10**10, 60), 60.0, id="a bounded toleration beside a wrapping one counts"),
        pytest.param(secs(2**55), 0.0, id="2^55 seconds wrap around to a zero duration: at once"),
        pytest.param(secs(3600, 300), 300.0, id="default 300s beats a longer one"),
    ],
)
def test_min_toleration_seconds(tolerations: list[dict], expected: float) -> None:
    assert min_toleration_seconds(tolerations) == expected


def test_only_no_execute_taints_are_considered() -> None:
    taints = [
        taint("one", "one", "NoExecute"),
        taint("two", "two", "NoSchedule"),
        taint("three", "", "NoExecute"),
    ]
    assert [t["key"] for t in no_execute_taints(taints)] == ["one", "three"]
    assert no_execute_taints(None) == []


T0 = 1000.0


@pytest.mark.parametrize(
    ("taints", "tolerations", "existing", "expected"),
    [
        pytest.param(
            [upstream_taint(1)],
            [],
            None,
            TimerDecision(cancel=True, add=(T0, T0)),
            id="untolerated taint deletes now",
        ),
        pytest.param(
            [upstream_taint(1)],
            [upstream_toleration(2, None)],
            None,
            TimerDecision(cancel=True, add=(T0, T0)),
            id="a toleration for another taint does not help",
        ),
        pytest.param(
            [upstream_taint(1)],
            [upstream_toleration(1, 100)],
            None,
            TimerDecision(add=(T0, T0 + 100)),
            id="bounded toleration starts a timer from now",
        ),
        pytest.param(
            [upstream_taint(1)],
            [upstream_toleration(1, None)],
            None,
            TimerDecision(cancel=True),
            id="unbounded toleration cancels any timer",
        ),
        pytest.param(
            [upstream_taint(1)],
            [upstream_toleration(1, 100)],
            T0 - 50,
            TimerDecision(),
            id="an existing timer is kept when the pod is still tolerated",
        ),
        pytest.param(
            [upstream_taint(1), upstream_taint(2)],
            [upstream_toleration(1, 100)],
            T0 - 50,
            TimerDecision(cancel=True, add=(T0, T0)),
            id="a new untolerated taint replaces the timer with immediate deletion",
        ),
        pytest.param(
            [upstream_taint(1)],
            [upstream_toleration(1, 100)],
            T0,
            TimerDecision(),
            id="a timer created at this same virtual instant is kept too",
        ),
        pytest.param(
            [upstream_taint(1)],
            [upstream_toleration(1, 100)],
            T0 + 1,
            TimerDecision(cancel=True, add=(T0 + 1, T0 + 100)),
            id="a timer from the future (a clock going backwards) is re-created as upstream does",
        ),
        pytest.param(
            [upstream_taint(1)],
            [upstream_toleration(1, 0)],
            None,
            TimerDecision(add=(T0, T0)),
            id="zero toleration seconds evicts now without a cancel",
        ),
        pytest.param(
            [],
            [upstream_toleration(1, 100)],
            T0 - 5,
            TimerDecision(cancel=True, add=(T0, T0)),
            id="no taints at all: upstream cancels then queues immediate work (never reached by callers)",
        ),
    ],
)
def test_decide_timer(
    taints: list, tolerations: list, existing: float | None, expected: TimerDecision
) -> None:
    assert decide_timer(taints, tolerations, T0, existing) == expected


def test_first_matching_toleration_per_taint_decides() -> None:
    """Only the first matching toleration of each taint counts: an earlier unbounded Exists hides a
    later bounded one."""
    tolerations = [toleration(operator="Exists"), upstream_toleration(1, 10)]
    assert decide_timer([upstream_taint(1)], tolerations, T0, None) == TimerDecision(cancel=True)
    reordered = [upstream_toleration(1, 10), toleration(operator="Exists")]
    assert decide_timer([upstream_taint(1)], reordered, T0, None) == TimerDecision(add=(T0, T0 + 10))


@given(
    created=st.floats(min_value=0, max_value=T0),
    seconds=st.integers(min_value=1, max_value=10**6),
)
def test_a_tolerated_update_never_moves_an_older_timer(created: float, seconds: int) -> None:
    decision = decide_timer([upstream_taint(1)], [upstream_toleration(1, seconds)], T0, created)
    assert decision == TimerDecision()


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(None, pod("p", "n1"), True, id="a new pod is processed"),
        pytest.param(pod("p", "n1"), None, True, id="a deleted pod is processed"),
        pytest.param(pod("p", "n1"), pod("p", "n1"), False, id="unchanged tolerations and node are skipped"),
        pytest.param(pod("p", ""), pod("p", "n1"), True, id="binding to a node is processed"),
        pytest.param(
            pod("p", "n1", tolerations=[upstream_toleration(1, 1)]),
            pod("p", "n1", tolerations=[upstream_toleration(1, 100)]),
            True,
            id="changed toleration seconds are processed",
        ),
        pytest.param(
            pod("p", "n1", tolerations=[]),
            pod("p", "n1"),
            False,
            id="empty and missing tolerations are semantically equal",
        ),
    ],
)
def test_pod_update_filter(old: dict | None, new: dict | None, expected: bool) -> None:
    assert pod_update_needs_processing(old, new) is expected


@pytest.mark.parametrize(
    ("old_taints", "new_taints", "expected"),
    [
        pytest.param([], [upstream_taint(1)], True, id="an added NoExecute taint counts"),
        pytest.param([upstream_taint(1)], [upstream_taint(1)], False, id="identical taints are skipped"),
        pytest.param(
            [upstream_taint(1)],
            [upstream_taint(1), taint("k", "v", "NoSchedule")],
            False,
            id="a NoSchedule change is ignored",
        ),
        pytest.param(
            [upstream_taint(1), upstream_taint(2)],
            [upstream_taint(2), upstream_taint(1)],
            True,
            id="a reordering counts",
        ),
        pytest.param(
            [upstream_taint(1, "2026-01-01T00:00:00Z")],
            [upstream_taint(1, "2026-01-01T00:00:01Z")],
            True,
            id="a new timeAdded counts",
        ),
    ],
)
def test_node_update_filter(old_taints: list, new_taints: list, expected: bool) -> None:
    assert (
        node_update_needs_processing(node("n", taints=old_taints), node("n", taints=new_taints)) is expected
    )
    assert node_update_needs_processing(None, node("n")) is True
    assert node_update_needs_processing(node("n"), None) is True
