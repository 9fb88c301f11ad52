"""Remembered per-slot resource scores (scheduler.plugins.slot_scores) against scoring afresh:
the one-node scorers against the vectorised ones, and the remembered scores of a plugin against
its vectorised scoring of the cache as it is now, through nodes and pods coming and going."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.scheduler.cache import Cache
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.plugins.node_resources_balanced_allocation import NodeResourcesBalancedAllocation
from kubetaint.scheduler.plugins.node_resources_fit import NodeResourcesFit
from kubetaint.scheduler.plugins.resource_allocation import balanced, least_allocated, most_allocated
from kubetaint.scheduler.plugins.slot_scores import (
    ONE_BY_ONE,
    balanced_one,
    least_allocated_one,
    most_allocated_one,
)
from kubetaint.scheduler.podinfo import make_pod_info
from scheduler.builders import node, pod

_amounts = st.one_of(
    st.integers(0, 10),
    st.integers(0, 64_000),
    st.integers(0, 1 << 40),
    st.sampled_from([0, 1, 3, 7, 100, 1000, 4000, 1 << 35]),
)


@st.composite
def _rows(draw: Any, width: int) -> tuple[list[int], list[int]]:
    alloc = [draw(_amounts) for _ in range(width)]
    req = [draw(_amounts) for _ in range(width)]
    return alloc, req


@settings(max_examples=400, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda w: st.tuples(_rows(w), st.lists(st.integers(1, 100), min_size=w, max_size=w))
    )
)
def test_one_node_scorers_equal_the_vectorised_scorers(
    case: tuple[tuple[list[int], list[int]], list[int]],
) -> None:
    (alloc, req), weights = case
    a = np.array([alloc], np.int64)
    r = np.array([req], np.int64)
    w = np.array(weights, np.int64)
    assert least_allocated_one(alloc, req, weights) == int(least_allocated(a, r, w)[0])
    assert most_allocated_one(alloc, req, weights) == int(most_allocated(a, r, w)[0])
    assert balanced_one(alloc, req) == int(balanced(a, r)[0])


@pytest.mark.parametrize(
    ("alloc", "req", "least", "most", "balance"),
    [
        pytest.param([4000, 8 << 30], [1000, 2 << 30], 75, 25, 100, id="a quarter used of both"),
        pytest.param([4000, 8 << 30], [5000, 2 << 30], 37, 62, 62, id="cpu over capacity scores 0 least"),
        pytest.param([0, 8 << 30], [100, 2 << 30], 75, 25, 100, id="a resource without capacity is left out"),
        pytest.param([0, 0], [100, 100], 0, 0, 100, id="nothing allocatable scores 0"),
        pytest.param([3, 7], [1, 2], 68, 30, 97, id="integer division truncates"),
    ],
)
def test_one_node_scores_of_known_nodes(
    alloc: list[int], req: list[int], least: int, most: int, balance: int
) -> None:
    assert least_allocated_one(alloc, req, [1, 1]) == least
    assert most_allocated_one(alloc, req, [1, 1]) == most
    assert balanced_one(alloc, req) == balance


_FIT_ARGS = [
    {},
    {"scoringStrategy": {"type": "MostAllocated"}},
    {
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "requestedToCapacityRatio": {
                "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
            },
        }
    },
    {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [
                {"name": "cpu", "weight": 3},
                {"name": "memory", "weight": 1},
                {"name": "example.com/gpu", "weight": 2},
            ],
        }
    },
]

_cpu = st.sampled_from(["0", "100m", "250m", "1", "3"])
_memory = st.sampled_from(["", "64Mi", "1Gi", "3Gi"])
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 30), st.integers(0, 7), _cpu, _memory),
        st.tuples(st.just("remove"), st.integers(0, 30)),
        st.tuples(
            st.just("node"),
            st.integers(0, 7),
            st.sampled_from(["2", "4", "0"]),
            st.sampled_from(["8Gi", "0"]),
        ),
        st.tuples(st.just("drop"), st.integers(0, 7)),
        st.tuples(st.just("score"), _cpu, _memory, st.integers(1, 8)),
    ),
    max_size=40,
)


def _fresh_scores(plugin: Any, cache: Cache, slots: Any, pod_req: list[int]) -> Any:
    return plugin._batch_scores(cache, slots, pod_req)


@settings(max_examples=80, deadline=None)
@given(_ops, st.sampled_from(range(len(_FIT_ARGS))))
def test_remembered_scores_equal_scoring_the_cache_afresh(ops: list[tuple[Any, ...]], fit_args: int) -> None:
    cache = Cache()
    plugins = [NodeResourcesFit(_FIT_ARGS[fit_args]), NodeResourcesBalancedAllocation()]
    for i in range(8):
        cache.add_node(node(f"n{i}", cpu="4", memory="8Gi", extra={"example.com/gpu": "2"}))
    for op in ops:
        if op[0] == "add":
            _, p, n, cpu, memory = op
            requests = {"example.com/gpu": "1"} if p % 3 == 0 else None
            cache.add_pod(
                pod(
                    f"p{p}",
                    cpu=None if cpu == "0" else cpu,
                    memory=memory or None,
                    node_name=f"n{n}",
                    extra_requests=requests,
                )
            )
        elif op[0] == "remove":
            cache.remove_pod(f"default/p{op[1]}")
        elif op[0] == "node":
            _, n, cpu, memory = op
            cache.add_node(node(f"n{n}", cpu=cpu, memory=memory))
        elif op[0] == "drop":
            cache.remove_node(f"n{op[1]}")
        else:
            _, cpu, memory, take = op
            pi = make_pod_info(pod("new", cpu=None if cpu == "0" else cpu, memory=memory or None))
            slots = cache.order()[:take]
            for plugin in plugins:
                state = CycleState()
                plugin.pre_score(state, pi, [])
                pod_req = plugin._pod_req(state, pi)
                remembered = plugin.score_batch(state, pi, cache, slots)
                assert remembered.tolist() == _fresh_scores(plugin, cache, slots, pod_req).tolist()


def test_many_stale_slots_are_scored_vectorised_and_equal_one_by_one() -> None:
    cache = Cache()
    for i in range(3 * ONE_BY_ONE):
        cache.add_node(node(f"n{i}", cpu=str(1 + i % 5), memory=f"{1 + i % 3}Gi"))
    plugin = NodeResourcesBalancedAllocation()
    pi = make_pod_info(pod("new", cpu="500m", memory="256Mi"))
    state = CycleState()
    plugin.pre_score(state, pi, [])
    slots = cache.order()
    first = plugin.score_batch(state, pi, cache, slots).tolist()  # every slot stale: vectorised
    assert first == plugin._batch_scores(cache, slots, plugin._pod_req(state, pi)).tolist()
    cache.add_pod(pod("p", cpu="1", memory="1Gi", node_name="n0"))
    again = plugin.score_batch(state, pi, cache, slots).tolist()  # one stale slot: one by one
    assert again == plugin._batch_scores(cache, slots, plugin._pod_req(state, pi)).tolist()
    assert again != first, "the node that took a pod scores differently"
