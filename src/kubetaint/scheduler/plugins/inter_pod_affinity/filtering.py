"""InterPodAffinity's PreFilter and Filter: the incoming pod's required affinity and
anti-affinity, and existing pods' required anti-affinity (mirrors
pkg/scheduler/framework/plugins/interpodaffinity/filtering.go: preFilterState,
getExistingAntiAffinityCounts, getIncomingAffinityAntiAffinityCounts, satisfyPodAffinity,
satisfyPodAntiAffinity, satisfyExistingPodsAntiAffinity, AddPod/RemovePod).

Upstream's PreFilter sums, per topology pair, the existing pods matching the incoming pod's
terms and the existing pods whose anti-affinity terms match it; here the per-node part of those
sums comes from `scheduler.pod_index` and a cycle sums it per topology value with numpy. A pod
without required terms, that no existing pod's anti-affinity term matches, is skipped
(upstream's Skip), so its filter verdicts stay spec-only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubetaint.scheduler.affinity_terms import (
    AffinityTerm,
    TermError,
    pod_affinity_info,
    pod_affinity_info_or_none,
    raw_pod_affinity,
)
from kubetaint.scheduler.cache import BoolArray, Cache, IntArray
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins.inter_pod_affinity.common import (
    SKIP,
    AffinityPlugin,
    add_sums,
    count_at,
    lookup,
    matches_all,
    nonzero,
    pod_labels,
    term_counter,
)
from kubetaint.scheduler.pod_index import PodIndex, pod_index, required_pair
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import SUCCESS, Code, Status

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"


@dataclass
class PreFilterState:
    """preFilterState: the incoming pod's merged terms and, per topology key, the counts per
    value id its filter reads."""

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


class Filtering:
    """PreFilter, Filter and the batch Filter of the plugin (mixed into InterPodAffinity)."""

    __slots__ = ()

    def pre_filter(self: AffinityPlugin, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        handle = self.listers()
        index = pod_index(handle.cache)
        if not index.required_anti_pods and raw_pod_affinity(pi.pod) is None:
            return SKIP  # no term of its own, no existing pod's anti-affinity to match
        try:
            info = pod_affinity_info(pi.pod, pi.facts.pod_affinity_sig)
        except TermError as exc:
            return Status(Code.UnschedulableAndUnresolvable, f"parsing pod: {exc}")
        affinity = tuple(self.merge_namespaces(t) for t in info.required_affinity)
        anti = tuple(self.merge_namespaces(t) for t in info.required_anti_affinity)
        existing = existing_anti_affinity_counts(index, pi, handle.namespace_labels(pi.namespace))
        if not existing and not affinity and not anti:
            return Status(Code.Skip)
        st = PreFilterState(index, affinity, anti, existing_anti=existing)
        st.namespace, st.labels = pi.namespace, pod_labels(pi.pod)
        st.ns_labels = handle.namespace_labels(pi.namespace)
        if affinity:
            counter = index.counter(
                ("all", affinity), lambda p: matches_all(affinity, p), required_pair(affinity[0].selector)
            )
            for t in affinity:
                add_sums(st.affinity_counts, t.topology_key, index.sums(counter, t.topology_key))
            st.affinity_counts = nonzero(st.affinity_counts)
            st.self_match = matches_all(affinity, pi)
        for t in anti:
            add_sums(st.anti_counts, t.topology_key, index.sums(term_counter(index, t), t.topology_key))
        st.anti_counts = nonzero(st.anti_counts)
        state.data[PRE_FILTER_STATE_KEY] = st
        return SUCCESS

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        st: PreFilterState | None = state.data.get(PRE_FILTER_STATE_KEY)
        if st is None:
            return SUCCESS
        index = st.index
        copy = index.node_at(ni.slot) is not ni if ni.slot >= 0 else True
        labels = ni.labels
        # satisfyPodAffinity
        pods_exist = True
        own = own_counts(ni, st) if copy else None
        for t in st.affinity:
            value = labels.get(t.topology_key)
            if value is None:
                return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
            count = count_at(st.affinity_counts, t.topology_key, index.domains(t.topology_key).id_of(labels))
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
            count = count_at(st.anti_counts, t.topology_key, index.domains(t.topology_key).id_of(labels))
            if own is not None:
                count += own.anti_deltas_by_key.get(t.topology_key, 0)
            if count > 0:
                return Status(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        # satisfyExistingPodsAntiAffinity
        keys = set(st.existing_anti) | (set(own.existing_deltas) if own is not None else set())
        for key in keys:
            if key not in labels:
                continue
            count = count_at(st.existing_anti, key, index.domains(key).id_of(labels))
            if own is not None:
                count += own.existing_deltas.get(key, 0)
            if count > 0:
                return Status(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return SUCCESS

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None:
        st: PreFilterState | None = state.data.get(PRE_FILTER_STATE_KEY)
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
                pods_exist &= present & (lookup(st.affinity_counts.get(t.topology_key), ids) > 0)
            if not st.affinity_counts and st.self_match:
                passed &= has_all
            else:
                passed &= has_all & pods_exist
        for t in st.anti_affinity:
            counts = st.anti_counts.get(t.topology_key)
            if counts is None:
                continue
            ids = index.domains(t.topology_key).ids[:size]
            passed &= lookup(counts, ids) == 0  # (0 without the key)
        for key, counts in st.existing_anti.items():
            ids = index.domains(key).ids[:size]
            passed &= lookup(counts, ids) == 0  # (0 without the key)
        return passed


def existing_anti_affinity_counts(
    index: PodIndex, pi: PodInfo, ns_labels: Mapping[str, str] | None
) -> dict[str, IntArray]:
    """getExistingAntiAffinityCounts: per topology pair, the existing pods whose required
    anti-affinity terms match the incoming pod (one count per matching term)."""
    counts: dict[str, IntArray] = {}
    if not index.required_anti_pods:
        return counts
    labels = pod_labels(pi.pod)
    for group in index.anti_affinity_groups(labels):
        for t in group.info.required_anti_affinity:
            if t.matches(pi.namespace, labels, ns_labels):
                add_sums(counts, t.topology_key, index.sums(group, t.topology_key))
    return nonzero(counts)


@dataclass
class OwnCounts:
    """How a node's copy (preemption's dry run without some pods) differs from the cached node,
    per quantity the filter reads."""

    affinity_delta: int = 0
    anti_deltas_by_key: dict[str, int] = field(default_factory=dict)
    existing_deltas: dict[str, int] = field(default_factory=dict)


def own_counts(ni: NodeInfo, st: PreFilterState) -> OwnCounts:
    """PreFilterExtensions AddPod/RemovePod for one node: the copy's pods against the cached ones."""
    own = OwnCounts()
    cached = st.index.node_at(ni.slot) if ni.slot >= 0 else None
    cached_pods = list(cached.pods.values()) if cached is not None else []
    pods = list(ni.pods.values())
    if st.affinity:
        now = sum(1 for p in pods if matches_all(st.affinity, p))
        before = sum(1 for p in cached_pods if matches_all(st.affinity, p))
        own.affinity_delta = now - before
    for t in st.anti_affinity:
        now = sum(1 for p in pods if t.matches(p.namespace, pod_labels(p.pod), None))
        before = sum(1 for p in cached_pods if t.matches(p.namespace, pod_labels(p.pod), None))
        own.anti_deltas_by_key[t.topology_key] = own.anti_deltas_by_key.get(t.topology_key, 0) + now - before
    for sign, group in ((1, pods), (-1, cached_pods)):
        for p in group:
            for t in pod_affinity_info_or_none(p.pod, p.facts.pod_affinity_sig).required_anti_affinity:
                if t.matches(st.namespace, st.labels, st.ns_labels):
                    key = t.topology_key
                    own.existing_deltas[key] = own.existing_deltas.get(key, 0) + sign
    return own
