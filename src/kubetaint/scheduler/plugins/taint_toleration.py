"""TaintToleration: Filter on NoSchedule/NoExecute taints, Score by intolerable PreferNoSchedule taints
(mirrors pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go).

Verdicts depend only on (the node's taint set, the pod's tolerations), so they are cached per
(taint-set id, toleration signature): nodes sharing a taint set share one verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from kubetaint.core.matching import (
    PREFER_NO_SCHEDULE,
    do_not_schedule_taints_filter,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
)
from kubetaint.scheduler.cache import BoolArray, Cache, IntArray
from kubetaint.scheduler.events import NODE, UNSCHEDULED_POD, ActionType, ClusterEvent, ClusterEventWithHint
from kubetaint.scheduler.extension_points import (
    CycleState,
    EnqueueExtensions,
    FilterBatch,
    FilterPlugin,
    Plugin,
    PreScorePlugin,
    ScoreBatch,
    ScoreExtensions,
    ScorePlugin,
)
from kubetaint.scheduler.framework import default_normalize_score
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.podinfo import PodInfo, pod_key
from kubetaint.scheduler.status import MAX_NODE_SCORE, SUCCESS, Code, Status
from kubetaint.speed.memo import Memo

ERR_REASON_NOT_MATCH = "node(s) had untolerated taint(s)"


def untolerated_taint(
    taints: list[dict[str, Any]], tolerations: list[dict[str, Any]], enable_cmp: bool
) -> Mapping[str, Any] | None:
    """The first NoSchedule/NoExecute taint no toleration tolerates (an Lt/Gt error counts as untolerated)."""
    taint, _ = find_matching_untolerated_taint(taints, tolerations, do_not_schedule_taints_filter, enable_cmp)
    return taint


def count_intolerable_prefer_no_schedule(
    taints: list[dict[str, Any]], tolerations: list[dict[str, Any]], enable_cmp: bool
) -> int:
    """Score: PreferNoSchedule taints not tolerated by the pod's ""/PreferNoSchedule tolerations."""
    prefer = [t for t in tolerations if not t.get("effect") or t.get("effect") == PREFER_NO_SCHEDULE]
    count = 0
    for taint in taints:
        if taint.get("effect") != PREFER_NO_SCHEDULE:
            continue
        if not tolerations_tolerate_taint(prefer, taint, enable_cmp)[0]:
            count += 1
    return count


class TaintToleration(
    Plugin,
    EnqueueExtensions,
    FilterPlugin,
    FilterBatch,
    PreScorePlugin,
    ScorePlugin,
    ScoreBatch,
    ScoreExtensions,
):
    name = names.TAINT_TOLERATION

    def __init__(self, enable_comparison_operators: bool = False) -> None:
        self.enable_cmp = enable_comparison_operators
        self._filter_cache: Memo[tuple[Any, ...], BoolArray] = Memo(
            "scheduler.taint_toleration.taint_set_verdicts", 4096
        )
        #: one node's verdict by (toleration signature, the node's taint key)
        self._node_verdicts: Memo[tuple[Any, Any], bool] = Memo(
            "scheduler.taint_toleration.node_verdicts", 4096
        )
        self._score_cache: Memo[tuple[Any, ...], IntArray] = Memo(
            "scheduler.taint_toleration.taint_set_scores", 4096
        )

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.Add | ActionType.UpdateNodeTaint),
                self._after_node,
                signature=_tolerations_signature,
            ),
            ClusterEventWithHint(
                ClusterEvent(UNSCHEDULED_POD, ActionType.UpdatePodToleration), _after_toleration
            ),
        ]

    def _after_node(self, pi: PodInfo, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
        """isSchedulableAfterNodeChange: the old node (if any) rejected the pod and the new one doesn't."""
        if new is None:
            return False
        if untolerated_taint(
            list((new.get("spec") or {}).get("taints") or ()), pi.tolerations, self.enable_cmp
        ):
            return False
        if old is None:
            return True
        old_taints = list((old.get("spec") or {}).get("taints") or ())
        return untolerated_taint(old_taints, pi.tolerations, self.enable_cmp) is not None

    # ---- filter ------------------------------------------------------------------------------
    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        taints = ni.taints
        if not taints:
            return SUCCESS
        key = (pi.tol_sig, ni.taint_key)
        fits = self._node_verdicts.get(key)
        if fits is None:
            fits = self._node_verdicts.put(
                key, untolerated_taint(taints, pi.tolerations, self.enable_cmp) is None
            )
        return SUCCESS if fits else Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NOT_MATCH)

    def _verdicts(self, pi: PodInfo, cache: Cache) -> BoolArray:
        key = (cache.serial, pi.tol_sig)
        sets = cache.taint_sets
        known = self._filter_cache.get(key)
        if known is None or len(known) < len(sets):
            start = 0 if known is None else len(known)
            new = [untolerated_taint(t, pi.tolerations, self.enable_cmp) is None for t in sets[start:]]
            added = np.array(new, np.bool_)
            known = self._filter_cache.put(key, added if known is None else np.concatenate([known, added]))
        return known

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None:
        if len(cache.taint_sets) == 1 and not cache.taint_sets[0]:
            return None  # no node has any taint
        verdicts = self._verdicts(pi, cache)
        passed: BoolArray = verdicts[cache.taint_set]
        return passed

    # ---- score -------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pi: PodInfo, nodes: object) -> Status:
        return SUCCESS

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        return count_intolerable_prefer_no_schedule(ni.taints, pi.tolerations, self.enable_cmp)

    def score_batch(self, state: CycleState, pi: PodInfo, cache: Cache, slots: IntArray) -> IntArray:
        key = (cache.serial, pi.tol_sig)
        sets = cache.taint_sets
        known = self._score_cache.get(key)
        if known is None or len(known) < len(sets):
            counts = [count_intolerable_prefer_no_schedule(t, pi.tolerations, self.enable_cmp) for t in sets]
            known = self._score_cache.put(key, np.array(counts, np.int64))
        if not known.any():  # no taint set has a PreferNoSchedule taint the pod minds (the usual)
            return np.zeros(len(slots), np.int64)
        raw: IntArray = known[cache.taint_set[slots]]
        return raw

    def normalize_score(self, state: CycleState, pi: PodInfo, scores: IntArray) -> IntArray:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)


def _after_toleration(pi: PodInfo, _old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """isSchedulableAfterPodTolerationChange: only the pending pod's own update counts."""
    return new is not None and pod_key(new) == pi.key


def _tolerations_signature(pi: PodInfo) -> Any:
    """Pods with the same tolerations get the same node-change answer."""
    return pi.tol_sig
