"""InterPodAffinity's PreScore, Score and NormalizeScore: the incoming pod's preferred affinity
and anti-affinity terms, and existing pods' terms matching it, weighted (existing pods' required
affinity by hardPodAffinityWeight) per topology value (mirrors
pkg/scheduler/framework/plugins/interpodaffinity/scoring.go: preScoreState, PreScore,
processExistingPod, Score, NormalizeScore).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubetaint.scheduler.affinity_terms import (
    AffinityTerm,
    PodAffinityInfo,
    TermError,
    pod_affinity_info,
    raw_pod_affinity,
)
from kubetaint.scheduler.cache import Cache, IntArray
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins.inter_pod_affinity.common import (
    SKIP,
    AffinityPlugin,
    add_sums,
    count_at,
    lookup,
    pod_labels,
    term_counter,
)
from kubetaint.scheduler.pod_index import Holder, pod_index
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import MAX_NODE_SCORE, SUCCESS, Code, Status

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"


class Scoring:
    """PreScore, Score (one node and every node at once) and NormalizeScore of the plugin (mixed
    into InterPodAffinity)."""

    __slots__ = ()

    def pre_score(self: AffinityPlugin, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        if raw_pod_affinity(pi.pod) is None and (
            self.ignore_preferred_terms_of_existing_pods
            or not pod_index(self.listers().cache).scoring_groups()
        ):
            return SKIP  # no preferred term of its own, no existing pod with terms that score
        try:
            info = pod_affinity_info(pi.pod, pi.facts.pod_affinity_sig)
        except TermError as exc:
            return Status(Code.Error, f"failed to parse pod: {exc}")
        preferred = tuple((w, self.merge_namespaces(t)) for w, t in info.preferred_affinity)
        preferred_anti = tuple((w, self.merge_namespaces(t)) for w, t in info.preferred_anti_affinity)
        has_constraints = bool(preferred or preferred_anti)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.Skip)
        handle = self.listers()
        index = pod_index(handle.cache)
        scores: dict[str, IntArray] = {}
        matched = False

        def add(term: AffinityTerm, weight: int, holder: Holder) -> None:
            nonlocal matched
            sums = index.sums(holder, term.topology_key)
            if not sums.any():  # (no matching pod on a node with the key)
                return
            matched = True
            add_sums(scores, term.topology_key, sums * weight)

        for weight, t in preferred:
            add(t, weight, term_counter(index, t))
        for weight, t in preferred_anti:
            add(t, -weight, term_counter(index, t))
        ns_labels = handle.namespace_labels(pi.namespace)
        labels = pod_labels(pi.pod)
        for group in index.scoring_groups():  # (the groups with only required anti-affinity add nothing)
            existing: PodAffinityInfo = group.info
            if self.hard_pod_affinity_weight > 0:
                for t in existing.required_affinity:
                    if t.matches(pi.namespace, labels, ns_labels):
                        add(t, self.hard_pod_affinity_weight, group)
            for weight, t in existing.preferred_affinity:
                if t.matches(pi.namespace, labels, ns_labels):
                    add(t, weight, group)
            for weight, t in existing.preferred_anti_affinity:
                if t.matches(pi.namespace, labels, ns_labels):
                    add(t, -weight, group)
        if not matched:
            return Status(Code.Skip)
        state.data[PRE_SCORE_STATE_KEY] = (index, scores)
        return SUCCESS

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        index, scores = state.data[PRE_SCORE_STATE_KEY]
        total = 0
        for key, values in scores.items():
            total += count_at(scores, key, index.domains(key).id_of(ni.labels))
            del values
        return total

    def score_batch(self, state: CycleState, pi: PodInfo, cache: Cache, slots: IntArray) -> IntArray:
        index, scores = state.data[PRE_SCORE_STATE_KEY]
        total: IntArray = np.zeros(len(slots), np.int64)
        for key, values in scores.items():
            ids = index.domains(key).ids[slots]
            total += lookup(values, ids)  # (0 without the key)
        return total

    def normalize_score(self, state: CycleState, pi: PodInfo, scores: IntArray) -> IntArray:
        _, topology_scores = state.data[PRE_SCORE_STATE_KEY]
        if not topology_scores or not len(scores):
            return scores
        low, high = int(scores.min()), int(scores.max())
        diff = high - low
        if diff <= 0:
            return np.zeros(len(scores), np.int64)
        out: IntArray = (float(MAX_NODE_SCORE) * ((scores - low).astype(np.float64) / float(diff))).astype(
            np.int64
        )
        return out
