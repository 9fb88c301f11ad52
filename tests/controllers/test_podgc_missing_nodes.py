"""PodGC's gc_orphaned finds the indexed nodes the node informer has not cached from a set kept by
pod and node changes (`_unlisted`): the quarantine queue must come out as asking the informer
for each indexed node does (a node missing enters it, a node present never does, a node already
queued keeps its earlier time), and a node's pods stay unless it is still missing after it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import make_env, node, pod
from kubetaint.controllers.podgc import PodGCController
from kubetaint.store.informer import Informer

NODES = ("n1", "n2", "n3", "n4")


def _queue_by_asking(controller: PodGCController, before: dict[str, float], now: float) -> dict[str, float]:
    """gc_orphaned's quarantine step as one informer get per indexed node."""
    queue = dict(before)
    for name in controller._by_node:
        if controller.nodes.get("", name) is None:
            when = now + controller.quarantine
            queue[name] = min(queue.get(name, when), when)
    return queue


def _world(bound: list[str], present: list[str]) -> tuple[Any, Any, PodGCController]:
    clock, store, _ = make_env()
    controller = PodGCController(store, clock)
    controller.start()
    for name in present:
        store.create("nodes", node(name))
    for i, name in enumerate(bound):
        store.create("pods", pod(f"p{i}", node_name=name))
    return clock, store, controller


def _compare(bound: list[str], present: list[str], queued: dict[str, float]) -> None:
    clock, _, controller = _world(bound, present)
    clock.advance(5)  # before the first pass: gc_orphaned is called by hand
    controller._node_queue.update(queued)
    expected = _queue_by_asking(controller, controller._node_queue, clock.now())
    # queued nodes no longer due stay; due ones are only dropped when found
    controller.gc_orphaned()
    due = {n for n, when in expected.items() if when <= clock.now()}
    assert controller._node_queue == {n: w for n, w in expected.items() if n not in due}


@pytest.mark.parametrize(
    ("bound", "present", "queued"),
    [
        pytest.param(["n1", "n2"], ["n1", "n2"], {}, id="every node present: nothing queued"),
        pytest.param(["n1", "n2", "n3"], ["n2"], {}, id="two nodes missing enter the quarantine"),
        pytest.param(["n1"], [], {"n1": 1e9}, id="a queued node keeps the earlier of its two times"),
        pytest.param(["n1"], [], {"n1": 0.0}, id="a missing node already due is dropped from the queue"),
        pytest.param([], ["n1"], {"n4": 1e9}, id="a queued node without pods stays queued"),
    ],
)
def test_the_quarantine_queue_matches_asking_for_each_node(
    bound: list[str], present: list[str], queued: dict[str, float]
) -> None:
    _compare(bound, present, queued)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(NODES), max_size=8),
    st.sets(st.sampled_from(NODES)),
    st.dictionaries(st.sampled_from(NODES), st.sampled_from([0.0, 1e9])),
)
def test_any_mix_matches_asking_for_each_node(
    bound: list[str], present: set[str], queued: dict[str, float]
) -> None:
    _compare(bound, sorted(present), queued)


# the unlisted set: kept by pod and node changes ---------------------------------------------------

OP = st.one_of(
    st.tuples(st.just("create node"), st.sampled_from(NODES)),
    st.tuples(st.just("delete node"), st.sampled_from(NODES)),
    st.tuples(st.just("bind pod"), st.sampled_from(("p1", "p2", "p3")), st.sampled_from(NODES)),
    st.tuples(st.just("delete pod"), st.sampled_from(("p1", "p2", "p3"))),
    st.tuples(st.just("tick")),
)


def _unlisted_by_asking(controller: PodGCController) -> set[str]:
    """What the unlisted set stands for: each indexed node the node informer has not cached."""
    return {name for name in controller._by_node if controller.nodes.get("", name) is None}


def _apply(store: Any, controller: PodGCController, clock: Any, op: tuple[Any, ...]) -> None:
    kind = op[0]
    exists = {n["metadata"]["name"] for n in store.list("nodes").items}
    pods = {p["metadata"]["name"] for p in store.list("pods").items}
    if kind == "create node" and op[1] not in exists:
        store.create("nodes", node(op[1]))
    elif kind == "delete node" and op[1] in exists:
        store.delete("nodes", "", op[1])
    elif kind == "bind pod" and op[1] not in pods:
        store.create("pods", pod(op[1], node_name=op[2]))
    elif kind == "delete pod" and op[1] in pods:
        store.delete("pods", "default", op[1], grace_period_seconds=0)
    elif kind == "tick":
        clock.advance(25)
        expected = _queue_by_asking(controller, controller._node_queue, clock.now())
        controller.gc_orphaned()
        due = {n for n, when in expected.items() if when <= clock.now()}
        assert controller._node_queue == {n: w for n, w in expected.items() if n not in due}


@pytest.mark.parametrize(
    "order",
    [
        pytest.param("started first", id="the informers started before the controller is built"),
        pytest.param("controller first", id="the controller's own informers start with it"),
        pytest.param("pods first", id="pods indexed before the node informer lists"),
    ],
)
@settings(max_examples=30, deadline=None)
@given(ops=st.lists(OP, max_size=25))
def test_the_unlisted_set_is_the_indexed_nodes_the_informer_lacks(order: str, ops: list[Any]) -> None:
    clock, store, _ = make_env()
    store.create("nodes", node("n1"))
    store.create("pods", pod("p0", node_name="n2"))  # bound to a node that never existed
    nodes, pods = Informer(store, "nodes"), Informer(store, "pods")
    if order == "started first":
        nodes.start()
        pods.start()
        controller = PodGCController(store, clock, pod_informer=pods, node_informer=nodes)
    elif order == "pods first":
        pods.start()
        controller = PodGCController(store, clock, pod_informer=pods, node_informer=nodes)
        assert controller._unlisted == {"n2"}, "nothing is cached yet: n2's pod's node is unlisted"
        nodes.start()
    else:
        controller = PodGCController(store, clock)
        controller.start()
    assert controller._unlisted == _unlisted_by_asking(controller) == {"n2"}
    for op in ops:
        _apply(store, controller, clock, op)
        assert controller._unlisted == _unlisted_by_asking(controller)


@pytest.mark.parametrize(
    ("steps", "unlisted"),
    [
        pytest.param([("bind pod", "p1", "n3")], {"n2", "n3"}, id="a pod bound to a missing node"),
        pytest.param([("create node", "n2")], set(), id="the missing node created"),
        pytest.param([("delete pod", "p0")], set(), id="the missing node's last pod deleted"),
        pytest.param(
            [("bind pod", "p1", "n1"), ("delete node", "n1")], {"n1", "n2"}, id="a node with pods deleted"
        ),
        pytest.param([("delete node", "n1")], {"n2"}, id="a node without pods deleted: not indexed"),
    ],
)
def test_unlisted_nodes_follow_pod_and_node_changes(steps: list[Any], unlisted: set[str]) -> None:
    clock, store, _ = make_env()
    store.create("nodes", node("n1"))
    store.create("pods", pod("p0", node_name="n2"))
    controller = PodGCController(store, clock)
    controller.start()
    for step in steps:
        _apply(store, controller, clock, step)
    assert controller._unlisted == unlisted
