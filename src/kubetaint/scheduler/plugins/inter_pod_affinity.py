"""InterPodAffinity: required pod affinity and anti-affinity, existing pods' required
anti-affinity (Filter), preferred terms both ways and existing pods' required affinity weighted
by hardPodAffinityWeight (Score) (mirrors pkg/scheduler/framework/plugins/interpodaffinity:
plugin.go, filtering.go, scoring.go).

Upstream's PreFilter sums, per topology pair, the existing pods matching the incoming pod's
terms and the existing pods whose anti-affinity terms match it; here the per-node part of those
sums comes from `scheduler.pod_index` (kept up to date from the cache's change log) and a cycle
sums it per topology value with numpy. A pod without required terms, that no existing pod's
anti-affinity term matches, is skipped (upstream's Skip), so its filter verdicts stay spec-only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubetaint.scheduler.affinity_terms import (
    AffinityTerm,
    PodAffinityInfo,
    TermError,
    pod_affinity_info,
    pod_affinity_info_or_none,
    raw_pod_affinity,
)
from kubetaint.scheduler.cache import BoolArray, Cache, IntArray
from kubetaint.scheduler.events import ASSIGNED_POD, NODE, ActionType, ClusterEvent, ClusterEventWithHint
from kubetaint.scheduler.extension_points import (
    CycleState,
    EnqueueExtensions,
    FilterBatch,
    FilterPlugin,
    Handle,
    Plugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreBatch,
    ScoreExtensions,
    ScorePlugin,
    UsesHandle,
)
from kubetaint.scheduler.listers import ClusterListers
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.pod_index import Counter, Holder, PodIndex, pod_index, required_pair
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import MAX_NODE_SCORE, SUCCESS, Code, Status

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
SKIP = Status(Code.Skip)
_PRE_FILTER = "PreFilterInterPodAffinity"
_PRE_SCORE = "PreScoreInterPodAffinity"


def _labels(pod: Mapping[str, Any]) -> Mapping[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


def matches_all(terms: Sequence[AffinityTerm], pi: PodInfo) -> bool:
    """podMatchesAllAffinityTerms (the incoming pod's namespaceSelector is merged: no labels)."""
    if not terms:
        return False
    labels = _labels(pi.pod)
    return all(t.matches(pi.namespace, labels, None) for t in terms)


def _pod_matches_all(terms: Sequence[AffinityTerm], pod: Mapping[str, Any]) -> bool:
    """podMatchesAllAffinityTerms of a pod object (no namespace labels)."""
    if not terms:
        return False
    namespace = (pod.get("metadata") or {}).get("namespace") or "default"
    labels = _labels(pod)
    return all(t.matches(namespace, labels, None) for t in terms)


def _bound(pod: Mapping[str, Any] | None) -> bool:
    return pod is None or bool((pod.get("spec") or {}).get("nodeName"))


def is_schedulable_after_pod_change(
    pi: PodInfo, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
) -> bool:
    """isSchedulableAfterPodChange: an unscheduled pod's change helps nothing; an updated pod that
    now matches all the pending pod's affinity terms, or no longer matches all its anti-affinity
    terms, may help; an added pod matching all its affinity terms, a deleted pod matching all its
    anti-affinity terms. (A pending pod whose terms do not parse is requeued.)"""
    if not _bound(new) or not _bound(old):
        return False
    try:
        info = pod_affinity_info(pi.pod, pi.facts.pod_affinity_sig)
    except TermError:
        return True
    terms, anti = info.required_affinity, info.required_anti_affinity
    if old is not None and new is not None:
        if not _pod_matches_all(terms, old) and _pod_matches_all(terms, new):
            return True
        return _pod_matches_all(anti, old) and not _pod_matches_all(anti, new)
    if new is not None:
        return _pod_matches_all(terms, new)
    return old is not None and _pod_matches_all(anti, old)


def is_schedulable_after_node_change(
    pi: PodInfo, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
) -> bool:
    """isSchedulableAfterNodeChange: for a required affinity term, a node that now has its
    topology key with a value it did not have (added, given the key, or its value changed); for a
    required anti-affinity term, any added node, or an updated node that had the key and lost it
    or changed its value."""
    if new is None:
        return False
    try:
        info = pod_affinity_info(pi.pod, pi.facts.pod_affinity_sig)
    except TermError:
        return True
    new_labels = (new.get("metadata") or {}).get("labels") or {}
    old_labels = None if old is None else (old.get("metadata") or {}).get("labels") or {}
    for t in info.required_affinity:
        key = t.topology_key
        if key in new_labels and (old_labels is None or old_labels.get(key) != new_labels[key]):
            return True
    for t in info.required_anti_affinity:
        key = t.topology_key
        if old_labels is None:
            return True
        if key in old_labels and old_labels[key] != new_labels.get(key):
            return True
    return False


def term_counter(index: PodIndex, term: AffinityTerm) -> Counter:
    """The index's counter of the pods the incoming pod's term matches (its namespaceSelector
    merged), per slot."""

    def match(p: PodInfo) -> bool:
        return term.matches(p.namespace, _labels(p.pod), None)

    return index.counter(("one", term), match, required_pair(term.selector))


@dataclass
class _FilterState:
    index: PodIndex
    affinity: tuple[AffinityTerm, ...]
    anti_affinity: tuple[AffinityTerm, ...]
    #: topology key -> per value id: existing pods matching all affinity terms
    affinity_counts: dict[str, IntArray] = field(default_factory=dict)
    #: topology key -> per value id: existing pods matching an anti-affinity term (each term)
    anti_counts: dict[str, IntArray] = field(default_factory=dict)
    #: topology key -> per value id: existing pods whose anti-affinity terms match the pod
    existing_anti: dict[str, IntArray] = field(default_factory=dict)
    self_match: bool = False
    #: the incoming pod's namespace, labels and namespace labels (existing terms match against them)
    namespace: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    ns_labels: Mapping[str, str] | None = None


def _add(counts: dict[str, IntArray], key: str, sums: IntArray) -> None:
    known = counts.get(key)
    if known is None:
        counts[key] = sums
    else:
        if len(known) < len(sums):
            known = np.concatenate([known, np.zeros(len(sums) - len(known), np.int64)])
        known[: len(sums)] += sums
        counts[key] = known


def _nonzero(counts: dict[str, IntArray]) -> dict[str, IntArray]:
    return {k: v for k, v in counts.items() if v.any()}


def _at(counts: dict[str, IntArray], key: str, vid: int) -> int:
    arr = counts.get(key)
    if arr is None or vid < 0 or vid >= len(arr):
        return 0
    return int(arr[vid])


class InterPodAffinity(
    Plugin,
    EnqueueExtensions,
    PreFilterPlugin,
    FilterPlugin,
    FilterBatch,
    PreScorePlugin,
    ScorePlugin,
    ScoreBatch,
    ScoreExtensions,
    UsesHandle,
):
    name = names.INTER_POD_AFFINITY

    def __init__(self, args: Mapping[str, Any] | None = None) -> None:
        args = args or {}
        weight = args.get("hardPodAffinityWeight", DEFAULT_HARD_POD_AFFINITY_WEIGHT)
        if not isinstance(weight, int) or isinstance(weight, bool) or not 0 <= weight <= 100:
            raise ValueError(f"hardPodAffinityWeight: Invalid value: {weight!r}: not in valid range [0-100]")
        ignore = args.get("ignorePreferredTermsOfExistingPods", False)
        if not isinstance(ignore, bool):
            raise ValueError(
                f"ignorePreferredTermsOfExistingPods: Invalid value: {ignore!r}: must be a boolean"
            )
        self.hard_pod_affinity_weight = weight
        self.ignore_preferred_terms_of_existing_pods = ignore
        self.handle: ClusterListers | None = None

    def use_handle(self, handle: Handle) -> None:
        self.handle = handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister: assigned pods added, relabelled or deleted, and nodes added, relabelled
        or retainted (UpdateNodeTaint: a node added while not ready arrives as one), each with
        its hint."""
        return [
            ClusterEventWithHint(
                ClusterEvent(ASSIGNED_POD, ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete),
                is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.Add | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint),
                is_schedulable_after_node_change,
            ),
        ]

    # ---- helpers -------------------------------------------------------------------------------
    def _handle(self) -> ClusterListers:
        assert self.handle is not None, "InterPodAffinity needs a handle"
        return self.handle

    def _merge_namespaces(self, term: AffinityTerm) -> AffinityTerm:
        """mergeAffinityTermNamespacesIfNotEmpty: a namespaceSelector with requirements becomes
        the namespaces it selects now (an empty one keeps selecting every namespace)."""
        selector = term.namespace_selector
        if selector is None or selector.empty:
            return term
        return term.with_namespaces(self._handle().namespaces_selected(selector))

    # ---- filter --------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        handle = self._handle()
        index = pod_index(handle.cache)
        if not index.required_anti_pods and raw_pod_affinity(pi.pod) is None:
            return SKIP  # no term of its own, no existing pod's anti-affinity to match
        try:
            info = pod_affinity_info(pi.pod, pi.facts.pod_affinity_sig)
        except TermError as exc:
            return Status(Code.UnschedulableAndUnresolvable, f"parsing pod: {exc}")
        affinity = tuple(self._merge_namespaces(t) for t in info.required_affinity)
        anti = tuple(self._merge_namespaces(t) for t in info.required_anti_affinity)
        existing = self._existing_anti_affinity_counts(index, pi, handle.namespace_labels(pi.namespace))
        if not existing and not affinity and not anti:
            return Status(Code.Skip)
        st = _FilterState(index, affinity, anti, existing_anti=existing)
        st.namespace, st.labels = pi.namespace, _labels(pi.pod)
        st.ns_labels = handle.namespace_labels(pi.namespace)
        if affinity:
            counter = index.counter(
                ("all", affinity), lambda p: matches_all(affinity, p), required_pair(affinity[0].selector)
            )
            for t in affinity:
                _add(st.affinity_counts, t.topology_key, index.sums(counter, t.topology_key))
            st.affinity_counts = _nonzero(st.affinity_counts)
            st.self_match = matches_all(affinity, pi)
        for t in anti:
            _add(st.anti_counts, t.topology_key, index.sums(term_counter(index, t), t.topology_key))
        st.anti_counts = _nonzero(st.anti_counts)
        state.data[_PRE_FILTER] = st
        return SUCCESS

    @staticmethod
    def _existing_anti_affinity_counts(
        index: PodIndex, pi: PodInfo, ns_labels: Mapping[str, str] | None
    ) -> dict[str, IntArray]:
        """getExistingAntiAffinityCounts: per topology pair, the existing pods whose required
        anti-affinity terms match the incoming pod (one count per matching term)."""
        counts: dict[str, IntArray] = {}
        if not index.required_anti_pods:
            return counts
        labels = _labels(pi.pod)
        for group in index.anti_affinity_groups(labels):
            for t in group.info.required_anti_affinity:
                if t.matches(pi.namespace, labels, ns_labels):
                    _add(counts, t.topology_key, index.sums(group, t.topology_key))
        return _nonzero(counts)

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        st: _FilterState | None = state.data.get(_PRE_FILTER)
        if st is None:
            return SUCCESS
        index = st.index
        copy = index.node_at(ni.slot) is not ni if ni.slot >= 0 else True
        labels = ni.labels
        # satisfyPodAffinity
        pods_exist = True
        own = _own_counts(ni, st) if copy else None
        for t in st.affinity:
            value = labels.get(t.topology_key)
            if value is None:
                return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
            count = _at(st.affinity_counts, t.topology_key, index.domains(t.topology_key).id_of(labels))
            if own is not None:
                count += own.affinity_delta
            if count <= 0:
                pods_exist = False
        if not pods_exist:
            total = sum(int(v.sum()) for v in st.affinity_counts.values())
            if own is not None:
                total += own.affinity_delta * len(st.affinity)
            if not (total == 0 and st.self_match):
                return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        # satisfyPodAntiAffinity
        for t in st.anti_affinity:
            value = labels.get(t.topology_key)
            if value is None:
                continue
            count = _at(st.anti_counts, t.topology_key, index.domains(t.topology_key).id_of(labels))
            if own is not None:
                count += own.anti_deltas_by_key.get(t.topology_key, 0)
            if count > 0:
                return Status(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        # satisfyExistingPodsAntiAffinity
        keys = set(st.existing_anti) | (set(own.existing_deltas) if own is not None else set())
        for key in keys:
            if key not in labels:
                continue
            count = _at(st.existing_anti, key, index.domains(key).id_of(labels))
            if own is not None:
                count += own.existing_deltas.get(key, 0)
            if count > 0:
                return Status(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return SUCCESS

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None:
        st: _FilterState | None = state.data.get(_PRE_FILTER)
        if st is None:
            return None
        index = st.index
        size = len(cache.slot_nodes)
        passed: BoolArray = np.ones(size, np.bool_)
        if st.affinity:
            has_all = np.ones(size, np.bool_)
            pods_exist = np.ones(size, np.bool_)
            for t in st.affinity:
                ids = index.domains(t.topology_key).ids[:size]
                present = ids >= 0
                has_all &= present
                pods_exist &= present & (_lookup(st.affinity_counts.get(t.topology_key), ids) > 0)
            if not st.affinity_counts and st.self_match:
                passed &= has_all
            else:
                passed &= has_all & pods_exist
        for t in st.anti_affinity:
            counts = st.anti_counts.get(t.topology_key)
            if counts is None:
                continue
            ids = index.domains(t.topology_key).ids[:size]
            passed &= _lookup(counts, ids) == 0  # (0 without the key)
        for key, counts in st.existing_anti.items():
            ids = index.domains(key).ids[:size]
            passed &= _lookup(counts, ids) == 0  # (0 without the key)
        return passed

    # ---- score ---------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        if raw_pod_affinity(pi.pod) is None and (
            self.ignore_preferred_terms_of_existing_pods
            or not pod_index(self._handle().cache).scoring_groups()
        ):
            return SKIP  # no preferred term of its own, no existing pod with terms that score
        try:
            info = pod_affinity_info(pi.pod, pi.facts.pod_affinity_sig)
        except TermError as exc:
            return Status(Code.Error, f"failed to parse pod: {exc}")
        preferred = tuple((w, self._merge_namespaces(t)) for w, t in info.preferred_affinity)
        preferred_anti = tuple((w, self._merge_namespaces(t)) for w, t in info.preferred_anti_affinity)
        has_constraints = bool(preferred or preferred_anti)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.Skip)
        handle = self._handle()
        index = pod_index(handle.cache)
        scores: dict[str, IntArray] = {}
        matched = False

        def add(term: AffinityTerm, weight: int, holder: Holder) -> None:
            nonlocal matched
            sums = index.sums(holder, term.topology_key)
            if not sums.any():  # (no matching pod on a node with the key)
                return
            matched = True
            _add(scores, term.topology_key, sums * weight)

        for weight, t in preferred:
            add(t, weight, term_counter(index, t))
        for weight, t in preferred_anti:
            add(t, -weight, term_counter(index, t))
        ns_labels = handle.namespace_labels(pi.namespace)
        labels = _labels(pi.pod)
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
        state.data[_PRE_SCORE] = (index, scores)
        return SUCCESS

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        index, scores = state.data[_PRE_SCORE]
        total = 0
        for key, values in scores.items():
            total += _at(scores, key, index.domains(key).id_of(ni.labels))
            del values
        return total

    def score_batch(self, state: CycleState, pi: PodInfo, cache: Cache, slots: IntArray) -> IntArray:
        index, scores = state.data[_PRE_SCORE]
        total: IntArray = np.zeros(len(slots), np.int64)
        for key, values in scores.items():
            ids = index.domains(key).ids[slots]
            total += _lookup(values, ids)  # (0 without the key)
        return total

    def normalize_score(self, state: CycleState, pi: PodInfo, scores: IntArray) -> IntArray:
        _, topology_scores = state.data[_PRE_SCORE]
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


def _lookup(counts: IntArray | None, ids: IntArray) -> IntArray:
    """counts[ids] with 0 for ids -1 or beyond the counts (values first seen after they were summed)."""
    if counts is None:
        return np.zeros(len(ids), np.int64)
    n = len(counts)
    extended: IntArray = np.zeros(n + 1, np.int64)  # (id -1 and ids clipped to n read the 0 at n)
    extended[:n] = counts
    out: IntArray = extended[np.minimum(ids, n)]
    return out


@dataclass
class _OwnCounts:
    """How a node's copy (preemption's dry run without some pods) differs from the cached node,
    per quantity the filter reads."""

    affinity_delta: int = 0
    anti_deltas_by_key: dict[str, int] = field(default_factory=dict)
    existing_deltas: dict[str, int] = field(default_factory=dict)


def _own_counts(ni: NodeInfo, st: _FilterState) -> _OwnCounts:
    """PreFilterExtensions AddPod/RemovePod for one node: the copy's pods against the cached ones."""
    own = _OwnCounts()
    cached = st.index.node_at(ni.slot) if ni.slot >= 0 else None
    cached_pods = list(cached.pods.values()) if cached is not None else []
    pods = list(ni.pods.values())
    if st.affinity:
        now = sum(1 for p in pods if matches_all(st.affinity, p))
        before = sum(1 for p in cached_pods if matches_all(st.affinity, p))
        own.affinity_delta = now - before
    for t in st.anti_affinity:
        now = sum(1 for p in pods if t.matches(p.namespace, _labels(p.pod), None))
        before = sum(1 for p in cached_pods if t.matches(p.namespace, _labels(p.pod), None))
        own.anti_deltas_by_key[t.topology_key] = own.anti_deltas_by_key.get(t.topology_key, 0) + now - before
    for sign, group in ((1, pods), (-1, cached_pods)):
        for p in group:
            for t in pod_affinity_info_or_none(p.pod, p.facts.pod_affinity_sig).required_anti_affinity:
                if t.matches(st.namespace, st.labels, st.ns_labels):
                    key = t.topology_key
                    own.existing_deltas[key] = own.existing_deltas.get(key, 0) + sign
    return own
