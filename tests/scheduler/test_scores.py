"""NodeResourcesFit strategies and BalancedAllocation scores (upstream least_allocated_test.go and
balanced_allocation_test.go cases as data); batch and per-node scoring must agree."""

from __future__ import annotations

import numpy as np
import pytest

from kubetaint.scheduler.cache import Cache
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.plugins.node_resources_balanced_allocation import NodeResourcesBalancedAllocation
from kubetaint.scheduler.plugins.node_resources_fit import NodeResourcesFit
from kubetaint.scheduler.podinfo import PodInfo
from scheduler.builders import node, pod

NODES = [("node1", "4", "10000"), ("node2", "6", "10000")]


def _scores(plugin: object, cpu: str, memory: str) -> tuple[list[int], list[int]]:
    cache = Cache()
    infos = [cache.add_node(node(n, cpu=c, memory=m)) for n, c, m in NODES]
    pi = PodInfo(pod("p", cpu=cpu, memory=memory))
    state = CycleState()
    plugin.pre_score(state, pi, infos)  # type: ignore[attr-defined]
    single = [plugin.score(state, pi, ni) for ni in infos]  # type: ignore[attr-defined]
    batch = plugin.score_batch(state, pi, cache, np.array([ni.slot for ni in infos]))  # type: ignore[attr-defined]
    return single, batch.tolist()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param({}, [37, 50], id="least allocated favours the bigger node"),
        pytest.param(
            {"scoringStrategy": {"type": "MostAllocated"}},
            [62, 50],
            id="most allocated favours the fuller node",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            [38, 50],
            id="the default ratio shape behaves like least allocated with rounding",
        ),
    ],
)
def test_fit_strategies(args: dict, expected: list[int]) -> None:
    single, batch = _scores(NodeResourcesFit(args), "3", "5000")
    assert single == batch == expected


def test_balanced_allocation() -> None:
    single, batch = _scores(NodeResourcesBalancedAllocation(), "3", "5000")
    assert single == batch == [87, 100]


def test_balanced_allocation_skips_best_effort_pods() -> None:
    plugin = NodeResourcesBalancedAllocation()
    assert plugin.pre_score(CycleState(), PodInfo(pod("p")), []).code.name == "Skip"


def test_unknown_strategy_is_rejected() -> None:
    with pytest.raises(ValueError, match="Unsupported value"):
        NodeResourcesFit({"scoringStrategy": {"type": "Random"}})
