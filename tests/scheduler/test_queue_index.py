"""SchedulingQueue.move_on_event looks only at the unschedulable pods whose rejecting plugins
registered an event the change matches (and asks a hint once per pod signature). Through any mix
of node updates, pods of several shapes, cycles, deletions and clock ticks it must move exactly
the pods, in exactly the order, that asking every unschedulable pod's hints would."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubetaint.scheduler.events import ClusterEvent
from kubetaint.scheduler.queue import UNSCHEDULABLE, SchedulingQueue
from kubetaint.scheduler.scheduler import Scheduler
from scheduler.builders import node, pod, scheduler, taint, toleration

JSON = dict[str, Any]


class FullScanQueue(SchedulingQueue):
    """move_on_event as a scan of every queued pod, each pod's hints asked afresh."""

    def move_on_event(
        self, event: ClusterEvent, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
    ) -> int:
        moved = 0
        for key, place in list(self.where.items()):
            if place != UNSCHEDULABLE:
                continue
            qpi = self.pods[key]
            if qpi.gated:
                continue
            if self._worth_requeuing(qpi, event, old, new):
                self._requeue(qpi, event.label or f"{event.resource}/{event.action!r}")
                moved += 1
        return moved


def _reference(s: Scheduler) -> Scheduler:
    ref = Scheduler(s.clock, random.Random(1))
    old = ref.queue
    full = FullScanQueue(
        s.clock, sort_key=old.sort_key, pre_enqueue=old.pre_enqueue, hints=old.hints, on_active=old.on_active
    )
    ref.queue = full
    return ref


def _node(i: int, kind: int) -> JSON:
    """Node i: 0 plain, 1 tainted a, 2 tainted b, 3 big, 4 cordoned, 5 labelled."""
    return node(
        f"n{i}",
        cpu="8" if kind == 3 else "2",
        taints=[taint("dedicated", "a" if kind == 1 else "b")] if kind in (1, 2) else None,
        unschedulable=kind == 4,
        labels={"kind": str(kind)},
    )


def _pod(n: int, shape: int) -> JSON:
    """Pod shapes: 0 small, 1 too big, 2 tolerates a, 3 tolerates b and is big, 4 wants kind 5."""
    tolerations = {2: [toleration("dedicated", "Equal", "a", "NoSchedule")]}.get(shape)
    if shape == 3:
        tolerations = [toleration("dedicated", "Equal", "b", "NoSchedule")]
    p = pod(
        f"p{n}",
        cpu={1: "6", 3: "4"}.get(shape, "500m"),
        tolerations=tolerations,
        node_selector={"kind": "5"} if shape == 4 else None,
    )
    return p


_ops = st.lists(
    st.one_of(
        st.tuples(st.just("node"), st.integers(0, 3), st.integers(0, 5)),
        st.tuples(st.just("pod"), st.integers(0, 4)),
        st.tuples(st.just("run")),
        st.tuples(st.just("delete"), st.integers(0, 12)),
        st.tuples(st.just("tick"), st.integers(1, 400)),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(_ops)
@example([("pod", 1), ("pod", 2), ("run",), ("node", 0, 3), ("node", 1, 1)])
@example([("pod", 4), ("pod", 3), ("run",), ("node", 2, 5), ("node", 2, 2), ("tick", 5), ("run",)])
def test_indexed_moves_are_the_full_scans(ops: list[Any]) -> None:
    nodes = [_node(i, 0) for i in range(4)]
    fast = scheduler(nodes)
    ref = _reference(fast)
    for n in nodes:
        ref.add_node(n)
    made = 0
    bound: list[JSON] = []
    for op in ops:
        if op[0] == "node":
            n = _node(op[1], op[2])
            fast.update_node(n)
            ref.update_node(n)
        elif op[0] == "pod":
            made += 1
            p = _pod(made, op[1])
            fast.add_pod(p)
            ref.add_pod(p)
        elif op[0] == "delete":
            if bound:
                gone = bound.pop(op[1] % len(bound))
                fast.remove_pod(gone)
                ref.remove_pod(gone)
        elif op[0] == "tick":
            fast.clock.advance(op[1])  # type: ignore[attr-defined]
        else:
            got = fast.run()
            want = ref.run()
            assert [(r.node, r.message) for r in got] == [(r.node, r.message) for r in want]
            for r in got:
                if r.node is not None:
                    b = {**r.pod, "spec": {**r.pod["spec"], "nodeName": r.node}}
                    bound.append(b)
                    fast.update_pod(b)
                    ref.update_pod(b)
        assert list(fast.queue.where.items()) == list(ref.queue.where.items())
        assert fast.queue.moved_events == ref.queue.moved_events


def test_an_event_no_rejecting_plugin_registered_examines_no_pod() -> None:
    s = scheduler([node("n", taints=[taint("k", "v")])], [pod("p")])
    assert [r.node for r in s.run()] == [None]
    asked: list[str] = []
    hints = s.queue.hints
    s.queue.hints = {
        name: [type(r)(r.event, lambda pi, o, n, name=name: asked.append(name) or False) for r in registered]
        for name, registered in hints.items()
    }
    s.update_node(node("n", cpu="8", taints=[taint("k", "v")]))  # allocatable only
    assert asked == []
    s.update_node(node("n", cpu="8", taints=[taint("k", "w")]))  # a taint change: TaintToleration asked
    assert asked == ["TaintToleration"]


@pytest.mark.usefixtures("default_mode")
def test_a_hint_is_asked_once_per_pod_signature() -> None:
    pods = [pod(f"p{i}", tolerations=[toleration("k", "Equal", "v", "NoSchedule")]) for i in range(50)]
    s = scheduler([node("n", taints=[taint("k", "w")])], pods)
    assert all(r.node is None for r in s.run())
    calls = 0
    registered = s.queue.hints["TaintToleration"][0]
    original = registered.hint

    def counting(pi: Any, old: Any, new: Any) -> bool:
        nonlocal calls
        calls += 1
        return original(pi, old, new)

    s.queue.hints = {
        **s.queue.hints,
        "TaintToleration": [type(registered)(registered.event, counting, registered.signature)],
    }
    s.update_node(node("n", taints=[taint("k", "v")]))
    assert calls == 1
    assert len(s.queue.pending()["backoffQ"]) == 50
