"""The diagnosis of a pod no node fits (each node's first failing filter, the plugins they name,
the FitError message, preemption's message and victims) remembered per filter signature
(scheduler.filter_memo NodeStatuses) against the filters run afresh on every node in reference
mode: through nodes changing (taints, cordons, sizes) and going, bound pods of lower priority
coming and going, and pods too big, too picky or wanting preemption retried after each change,
two schedulers fed the same events decide alike and diagnose alike."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.scheduler.fit_error import NodeToStatus
from kubetaint.scheduler.scheduler import Scheduler, ScheduleResult
from kubetaint.speed.reference import reference_mode_set
from scheduler.builders import node, pod, scheduler, taint

JSON = dict[str, Any]
NODES = 12
#: pending pods: too big for every node, wanting a label no node has, able to preempt the
#: low-priority pods of a full node, small enough to fit somewhere
PENDING: list[JSON] = [
    pod("t", cpu="100"),
    pod("t", cpu="100m", node_selector={"disk": "ssd"}),
    pod("t", cpu="3", priority=100),
    pod("t", cpu="1"),
]


def _node(i: int, kind: int) -> JSON:
    """Node i of a kind: 0 plain, 1 tainted, 2 small, 3 cordoned."""
    return node(
        f"n{i:02d}",
        cpu="1500m" if kind == 2 else "4",
        taints=[taint("dedicated", "x")] if kind == 1 else None,
        unschedulable=kind == 3,
    )


@contextmanager
def _reference() -> Iterator[None]:
    with reference_mode_set(True):
        yield


def _statuses(node_to_status: dict[str, Any]) -> list[tuple[str, int, tuple[str, ...], str]]:
    return [(name, int(s.code), s.reasons, s.plugin) for name, s in node_to_status.items()]


def _diagnosis(r: ScheduleResult) -> tuple[Any, ...]:
    fit = r.fit_error
    victims = sorted((v.get("metadata") or {}).get("name", "") for v in r.victims)
    if fit is None:
        return (r.node, r.message, victims)
    d = fit.diagnosis
    return (
        r.node,
        r.message,
        r.nominated_node,
        victims,
        sorted(_statuses(d.node_to_status)),
        sorted(d.unschedulable_plugins),
        sorted(fit.histogram().items()),
    )


_ops = st.lists(
    st.one_of(
        st.tuples(st.just("node"), st.integers(0, NODES + 1), st.integers(0, 3)),
        st.tuples(st.just("drop"), st.integers(0, NODES + 1)),
        st.tuples(st.just("bound"), st.integers(0, 30), st.integers(0, NODES - 1)),
        st.tuples(st.just("unbind"), st.integers(0, 30)),
        st.tuples(st.just("pending"), st.integers(0, len(PENDING) - 1), st.integers(1, 3)),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=NODES, max_size=NODES), _ops)
def test_a_remembered_diagnosis_is_the_diagnosis_made_afresh(kinds: list[int], ops: list[Any]) -> None:
    _diagnose_alike(kinds, ops)


def test_a_template_retried_after_a_pod_left_a_node_is_diagnosed_again_on_that_node() -> None:
    """The second pod of a too-big template takes the first one's statuses; after a bound pod
    left a full node, that node's status is judged again (and a preemptor finds its victims)."""
    fill = [("bound", i, 0) for i in range(4)]
    _diagnose_alike(
        [0, 0, 1, 3], [*fill, ("pending", 0, 2), ("pending", 2, 1), ("unbind", 1), ("pending", 0, 2)]
    )


@pytest.mark.usefixtures("default_mode")
def test_the_remembered_diagnosis_carries_its_summary() -> None:
    """A cycle whose statuses come from memory hands preemption a NodeToStatus with the reason
    counts and the Unschedulable nodes (in node-tree order) the statuses give."""
    s = scheduler([_node(i, 0) for i in range(4)])
    for i in range(4):
        s.add_pod(_bound(f"b{i}", f"n{i:02d}", cpu="3"))
    results = []
    for name in ("a", "b"):
        s.add_pod({**pod(name, cpu="2"), "metadata": {"name": name, "namespace": "default", "uid": name}})
        results += s.run()
    last = results[-1].fit_error
    assert last is not None
    node_to_status = last.diagnosis.node_to_status
    assert isinstance(node_to_status, NodeToStatus)
    assert node_to_status.unschedulable == ["n00", "n01", "n02", "n03"]
    assert dict(node_to_status.reasons) == {"Insufficient cpu": 4}


def _bound(name: str, node_name: str, cpu: str = "1") -> JSON:
    return pod(name, cpu=cpu, node_name=node_name, priority=0)


def _diagnose_alike(kinds: list[int], ops: list[Any]) -> None:
    nodes = [_node(i, k) for i, k in enumerate(kinds)]
    remembering: Scheduler = scheduler(nodes)
    with _reference():
        afresh: Scheduler = scheduler(nodes)
    made = 0
    for op in ops:
        for s in (remembering, afresh):
            with _reference() if s is afresh else nullcontext():
                if op[0] == "node":
                    s.update_node(_node(op[1], op[2]))
                elif op[0] == "drop":
                    s.remove_node(f"n{op[1]:02d}")
                elif op[0] == "bound":
                    s.add_pod(_bound(f"b{op[1]}", f"n{op[2]:02d}"))
                elif op[0] == "unbind":
                    s.remove_pod(_bound(f"b{op[1]}", "n00"))
        if op[0] == "pending":
            for _ in range(op[2]):
                made += 1
                for s in (remembering, afresh):
                    spec = PENDING[op[1]]["spec"]  # the template's very values
                    meta = {"name": f"p{made}", "namespace": "default", "uid": f"uid-p{made}"}
                    s.add_pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
        got = remembering.run()
        with _reference():
            want = afresh.run()
        assert [_diagnosis(r) for r in got] == [_diagnosis(r) for r in want]
        assert remembering.queue.pending() == afresh.queue.pending()
