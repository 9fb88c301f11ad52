"""NodeResourcesBalancedAllocation: favour nodes whose cpu and memory usage fractions are close
(mirrors pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.scheduler.cache import Cache, IntArray
from kubetaint.scheduler.extension_points import (
    CycleState,
    Plugin,
    PreScorePlugin,
    ScoreBatch,
    ScorePlugin,
)
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.plugins.resource_allocation import (
    DEFAULT_RESOURCES,
    balanced,
    inputs_from_cache,
    inputs_from_nodes,
    parse_resources,
    pod_request_list,
)
from kubetaint.scheduler.plugins.slot_scores import SlotScores, balanced_one
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import SUCCESS, Code, Status

_PRE_SCORE = "PreScoreNodeResourcesBalancedAllocation"


class NodeResourcesBalancedAllocation(Plugin, PreScorePlugin, ScorePlugin, ScoreBatch):
    name = names.NODE_RESOURCES_BALANCED_ALLOCATION

    def __init__(self, args: Mapping[str, Any] | None = None) -> None:
        self.resources = parse_resources(dict(args or {}), DEFAULT_RESOURCES, balanced=True)
        self._slot_scores = SlotScores(self._batch_scores, balanced_one, self.resources, True)

    def pre_score(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        req = pod_request_list(pi.requests, self.resources)
        if not any(req):
            # Best-effort pods are not balanced (upstream issue 129138): scoring is skipped.
            return Status(Code.Skip)
        state.data[_PRE_SCORE] = req
        return SUCCESS

    def _pod_req(self, state: CycleState, pi: PodInfo) -> list[int]:
        req: list[int] | None = state.data.get(_PRE_SCORE)
        return req if req is not None else pod_request_list(pi.requests, self.resources)

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        alloc, req = inputs_from_nodes([ni], self.resources, self._pod_req(state, pi), True)
        return int(balanced(alloc, req)[0])

    def score_batch(self, state: CycleState, pi: PodInfo, cache: Cache, slots: IntArray) -> IntArray:
        return self._slot_scores.scores(cache, slots, self._pod_req(state, pi))

    def _batch_scores(self, cache: Cache, slots: IntArray, pod_req: list[int]) -> IntArray:
        alloc, req = inputs_from_cache(cache, slots, self.resources, pod_req, True)
        return balanced(alloc, req)
