"""NodeResourcesFit: requests must fit allocatable minus requested; scored by a strategy
(mirrors pkg/scheduler/framework/plugins/noderesources/fit.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubetaint.scheduler.cache import BoolArray, Cache, IntArray
from kubetaint.scheduler.events import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint
from kubetaint.scheduler.extension_points import (
    CycleState,
    EnqueueExtensions,
    FilterBatch,
    FilterPlugin,
    Plugin,
    PreScorePlugin,
    ScoreBatch,
    ScorePlugin,
)
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.plugins.fit_masks import FitMasks
from kubetaint.scheduler.plugins.resource_allocation import (
    DEFAULT_RESOURCES,
    inputs_from_cache,
    inputs_from_nodes,
    least_allocated,
    most_allocated,
    pod_request_list,
    requested_to_capacity_ratio,
    resource_specs,
    shape_errors,
)
from kubetaint.scheduler.plugins.slot_scores import (
    OneScorer,
    SlotScores,
    least_allocated_one,
    most_allocated_one,
)
from kubetaint.scheduler.podinfo import PodInfo, pod_key
from kubetaint.scheduler.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, node_allocatable, pod_requests
from kubetaint.scheduler.status import SUCCESS, Code, Status

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
_ORDER = (CPU, MEMORY, EPHEMERAL_STORAGE)
_PRE_SCORE = "PreScoreNodeResourcesFit"


def _ordered(requests: Mapping[str, int]) -> list[tuple[str, int]]:
    basic = [(n, requests.get(n, 0)) for n in _ORDER]
    return basic + sorted((n, v) for n, v in requests.items() if n not in _ORDER and n != PODS)


class NodeResourcesFit(
    Plugin, EnqueueExtensions, FilterPlugin, FilterBatch, PreScorePlugin, ScorePlugin, ScoreBatch
):
    name = names.NODE_RESOURCES_FIT

    def __init__(self, args: Mapping[str, Any] | None = None) -> None:
        args = dict(args or {})
        strategy = dict(args.get("scoringStrategy") or {})
        self.strategy = strategy.get("type", LEAST_ALLOCATED)
        errs: list[str] = []
        if self.strategy not in (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO):
            errs.append(
                f'scoringStrategy.type: Unsupported value: "{self.strategy}": supported values: '
                f'"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
            )
        self.resources, resource_errs = resource_specs(
            strategy, DEFAULT_RESOURCES, "scoringStrategy.resources"
        )
        errs += resource_errs
        ratio = strategy.get("requestedToCapacityRatio")
        if isinstance(ratio, Mapping):
            errs += shape_errors(ratio.get("shape"), "scoringStrategy.shape")
        if errs:  # ValidateNodeResourcesFitArgs' aggregate
            raise ValueError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
        self.weights: IntArray = np.array([w for _, w in self.resources], np.int64)
        shape = ((ratio or {}).get("shape")) or [
            {"utilization": 0, "score": 10},
            {"utilization": 100, "score": 0},
        ]
        self.shape = [(int(p.get("utilization", 0)), int(p.get("score", 0))) for p in shape]
        self.ignored = frozenset(args.get("ignoredResources") or ())
        self.ignored_groups = frozenset(args.get("ignoredResourceGroups") or ())
        weights = [w for _, w in self.resources]
        one: OneScorer | None = None
        if self.strategy == LEAST_ALLOCATED:
            one = lambda alloc, req: least_allocated_one(alloc, req, weights)  # noqa: E731
        elif self.strategy == MOST_ALLOCATED:
            one = lambda alloc, req: most_allocated_one(alloc, req, weights)  # noqa: E731
        self._slot_scores = SlotScores(self._batch_scores, one, self.resources, False)
        self._fit_masks = FitMasks()

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Pod deletes and scale-downs (InPlacePodVerticalScaling is on by default) and node adds and
        allocatable changes, each with its hint (the SchedulerQueueingHints registration)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.Delete | ActionType.UpdatePodScaleDown), self._after_pod_event
            ),
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.Add | ActionType.UpdateNodeAllocatable),
                self._after_node,
                signature=_request_signature,
            ),
        ]

    def _after_pod_event(
        self, pi: PodInfo, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
    ) -> bool:
        """isSchedulableAfterPodEvent: a deleted pod that was bound or nominated, the pending pod's own
        update, or a bound pod's scale-down of a resource the pending pod requests."""
        if old is None:
            return True
        if new is None:
            spec, status = old.get("spec") or {}, old.get("status") or {}
            return bool(spec.get("nodeName") or status.get("nominatedNodeName"))
        if pod_key(new) == pi.key:
            return True
        if not (new.get("spec") or {}).get("nodeName"):
            return False  # an unscheduled pod's scale-down frees nothing
        try:
            before, after = pod_requests(old), pod_requests(new)
        except ValueError:
            return True
        for name, amount in pi.requests.items():
            if amount and name in before and before[name] > after.get(name, 0):
                return True
        return False

    def _after_node(self, pi: PodInfo, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
        """isSchedulableAfterNodeChange: the pod fits the new node's allocatable at all, and the node is
        new or one of the pod's requested resources (or its pod count) grew."""
        if new is None:
            return False
        try:
            alloc = node_allocatable(new)
            before = node_allocatable(old) if old is not None else None
        except ValueError:
            return True
        wanted = [(n, v) for n, v in _ordered(pi.requests) if v]  # (isFit ignores no resource)
        if alloc.get(PODS, 0) < 1 or any(alloc.get(n, 0) < v for n, v in wanted):
            return False
        if before is None:
            return True
        if alloc.get(PODS, 0) > before.get(PODS, 0):
            return True
        return any(alloc.get(n, 0) > before.get(n, 0) for n, _ in wanted)

    def _is_ignored(self, name: str) -> bool:
        if name in _ORDER:
            return False
        return name in self.ignored or ("/" in name and name.split("/", 1)[0] in self.ignored_groups)

    # ---- filter ------------------------------------------------------------------------------
    def _fits_request(self, pi: PodInfo, ni: NodeInfo) -> tuple[list[str], bool]:
        """fitsRequest: the reasons, and whether some resource is Unresolvable (the pod requests more
        than the node's whole allocatable: evicting pods cannot help)."""
        reasons: list[str] = []
        unresolvable = False
        if len(ni.pods) + 1 > ni.allowed_pods:
            reasons.append("Too many pods")
        for name, amount in _ordered(pi.requests):
            if amount <= 0 or self._is_ignored(name):
                continue
            allocatable = ni.allocatable.get(name, 0)
            if amount > allocatable - ni.requested.get(name, 0):
                reasons.append(f"Insufficient {name}")
                unresolvable = unresolvable or amount > allocatable
        return reasons, unresolvable

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        """Unschedulable with the reasons, or UnschedulableAndUnresolvable when some resource's
        request exceeds the node's allocatable (preemption then skips the node)."""
        reasons, unresolvable = self._fits_request(pi, ni)
        if not reasons:
            return SUCCESS
        return Status(Code.UnschedulableAndUnresolvable if unresolvable else Code.Unschedulable, *reasons)

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None:
        """The pass mask over cache slots (read-only: shared with the next pods requesting the
        same amounts)."""
        wanted: list[tuple[str, int]] = []
        for name, amount in _ordered(pi.requests):
            if amount <= 0 or self._is_ignored(name):
                continue
            col = cache.columns.get(name)
            if col is None:
                return cache.valid & False
            wanted.append((name, amount))
        return self._fit_masks.mask(cache, tuple(wanted))

    # ---- score -------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        state.data[_PRE_SCORE] = pod_request_list(pi.nonzero, self.resources)
        return SUCCESS

    def _pod_req(self, state: CycleState, pi: PodInfo) -> list[int]:
        req: list[int] | None = state.data.get(_PRE_SCORE)
        return req if req is not None else pod_request_list(pi.nonzero, self.resources)

    def _strategy(self, alloc: np.ndarray[Any, Any], req: np.ndarray[Any, Any]) -> IntArray:
        if self.strategy == MOST_ALLOCATED:
            return most_allocated(alloc, req, self.weights)
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            return requested_to_capacity_ratio(alloc, req, self.weights, self.shape)
        return least_allocated(alloc, req, self.weights)

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        alloc, req = inputs_from_nodes([ni], self.resources, self._pod_req(state, pi), False)
        return int(self._strategy(alloc, req)[0])

    def score_batch(self, state: CycleState, pi: PodInfo, cache: Cache, slots: IntArray) -> IntArray:
        return self._slot_scores.scores(cache, slots, self._pod_req(state, pi))

    def _batch_scores(self, cache: Cache, slots: IntArray, pod_req: list[int]) -> IntArray:
        alloc, req = inputs_from_cache(cache, slots, self.resources, pod_req, False)
        return self._strategy(alloc, req)


def _request_signature(pi: PodInfo) -> Any:
    """Pods requesting the same amounts get the same node-change answer."""
    return tuple(sorted(pi.requests.items()))
