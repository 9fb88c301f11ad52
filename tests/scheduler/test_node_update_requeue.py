"""Scheduler.update_node works out which scheduling properties of the node changed (and asks the
queue to move the pods that event may help) only while some pod is queued: without one, the
event could move nothing. Through any mix of node updates (taints, cordons,
allocatable, labels, condition and heartbeat-only status posts), pods too big for any node, pods
that fit and scheduling cycles, it must leave the queue and decide exactly as working the event
out on every update does."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubetaint.scheduler.events import NODE, ActionType, ClusterEvent, node_change_actions
from kubetaint.scheduler.queue import BACKOFF, UNSCHEDULABLE
from kubetaint.scheduler.scheduler import Scheduler
from scheduler.builders import node, pod, scheduler, taint

JSON = dict[str, Any]


class EveryUpdate(Scheduler):
    """update_node as written first: the event worked out, and offered, on every update."""

    def update_node(self, node: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> None:
        name = (node.get("metadata") or {}).get("name", "")
        known = self.cache.nodes.get(name)
        if old is None and known is not None:
            old = known.node
        self.cache.update_node(node)
        if old is None:
            self.queue.move_on_event(ClusterEvent(NODE, ActionType.Add, "NodeAdd"), None, node)
            return
        actions = node_change_actions(old, node)
        if actions:
            self.queue.move_on_event(ClusterEvent(NODE, actions, "NodeUpdate"), old, node)


def _node(i: int, kind: int, beat: int) -> JSON:
    """Node i of a kind (0 plain, 1 tainted, 2 big, 3 cordoned, 4 not ready), posted at `beat`."""
    n = node(
        f"n{i}",
        cpu="8" if kind == 2 else "2",
        taints=[taint("dedicated", "x")] if kind == 1 else None,
        unschedulable=kind == 3,
        labels={"kind": str(kind)},
    )
    n["status"]["conditions"] = [
        {
            "type": "Ready",
            "status": "False" if kind == 4 else "True",
            "lastHeartbeatTime": f"2024-01-01T00:00:{beat:02d}Z",
        }
    ]
    return n


_ops = st.lists(
    st.one_of(
        st.tuples(st.just("node"), st.integers(0, 4), st.integers(0, 4), st.integers(0, 59)),
        st.tuples(st.just("pod"), st.sampled_from(["1", "3", "6", "100m"])),
        st.tuples(st.just("run")),
        st.tuples(st.just("tick"), st.integers(1, 400)),
    ),
    max_size=30,
)


def _queue(s: Scheduler) -> Any:
    return sorted(s.queue.where.items())


@settings(max_examples=150, deadline=None)
@given(_ops)
@example([("pod", "6"), ("run",), ("node", 0, 2, 3)])  # made big enough: moves
@example([("pod", "6"), ("run",), ("node", 1, 0, 9), ("node", 1, 2, 9), ("run",)])
@example([("pod", "1"), ("node", 0, 1, 1), ("node", 1, 3, 1), ("node", 2, 4, 1), ("run",), ("node", 2, 0, 2)])
def test_node_updates_requeue_as_when_every_update_is_worked_out(ops: list[Any]) -> None:
    nodes = [_node(i, 0, 0) for i in range(3)]
    fast = scheduler(nodes)
    reference = EveryUpdate(fast.clock, random.Random(1))  # one clock: both queues see one time
    for n in nodes:
        reference.add_node(n)
    made = 0
    for op in ops:
        if op[0] == "node":
            n = _node(op[1], op[2], op[3])
            fast.update_node(n)
            reference.update_node(n)
        elif op[0] == "pod":
            made += 1
            p = pod(f"p{made}", cpu=op[1])
            fast.add_pod(p)
            reference.add_pod(p)
        elif op[0] == "tick":
            fast.clock.advance(op[1])  # backoff and leftover flushes of both queues
        else:
            got = [(r.node, r.message) for r in fast.run()]
            want = [(r.node, r.message) for r in reference.run()]
            assert got == want
        assert _queue(fast) == _queue(reference)


def test_without_a_queued_pod_no_event_is_worked_out() -> None:
    s = scheduler([_node(0, 0, 0)])
    assert not s.queue.where
    s.update_node(_node(0, 1, 5))  # tainted: the cache follows
    assert s.cache.nodes["n0"].taints == [taint("dedicated", "x")]
    s.add_pod(pod("big", cpu="6"))
    assert [r.node for r in s.run()] == [None]
    assert s.queue.where == {"uid-big": UNSCHEDULABLE}
    s.update_node(_node(0, 2, 6))  # big now: the pod moves out of unschedulablePods
    assert s.queue.where == {"uid-big": BACKOFF}
