"""PodTopologySpread's PreFilter and Filter: the DoNotSchedule constraints (mirrors
pkg/scheduler/framework/plugins/podtopologyspread/filtering.go: preFilterState,
calPreFilterState, minMatchNum, Filter with AddPod/RemovePod's adjustment of a node copy).

Per topology value, upstream sums the matching pods of the eligible nodes in PreFilter; the
per-node counts come here from `scheduler.pod_index` and are summed per value with numpy, and
`filter_batch` gives the verdict of every node at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kubetaint.scheduler.affinity_terms import TermError
from kubetaint.scheduler.cache import BoolArray, Cache, IntArray
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins.pod_topology_spread.common import (
    DO_NOT_SCHEDULE,
    SKIP,
    Constraint,
    SpreadPlugin,
    counter,
    inclusion,
    pod_labels,
    spread_match,
)
from kubetaint.scheduler.pod_index import PodIndex, pod_index
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import SUCCESS, Code, Status

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
PRE_FILTER_STATE_KEY = "PreFilterPodTopologySpread"
_MAX_INT32 = 2**31 - 1


@dataclass
class PreFilterState:
    """preFilterState: per DoNotSchedule constraint, the matching pods per topology value, the
    values present on eligible nodes, the eligible slots, the per-slot counts and whether the
    pending pod itself matches."""

    index: PodIndex
    namespace: str
    constraints: list[Constraint] = field(default_factory=list)
    tp: list[IntArray] = field(default_factory=list)
    present: list[BoolArray] = field(default_factory=list)
    keep: list[BoolArray] = field(default_factory=list)
    slot_counts: list[IntArray] = field(default_factory=list)
    self_match: list[int] = field(default_factory=list)

    def add(
        self,
        c: Constraint,
        tp: IntArray,
        present: BoolArray,
        keep: BoolArray,
        *,
        counts: IntArray,
        self_match: bool,
    ) -> None:
        self.constraints.append(c)
        self.tp.append(tp)
        self.present.append(present)
        self.keep.append(keep)
        self.slot_counts.append(counts)
        self.self_match.append(int(self_match))


def min_match(tp: IntArray, present: BoolArray, min_domains: int) -> int:
    """preFilterState.minMatchNum: the least matching count over the eligible domains (0 when
    fewer domains than minDomains; MaxInt32 without any domain)."""
    domains = int(present.sum())
    if domains < min_domains:
        return 0
    if domains == 0:
        return _MAX_INT32
    return int(tp[present[: len(tp)]].min())


class Filtering:
    """PreFilter, Filter and the batch Filter of the plugin (mixed into PodTopologySpread)."""

    __slots__ = ()

    def pre_filter(self: SpreadPlugin, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        try:
            constraints = self.constraints(pi, DO_NOT_SCHEDULE)
        except TermError as exc:
            return Status(Code.Error, f"get constraints from pod: {exc}")
        if not constraints:
            return SKIP
        cache = self.listers().cache
        index = pod_index(cache)
        size = len(cache.slot_nodes)
        keys = tuple(sorted({c.topology_key for c in constraints}))
        eligible = index.with_keys(keys)[:size]
        included_by = inclusion(pi, cache, constraints, self.enable_cmp)
        st = PreFilterState(index, pi.namespace)
        for c in constraints:
            d = index.domains(c.topology_key)
            included = included_by.get((c.node_affinity_policy, c.node_taints_policy))
            keep = eligible if included is None else eligible & included
            matching = counter(index, pi, c)
            counts = matching.counts[:size]
            if included is None and index.same_nodes(keys, c.topology_key):
                # every node with the key counts: the index's per-value sums are the counts
                tp = index.sums(matching, c.topology_key)
                present = index.values_present(c.topology_key)
            else:
                ids = d.ids[:size]
                at = np.flatnonzero(counts)  # (most nodes hold no matching pod)
                at = at[keep[at]]
                tp = np.bincount(ids[at], weights=counts[at], minlength=len(d.values)).astype(np.int64)
                present = np.zeros(len(d.values), np.bool_)
                present[ids[keep]] = True
            st.add(
                c,
                tp,
                present,
                keep,
                counts=counts,
                self_match=c.selector is not None and c.selector.matches(pod_labels(pi.pod)),
            )
        state.data[PRE_FILTER_STATE_KEY] = st
        return SUCCESS

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        st: PreFilterState | None = state.data.get(PRE_FILTER_STATE_KEY)
        if st is None:
            return SUCCESS
        index = st.index
        copy = ni.slot < 0 or index.node_at(ni.slot) is not ni
        for i, c in enumerate(st.constraints):
            if c.topology_key not in ni.labels:
                return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH)
            vid = index.domains(c.topology_key).id_of(ni.labels)
            tp, present = st.tp[i], st.present[i]
            if copy and ni.slot >= 0 and st.keep[i][ni.slot] and vid >= 0:
                # AddPod/RemovePod: the copy's matching pods against the cached node's
                cached = index.node_at(ni.slot)
                counts_now = sum(1 for p in ni.pods.values() if spread_match(c, st.namespace, p))
                before = (
                    sum(1 for p in cached.pods.values() if spread_match(c, st.namespace, p)) if cached else 0
                )
                tp = tp.copy()
                tp[vid] += counts_now - before
            match_num = int(tp[vid]) if 0 <= vid < len(tp) else 0
            least = min_match(tp, present, c.min_domains)
            if match_num + st.self_match[i] - least > c.max_skew:
                return Status(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return SUCCESS

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None:
        st: PreFilterState | None = state.data.get(PRE_FILTER_STATE_KEY)
        if st is None:
            return None
        size = len(cache.slot_nodes)
        passed: BoolArray = np.ones(size, np.bool_)
        for i, c in enumerate(st.constraints):
            d = st.index.domains(c.topology_key)
            tp = st.tp[i]
            if len(tp) < len(d.values):  # (values first seen after the counts were taken)
                tp = np.concatenate([tp, np.zeros(len(d.values) - len(tp), np.int64)])
            least = min_match(st.tp[i], st.present[i], c.min_domains)
            # the verdict per value, then per slot by its value (a slot without the key: id -1,
            # the appended False)
            verdicts = np.append(tp + st.self_match[i] - least <= c.max_skew, False)
            passed &= verdicts[d.ids[:size]]
        return passed
