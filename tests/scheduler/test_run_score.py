"""RunScorePlugins with every Score plugin scoring in batches (`Framework._run_score_batches`)
gives the per-plugin scores and weighted totals of scoring plugin by plugin, skips the plugins
PreScore skipped, and names the first plugin, in order, whose normalised scores leave [0, 100]."""

from __future__ import annotations

import numpy as np
import pytest

from kubetaint.scheduler.cache import Cache, IntArray
from kubetaint.scheduler.extension_points import CycleState, Plugin, ScoreBatch, ScoreExtensions, ScorePlugin
from kubetaint.scheduler.framework import Framework
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins.priority_sort import PrioritySort
from kubetaint.scheduler.podinfo import PodInfo
from scheduler.builders import node, pod


class _Fixed(Plugin, ScorePlugin, ScoreBatch, ScoreExtensions):
    """Scores each node by its slot times `step`, then adds `shift` when normalising."""

    def __init__(self, name: str, step: int, shift: int = 0) -> None:
        self.name = name  # type: ignore[misc]
        self.step, self.shift = step, shift

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        return ni.slot * self.step

    def score_batch(self, state: CycleState, pi: PodInfo, cache: Cache, slots: IntArray) -> IntArray:
        out: IntArray = slots.astype(np.int64) * self.step
        return out

    def normalize_score(self, state: CycleState, pi: PodInfo, scores: IntArray) -> IntArray:
        out: IntArray = scores + self.shift
        return out


def _run(plugins: list[_Fixed], weights: dict[str, int], skip: set[str], batched: bool) -> tuple[dict, list]:
    fw = Framework("p", {"queueSort": [PrioritySort()], "score": list(plugins)}, weights)
    cache = Cache()
    infos = [cache.add_node(node(f"n{i}")) for i in range(4)]
    state = CycleState()
    state.skip_score = set(skip)
    per_plugin, total = fw.run_score(state, PodInfo(pod("p")), infos, cache if batched else None)
    return {name: scores.tolist() for name, scores in per_plugin.items()}, total.tolist()


@pytest.mark.parametrize(
    ("weights", "skip"),
    [
        pytest.param({}, set(), id="every plugin, weight 1"),
        pytest.param({"a": 3, "c": 2}, set(), id="weighted plugins"),
        pytest.param({"a": 3}, {"b"}, id="a plugin PreScore skipped"),
        pytest.param({}, {"a", "b", "c"}, id="every plugin skipped: zero totals"),
    ],
)
def test_batched_scores_and_totals_are_plugin_by_plugin(
    weights: dict[str, int], skip: set[str], default_mode: None
) -> None:
    plugins = [_Fixed("a", 10), _Fixed("b", 20, 5), _Fixed("c", 1)]
    assert _run(plugins, weights, skip, batched=True) == _run(plugins, weights, skip, batched=False)


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "plugin by plugin"])
def test_the_first_plugin_out_of_range_is_named(batched: bool) -> None:
    plugins = [_Fixed("a", 10), _Fixed("b", 50), _Fixed("c", 1, -1)]
    with pytest.raises(
        ValueError, match=r"^plugin 'b' returns an invalid score 150, it should in the range of \[0, 100\]"
    ):
        _run(plugins, {}, set(), batched=batched)
