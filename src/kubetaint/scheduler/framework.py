"""The scheduling framework: plugins per extension point and the Run* helpers
(mirrors pkg/scheduler/framework/runtime/framework.go and k8s.io/kube-scheduler/framework interface.go).

Plugins are plain objects; an extension point is implemented when the plugin has its method
(`pre_filter`, `filter`, `post_filter`, `pre_score`, `score`, `normalize_score`, `bind`, `pre_enqueue`,
`sort_key`). Filter and Score plugins may add `filter_batch`/`score_batch`, vectorised over the
cache's node slots; the scheduler uses them when every plugin of the point has one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from kubetaint.scheduler.events import ClusterEventWithHint
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import MAX_NODE_SCORE, SUCCESS, Code, Status

if TYPE_CHECKING:
    from kubetaint.scheduler.cache import BoolArray, Cache, IntArray

_min, _max = np.minimum.reduce, np.maximum.reduce

#: Extension points, in upstream getExtensionPoints order, with the method that implements each.
EXTENSION_POINTS: dict[str, str] = {
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "reserve": "reserve",
    "preScore": "pre_score",
    "score": "score",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
    "permit": "permit",
    "preEnqueue": "pre_enqueue",
    "queueSort": "sort_key",
}
#: Go interface names, for upstream's "<Type> \"name\" does not exist" messages.
INTERFACE_NAMES: dict[str, str] = {
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "reserve": "ReservePlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
    "permit": "PermitPlugin",
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
}


class CycleState:
    """Per-cycle plugin data plus the plugins PreFilter/PreScore asked to skip."""

    __slots__ = ("data", "skip_filter", "skip_score")

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()


class Plugin:
    """Base class: a name and the cluster events that may make rejected pods schedulable."""

    name: ClassVar[str] = ""

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return []


@dataclass
class PostFilterResult:
    nominated_node_name: str = ""
    victims: list[Mapping[str, Any]] = field(default_factory=list)


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


def implements(plugin: object, point: str) -> bool:
    return callable(getattr(plugin, EXTENSION_POINTS[point], None))


@dataclass
class Framework:
    """One profile's plugins per extension point, score weights and percentageOfNodesToScore."""

    profile_name: str
    points: dict[str, list[Any]]
    weights: dict[str, int]
    percentage_of_nodes_to_score: int | None = None
    plugins: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.filter_plugins: list[Any] = self.points.get("filter", [])
        self.score_plugins: list[Any] = self.points.get("score", [])
        self.pre_filter_plugins: list[Any] = self.points.get("preFilter", [])
        self.pre_score_plugins: list[Any] = self.points.get("preScore", [])
        self.post_filter_plugins: list[Any] = self.points.get("postFilter", [])
        self.pre_enqueue_plugins: list[Any] = self.points.get("preEnqueue", [])
        self.bind_plugins: list[Any] = self.points.get("bind", [])
        self.queue_sort: Any = (self.points.get("queueSort") or [None])[0]
        self.batch_filter = all(hasattr(p, "filter_batch") for p in self.filter_plugins)

    # ---- queue -------------------------------------------------------------------------------
    def run_pre_enqueue(self, pi: PodInfo) -> Status:
        for pl in self.pre_enqueue_plugins:
            status: Status = pl.pre_enqueue(pi)
            if not status.is_success():
                return status.with_plugin(pl.name)
        return SUCCESS

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        return {name: pl.events_to_register() for name, pl in self.plugins.items()}

    # ---- filter ------------------------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        """RunPreFilterPlugins' status alone."""
        return self.run_pre_filter_plugins(state, pi, nodes).status

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
            narrowed = getattr(pl, "pre_filter_result", None)
            plugin_names: frozenset[str] | None = narrowed(state, pi) if narrowed is not None else None
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

    def run_filter_all(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> list[Status]:
        """Every filter plugin's verdict on one node (for explanations); skipped plugins omitted."""
        out: list[Status] = []
        for pl in self.filter_plugins:
            if pl.name in state.skip_filter:
                continue
            out.append(pl.filter(state, pi, ni).with_plugin(pl.name))
        return out

    def run_filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray:
        """A pass mask over cache slots: the AND of every filter plugin's vectorised verdict."""
        mask: BoolArray = cache.valid.copy()
        for pl in self.filter_plugins:
            if pl.name in state.skip_filter:
                continue
            passed = pl.filter_batch(state, pi, cache)
            if passed is not None:
                mask &= passed
        return mask

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
        total: IntArray = np.zeros(len(nodes), np.int64)
        per_plugin: dict[str, IntArray] = {}
        for pl in self.score_plugins:
            if pl.name in state.skip_score:
                continue
            if cache is not None and hasattr(pl, "score_batch"):
                if slots is None:
                    slots = np.fromiter((ni.slot for ni in nodes), np.int64, len(nodes))
                raw: IntArray = pl.score_batch(state, pi, cache, slots)
            else:
                raw = np.fromiter((pl.score(state, pi, ni) for ni in nodes), np.int64, len(nodes))
            normalize = getattr(pl, "normalize_score", None)
            scores: IntArray = normalize(state, pi, raw) if normalize is not None else raw
            # (the ufuncs' own reductions: ndarray.min/max add two Python-level calls each)
            if len(scores) and (_min(scores) < 0 or _max(scores) > MAX_NODE_SCORE):
                raise ValueError(
                    f"plugin {pl.name!r} returns an invalid score {int(scores.max())}, "
                    f"it should in the range of [0, {MAX_NODE_SCORE}] after normalizing"
                )
            per_plugin[pl.name] = scores
            total += scores * self.weights.get(pl.name, 1)
        return per_plugin, total


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
