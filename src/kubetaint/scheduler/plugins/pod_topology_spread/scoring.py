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

import numpy as np

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
from kubetaint.scheduler.pod_index import pod_index
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import MAX_NODE_SCORE, SUCCESS, Code, Status

PRE_SCORE_STATE_KEY = "PreScorePodTopologySpread"
#: invalidScore: the score of a node ignored for lacking a topology key
INVALID_SCORE = -1


@dataclass
class PreScoreState:
    """preScoreState: the ignored nodes and, per ScheduleAnyway constraint, its counts and weight."""

    #: per slot, whether the node is ignored (it lacks a topology key); None: none is
    ignored: BoolArray | None
    #: per constraint: the per-slot value ids of its topology key (-1 without the label), the
    #: matching pods per value id (per slot for the hostname key), whether they are per slot, the
    #: weight and maxSkew - 1
    items: list[tuple[IntArray, IntArray, bool, float, float]] = field(default_factory=list)

    def add(self, c: Constraint, ids: IntArray, counts: IntArray, per_slot: bool, weight: float) -> None:
        self.items.append((ids, counts, per_slot, weight, float(c.max_skew - 1)))


class Scoring:
    """PreScore, Score (one node and every node at once) and NormalizeScore of the plugin (mixed
    into PodTopologySpread)."""

    __slots__ = ()

    def pre_score(self: SpreadPlugin, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
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
        candidates, eligible_all, scored = filtered, cache.valid[:size], len(filtered)
        if require_all:  # a node without every topology key is ignored
            all_keys = cache.valid[:size].copy()
            for c in constraints:
                all_keys &= index.domains(c.topology_key).ids[:size] >= 0
            ignored = np.zeros(size, np.bool_)
            ignored[filtered] = ~all_keys[filtered]
            candidates = filtered[~ignored[filtered]]
            eligible_all = eligible_all & all_keys
            scored = len(candidates)
        included_by = inclusion(pi, cache, constraints, self.enable_cmp)
        st = PreScoreState(ignored)
        for c in constraints:
            matching = counter(index, pi, c)
            counts = matching.counts[:size]
            d = index.domains(c.topology_key)
            if c.topology_key == LABEL_HOSTNAME:
                st.add(c, d.ids[:size], counts, True, math.log(scored + 2))
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
                    sums[empty] += int(counts.sum()) - int(sums.sum())
                tp = sums
            else:
                ids = np.where(d.ids[:size] >= 0, d.ids[:size], empty)
                keep = (
                    eligible_all & wanted[ids] if included is None else eligible_all & included & wanted[ids]
                )
                tp = np.bincount(ids[keep], weights=counts[keep], minlength=len(wanted)).astype(np.int64)
            st.add(c, d.ids[:size], tp, False, math.log(int(np.count_nonzero(wanted)) + 2))
        state.data[PRE_SCORE_STATE_KEY] = st
        return SUCCESS

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        slots = np.array([ni.slot], np.int64)
        return int(score_batch(state, slots)[0])

    def score_batch(self, state: CycleState, pi: PodInfo, cache: Cache, slots: IntArray) -> IntArray:
        return score_batch(state, slots)

    def normalize_score(self, state: CycleState, pi: PodInfo, scores: IntArray) -> IntArray:
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
    """Score of the nodes at `slots`: per constraint, its matching pods (on the node for the
    hostname key, in the node's topology value else) times its weight plus maxSkew-1; a node
    ignored in PreScore gets invalidScore."""
    st: PreScoreState = state.data[PRE_SCORE_STATE_KEY]
    score = np.zeros(len(slots), np.float64)
    for ids, counts, per_slot, weight, skew in st.items:
        at = ids[slots]
        # (a node without the label reads some count: its term is left out)
        cnt = counts[slots] if per_slot else counts[at] if len(counts) else np.zeros(len(slots), np.int64)
        score += np.where(at >= 0, cnt * weight + skew, 0.0)
    out: IntArray = np.floor(score + 0.5).astype(np.int64)
    if st.ignored is not None:
        out[st.ignored[slots]] = INVALID_SCORE
    return out
