"""The scheduling framework: plugins per extension point and the Run* helpers
(mirrors pkg/scheduler/framework/runtime/framework.go).

A plugin implements the extension points whose Protocols (scheduler.extension_points) it names
among its bases. Filter and Score plugins may declare `FilterBatch`/`ScoreBatch` too, vectorised
over the cache's node slots; the scheduler uses them when every plugin of the point has one, and
never in reference mode (`KUBETAINT_REFERENCE=1`), where every node is judged one by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubetaint.scheduler.events import ClusterEventWithHint
from kubetaint.scheduler.extension_points import (
    EXTENSION_POINTS,
    BindPlugin,
    CycleState,
    FilterPlugin,
    Plugin,
    PostFilterPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreBatch,
    ScoreExtensions,
    ScorePlugin,
    declares,
    has_enqueue_extensions,
    has_filter_batch,
    has_pre_filter_result,
    has_score_batch,
    has_score_extensions,
)
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.nodes_at import node_slots
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import MAX_NODE_SCORE, SUCCESS, Code, Status
from kubetaint.speed.reference import reference_mode

if TYPE_CHECKING:
    from kubetaint.scheduler.cache import BoolArray, Cache, IntArray

__all__ = ["Framework", "PreFilterOutcome", "default_normalize_score", "go_list"]

_min, _max = np.minimum.reduce, np.maximum.reduce


@dataclass
class PreFilterOutcome:
    """What RunPreFilterPlugins returns: the merged PreFilterResult node names (None: all nodes),
    the status, and the plugins whose PreFilterResult narrowed the nodes."""

    node_names: frozenset[str] | None
    status: Status
    plugins_with_nodes: set[str]


def go_list(items: Sequence[str]) -> str:
    """A Go `%v` of a []string: "[a b]"."""
    return "[" + " ".join(items) + "]"


@dataclass
class Framework:
    """One profile's plugins per extension point, score weights and percentageOfNodesToScore."""

    profile_name: str
    points: dict[str, list[Plugin]]
    weights: dict[str, int]
    percentage_of_nodes_to_score: int | None = None
    plugins: dict[str, Plugin] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.filter_plugins: list[FilterPlugin] = self._at("filter")
        self.score_plugins: list[ScorePlugin] = self._at("score")
        self.pre_filter_plugins: list[PreFilterPlugin] = self._at("preFilter")
        self.pre_score_plugins: list[PreScorePlugin] = self._at("preScore")
        self.post_filter_plugins: list[PostFilterPlugin] = self._at("postFilter")
        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = self._at("preEnqueue")
        self.bind_plugins: list[BindPlugin] = self._at("bind")
        self.reserve_plugins: list[ReservePlugin] = self._at("reserve")
        sorts: list[QueueSortPlugin] = self._at("queueSort")
        if len(sorts) != 1:  # (the configuration admits exactly one)
            raise ValueError(f"one queue sort plugin is needed, not {len(sorts)}")
        self.queue_sort: QueueSortPlugin = sorts[0]
        #: whether every filter plugin declares FilterBatch (the search then runs them vectorised,
        #: unless in reference mode)
        self.batch_filter = all(has_filter_batch(p) for p in self.filter_plugins)
        #: per score plugin: (plugin, its weight, itself as ScoreBatch and as ScoreExtensions when
        #: it declares them, else None)
        self._scorers: list[tuple[ScorePlugin, int, ScoreBatch | None, ScoreExtensions | None]] = [
            (
                pl,
                self.weights.get(pl.name, 1),
                pl if has_score_batch(pl) else None,
                pl if has_score_extensions(pl) else None,
            )
            for pl in self.score_plugins
        ]
        #: whether every score plugin declares ScoreBatch (`_run_score_batches`)
        self._batch_scorers = all(batch is not None for _, _, batch, _ in self._scorers)

    def _at(self, point: str) -> list[Any]:
        """The plugins enabled at `point`, each declaring the point's Protocol (the configuration
        admits no other: scheduler.config)."""
        found = self.points.get(point, [])
        for plugin in found:
            if not declares(plugin, EXTENSION_POINTS[point]):
                raise ValueError(f"plugin {plugin.name!r} does not implement {point}")
        return found

    # ---- queue -------------------------------------------------------------------------------
    def run_pre_enqueue(self, pi: PodInfo) -> Status:
        for pl in self.pre_enqueue_plugins:
            status: Status = pl.pre_enqueue(pi)
            if not status.is_success():
                return status.with_plugin(pl.name)
        return SUCCESS

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """EventsToRegister of every plugin declaring EnqueueExtensions."""
        return {
            name: pl.events_to_register() for name, pl in self.plugins.items() if has_enqueue_extensions(pl)
        }

    def run_pre_filter_plugins(
        self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]
    ) -> PreFilterOutcome:
        """RunPreFilterPlugins: Skip marks the plugin's Filter skipped; UnschedulableAndUnresolvable
        stops at once; Unschedulable is remembered while the other plugins still run (so that
        preemption has their state). The plugins' PreFilterResult node names are intersected; an
        empty intersection rejects the pod. `plugins_with_nodes` names the plugins that narrowed."""
        names: frozenset[str] | None = None
        with_nodes: set[str] = set()
        result = SUCCESS
        for pl in self.pre_filter_plugins:
            status: Status = pl.pre_filter(state, pi, nodes)
            if status.code == Code.Skip:
                state.skip_filter.add(pl.name)
                continue
            if status.code == Code.Unschedulable:
                result = status.with_plugin(pl.name)
                continue
            if not status.is_success():
                return PreFilterOutcome(None, status.with_plugin(pl.name), set())
            plugin_names: frozenset[str] | None = (
                pl.pre_filter_result(state, pi) if has_pre_filter_result(pl) else None
            )
            if plugin_names is None:
                continue
            with_nodes.add(pl.name)
            names = plugin_names if names is None else names & plugin_names
            if not names:
                listed = sorted(with_nodes)
                msg = (
                    f"node(s) didn't satisfy plugin {listed[0]}"
                    if len(listed) == 1
                    else f"node(s) didn't satisfy plugin(s) {go_list(listed)} simultaneously"
                )
                return PreFilterOutcome(names, Status(Code.UnschedulableAndUnresolvable, msg), with_nodes)
        return PreFilterOutcome(names, result, with_nodes)

    def run_filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        """RunFilterPlugins: the first non-success in plugin order, with the plugin's name."""
        skip = state.skip_filter
        for pl in self.filter_plugins:
            if pl.name in skip:
                continue
            status: Status = pl.filter(state, pi, ni)
            if not status.is_success():
                return status.with_plugin(pl.name)
        return SUCCESS

    def run_filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray:
        """A pass mask over cache slots: the AND of every filter plugin's vectorised verdict."""
        return self.run_filter_batch_split(state, pi, cache, ())[0]

    def run_filter_batch_split(
        self, state: CycleState, pi: PodInfo, cache: Cache, part: tuple[type, ...]
    ) -> tuple[BoolArray, BoolArray]:
        """`run_filter_batch`, and the AND of the verdicts of the plugins of the types in `part`
        alone (a node every plugin passes passes those too)."""
        mask: BoolArray = cache.valid.copy()
        partial: BoolArray = mask.copy() if part else mask
        for pl in self.filter_plugins:
            if pl.name in state.skip_filter:
                continue
            assert has_filter_batch(pl)  # (batch_filter: every filter plugin declares it)
            passed = pl.filter_batch(state, pi, cache)
            if passed is not None:
                mask &= passed
                if part and type(pl) in part:
                    partial &= passed
        return mask, partial

    def run_filter_part(self, state: CycleState, pi: PodInfo, ni: NodeInfo, part: tuple[type, ...]) -> bool:
        """Whether the node passes the (not skipped) filter plugins of the types in `part`."""
        skip = state.skip_filter
        for pl in self.filter_plugins:
            if type(pl) in part and pl.name not in skip and not pl.filter(state, pi, ni).is_success():
                return False
        return True

    # ---- reserve -----------------------------------------------------------------------------
    def run_reserve(self, state: CycleState, pi: PodInfo, node_name: str) -> Status:
        """RunReservePluginsReserve: the first failure (the caller then runs Unreserve)."""
        for pl in self.reserve_plugins:
            status: Status = pl.reserve(state, pi, node_name)
            if not status.is_success():
                return status.with_plugin(pl.name)
        return SUCCESS

    def run_unreserve(self, state: CycleState, pi: PodInfo, node_name: str) -> None:
        """RunReservePluginsUnreserve: every reserve plugin, in reverse order."""
        for pl in reversed(self.reserve_plugins):
            pl.unreserve(state, pi, node_name)

    # ---- score -------------------------------------------------------------------------------
    def run_pre_score(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        for pl in self.pre_score_plugins:
            status: Status = pl.pre_score(state, pi, nodes)
            if status.code == Code.Skip:
                state.skip_score.add(pl.name)
            elif not status.is_success():
                return status.with_plugin(pl.name)
        return SUCCESS

    def run_score(
        self,
        state: CycleState,
        pi: PodInfo,
        nodes: Sequence[NodeInfo],
        cache: Cache | None = None,
        slots: IntArray | None = None,
    ) -> tuple[dict[str, IntArray], IntArray]:
        """RunScorePlugins + NormalizeScore: per-plugin normalised scores and the weighted totals
        (`slots`: the nodes' cache slots, when the caller has them)."""
        per_plugin: dict[str, IntArray] = {}
        reference = reference_mode()
        skip = state.skip_score
        if cache is not None and nodes and not reference and self._batch_scorers:
            return self._run_score_batches(
                state, pi, cache, slots if slots is not None else node_slots(nodes)
            )
        total: IntArray = np.zeros(len(nodes), np.int64)
        for pl, weight, batch, extensions in self._scorers:
            if pl.name in skip:
                continue
            if cache is not None and batch is not None and not reference:
                if slots is None:
                    slots = node_slots(nodes)
                raw: IntArray = batch.score_batch(state, pi, cache, slots)
            else:
                raw = np.fromiter((pl.score(state, pi, ni) for ni in nodes), np.int64, len(nodes))
            scores: IntArray = extensions.normalize_score(state, pi, raw) if extensions is not None else raw
            # (the ufuncs' own reductions: ndarray.min/max add two Python-level calls each)
            if len(scores) and (_min(scores) < 0 or _max(scores) > MAX_NODE_SCORE):
                raise _invalid_score(pl.name, scores)
            per_plugin[pl.name] = scores
            total += scores * weight
        return per_plugin, total

    def _run_score_batches(
        self, state: CycleState, pi: PodInfo, cache: Cache, slots: IntArray
    ) -> tuple[dict[str, IntArray], IntArray]:
        """Speeds up run_score when every Score plugin scores in batches (the default profile):
        the normalised scores of every plugin not skipped are checked for their range and
        weighted into the totals as one array (one reduction each instead of one per plugin),
        with the same integer sums (off with KUBETAINT_REFERENCE=1: plugin by plugin). A plugin
        whose scores are out of range is named as plugin by plugin names it: the first, in
        order."""
        per_plugin: dict[str, IntArray] = {}
        weights: list[int] = []
        skip = state.skip_score
        for pl, weight, batch, extensions in self._scorers:
            if pl.name in skip:
                continue
            assert batch is not None  # (self._batch_scorers)
            raw: IntArray = batch.score_batch(state, pi, cache, slots)
            per_plugin[pl.name] = (
                extensions.normalize_score(state, pi, raw) if extensions is not None else raw
            )
            weights.append(weight)
        if not per_plugin:
            return per_plugin, np.zeros(len(slots), np.int64)
        every = np.stack(list(per_plugin.values()))
        if _min(every, axis=None) < 0 or _max(every, axis=None) > MAX_NODE_SCORE:
            for name, scores in per_plugin.items():
                if _min(scores) < 0 or _max(scores) > MAX_NODE_SCORE:
                    raise _invalid_score(name, scores)
        total: IntArray = np.array(weights, np.int64) @ every
        return per_plugin, total


def _invalid_score(plugin: str, scores: IntArray) -> ValueError:
    return ValueError(
        f"plugin {plugin!r} returns an invalid score {int(scores.max())}, "
        f"it should in the range of [0, {MAX_NODE_SCORE}] after normalizing"
    )


def default_normalize_score(max_priority: int, reverse: bool, scores: IntArray) -> IntArray:
    """helper.DefaultNormalizeScore with Go integer division."""
    max_count = int(_max(scores)) if len(scores) else 0
    if max_count <= 0:
        if reverse:
            return np.full(len(scores), max_priority, np.int64)
        return scores
    out: IntArray = (scores * max_priority) // max_count
    if reverse:
        out = max_priority - out
    return out
