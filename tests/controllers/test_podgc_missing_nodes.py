"""PodGC's gc_orphaned finds the indexed nodes the node informer has not cached as one set
difference against the informer's keys: the quarantine queue must come out as asking the informer
for each indexed node does (a node missing enters it, a node present never does, a node already
queued keeps its earlier time), and a node's pods stay unless it is still missing after it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import make_env, node, pod
from kubetaint.controllers.podgc import PodGCController

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
