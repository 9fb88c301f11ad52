"""PodTopologySpread's PreScore, Score and NormalizeScore: the ScheduleAnyway constraints, the
pod's own or the default ones (mirrors
pkg/scheduler/framework/plugins/podtopologyspread/scoring.go: preScoreState, initPreScoreState,
PreScore, Score, NormalizeScore).

The per-node counts come from `scheduler.pod_index`, summed per topology value with numpy;
`score_batch` scores every node at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from kubetaint.scheduler.affinity_terms import TermError
from kubetaint.scheduler.cache import BoolArray, Cache, IntArray
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.nodes_at import node_slots
from kubetaint.scheduler.plugins.pod_topology_spread.common import (
    LABEL_HOSTNAME,
    SCHEDULE_ANYWAY,
    SKIP,
    Constraint,
    SpreadPlugin,
    counter,
    inclusion,
)
from kubetaint.scheduler.pod_index import PodIndex, pod_index
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import MAX_NODE_SCORE, SUCCESS, Code, Status
from kubetaint.speed.reference import reference_mode

FloatArray = npt.NDArray[np.floating[Any]]
PRE_SCORE_STATE_KEY = "PreScorePodTopologySpread"
#: invalidScore: the score of a node ignored for lacking a topology key
INVALID_SCORE = -1


@dataclass
class PreScoreState:
    """preScoreState: the ignored nodes and the score of every filtered node, worked out once per
    cycle from the counts per topology value (Score reads a slot's)."""

    #: per filtered node (in PreScore's order), whether it is ignored (it lacks a topology key);
    #: None: none is
    ignored: BoolArray | None
    #: per filtered node, in PreScore's order, the sum over the constraints of the matching pods
    #: (on the node for the hostname key, in the node's topology value else) times the
    #: constraint's weight plus maxSkew-1 (nothing for a constraint whose key the node lacks),
    #: rounded; invalidScore for an ignored node
    scores: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: the filtered nodes' slots, in PreScore's order
    filtered: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: the cache's slot count when PreScore ran
    size: int = 0
    #: per slot, the score of a filtered node (0 for a node PreScore was not given), made at the
    #: first Score of other nodes than the filtered ones in their order
    by_slot: IntArray | None = None


class Scoring:
    """PreScore, Score (one node and every node at once) and NormalizeScore of the plugin (mixed
    into PodTopologySpread)."""

    __slots__ = ()

    def pre_score(self: SpreadPlugin, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        """The filtered nodes' scores (upstream's Score reads only those): each constraint's
        term worked out over the filtered nodes' slots alone."""
        cache = self.listers().cache
        if not cache.nodes:
            return Status(Code.Skip)
        try:
            constraints = self.constraints(pi, SCHEDULE_ANYWAY)
        except TermError as exc:
            return Status(Code.Error, f"calculating preScoreState: {exc}")
        if not constraints:
            return SKIP
        index = pod_index(cache)
        size = len(cache.slot_nodes)
        require_all = (
            bool((pi.pod.get("spec") or {}).get("topologySpreadConstraints")) or not self.system_defaulted
        )
        filtered = node_slots(nodes)
        ignored: BoolArray | None = None  # (the system defaults ignore no node)
        candidates, eligible_all = filtered, cache.valid[:size]
        if require_all:  # a node without every topology key is ignored
            all_keys = cache.valid[:size].copy()
            for c in constraints:
                all_keys &= index.domains(c.topology_key).ids[:size] >= 0
            ignored = ~all_keys[filtered]
            candidates = filtered[~ignored]
            eligible_all = eligible_all & all_keys
        included_by = inclusion(pi, cache, constraints, self.enable_cmp)
        if (
            not require_all
            and not included_by
            and not reference_mode()
            and all(index.every_node_has(c.topology_key) for c in constraints)
        ):
            total = _every_node_keyed_total(index, pi, constraints, filtered, size)
        else:
            total = _total(
                index,
                pi,
                constraints,
                filtered,
                candidates=candidates,
                eligible_all=eligible_all,
                included_by=included_by,
                require_all=require_all,
            )
        scores = np.floor(total + 0.5).astype(np.int64)
        if ignored is not None:
            scores[ignored] = INVALID_SCORE
        state.data[PRE_SCORE_STATE_KEY] = PreScoreState(ignored, scores, filtered, size)
        return SUCCESS

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        slots = np.array([ni.slot], np.int64)
        return int(score_batch(state, slots)[0])

    def score_batch(self, state: CycleState, pi: PodInfo, cache: Cache, slots: IntArray) -> IntArray:
        return score_batch(state, slots)

    def normalize_score(self, state: CycleState, pi: PodInfo, scores: IntArray) -> IntArray:
        st: PreScoreState | None = state.data.get(PRE_SCORE_STATE_KEY)
        if st is not None and st.ignored is None and len(scores):
            # no node ignored: every score is valid (none is invalidScore)
            low, high = int(scores.min()), max(0, int(scores.max()))
            if high == 0:
                return np.full(len(scores), MAX_NODE_SCORE, np.int64)
            every: IntArray = (MAX_NODE_SCORE * (high + low - scores) // high).astype(np.int64, copy=False)
            return every
        valid = scores != INVALID_SCORE
        if not valid.any():
            return np.zeros(len(scores), np.int64)
        low = int(scores[valid].min())
        high = max(0, int(scores[valid].max()))
        if high == 0:
            out: IntArray = np.where(valid, MAX_NODE_SCORE, 0).astype(np.int64)
            return out
        normalized = MAX_NODE_SCORE * (high + low - scores) // high
        result: IntArray = np.where(valid, normalized, 0).astype(np.int64)
        return result


def score_batch(state: CycleState, slots: IntArray) -> IntArray:
    """Score of the nodes at `slots` (worked out in PreScore); a node ignored there gets
    invalidScore."""
    st: PreScoreState = state.data[PRE_SCORE_STATE_KEY]
    if slots is st.filtered:  # (the usual: the filtered nodes themselves)
        return st.scores
    if st.by_slot is None:
        st.by_slot = np.zeros(st.size, np.int64)
        st.by_slot[st.filtered] = st.scores
    out: IntArray = st.by_slot[slots]
    return out


def _total(
    index: PodIndex,
    pi: PodInfo,
    constraints: Sequence[Constraint],
    filtered: IntArray,
    *,
    candidates: IntArray,
    eligible_all: BoolArray,
    included_by: dict[tuple[str, str], BoolArray],
    require_all: bool,
) -> FloatArray:
    """Per filtered node, the sum over the constraints of its term (before rounding)."""
    size = len(eligible_all)
    scored = len(candidates)
    total: FloatArray = np.zeros(len(filtered), np.float64)
    for c in constraints:
        matching = counter(index, pi, c)
        d = index.domains(c.topology_key)
        at = d.ids[filtered]  # the filtered nodes' value ids
        skew = float(c.max_skew - 1)
        if c.topology_key == LABEL_HOSTNAME:
            weight = math.log(scored + 2)
            total += np.where(at >= 0, matching.counts[filtered] * weight + skew, 0.0)
            continue
        # a node without the label counts toward the value "" (upstream reads a missing label as
        # ""); the score of a node without it is never read, so unless some node has the value
        # "", what counts toward it is not worked out
        empty = d.value_ids.get("", len(d.values))
        wanted = np.zeros(max(len(d.values), empty + 1), np.bool_)
        candidate_ids = d.ids[candidates]
        wanted[np.where(candidate_ids >= 0, candidate_ids, empty)] = True
        included = included_by.get((c.node_affinity_policy, c.node_taints_policy))
        if included is None and not require_all:
            # every node counts toward its value: the index's per-value sums (the values not
            # wanted are never read)
            sums = index.sums(matching, c.topology_key)
            if empty < len(d.values):
                sums[empty] += int(matching.counts[:size].sum()) - int(sums.sum())
            tp = sums
        else:
            counts, ids = matching.counts[:size], d.ids[:size]
            every = np.where(ids >= 0, ids, empty)
            keep = (
                eligible_all & wanted[every] if included is None else eligible_all & included & wanted[every]
            )
            tp = np.bincount(every[keep], weights=counts[keep], minlength=len(wanted)).astype(np.int64)
        per_value = tp * math.log(int(np.count_nonzero(wanted)) + 2) + skew
        total += np.where(at >= 0, per_value[at] if len(per_value) else 0.0, 0.0)
    return total


def _every_node_keyed_total(
    index: PodIndex, pi: PodInfo, constraints: Sequence[Constraint], filtered: IntArray, size: int
) -> FloatArray:
    """Speeds up PreScore's sums when every node has every topology key, no node is ignored and
    every node counts (the system default constraints, the usual): `_total` without the steps
    for nodes lacking a key (off with KUBETAINT_REFERENCE=1: `_total`).

    The same floating-point operations in the same order as `_total`'s, so the same scores."""
    total: FloatArray | None = None
    scored = len(filtered)
    for c in constraints:
        matching = counter(index, pi, c)
        skew = float(c.max_skew - 1)
        if c.topology_key == LABEL_HOSTNAME:
            term: FloatArray = matching.counts[filtered] * math.log(scored + 2) + skew
        else:
            d = index.domains(c.topology_key)
            at = d.ids[filtered]
            empty = d.value_ids.get("", len(d.values))
            wanted = np.zeros(max(len(d.values), empty + 1), np.bool_)
            wanted[at] = True
            sums = index.sums(matching, c.topology_key)
            if empty < len(d.values):
                sums[empty] += int(matching.counts[:size].sum()) - int(sums.sum())
            per_value = sums * math.log(int(np.count_nonzero(wanted)) + 2) + skew
            term = per_value[at]
        total = term if total is None else total + term
    assert total is not None
    return total
