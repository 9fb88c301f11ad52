"""PodTopologySpread: DoNotSchedule constraints (Filter) and ScheduleAnyway ones, the pod's own or
the default constraints (Score) (mirrors pkg/scheduler/framework/plugins/podtopologyspread:
plugin.go, common.go, filtering.go, scoring.go).

Per topology value, upstream sums the matching pods of the eligible nodes in PreFilter/PreScore;
the per-node counts come here from `scheduler.pod_index` (kept up to date from the cache's change
log) and are summed per value with numpy. A pod without constraints is skipped (upstream's Skip).

The default constraints select pods by `default_selector.default_selector` (helper.DefaultSelector).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubetaint.api.selectors import LabelSelector, Requirement
from kubetaint.core.matching import do_not_schedule_taints_filter, find_matching_untolerated_taint
from kubetaint.scheduler.affinity_terms import TermError, _selector, label_matcher
from kubetaint.scheduler.cache import BoolArray, Cache, IntArray
from kubetaint.scheduler.events import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint
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
from kubetaint.scheduler.nodes_at import node_slots
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.plugins.default_selector import default_selector
from kubetaint.scheduler.plugins.node_affinity import required_matcher
from kubetaint.scheduler.pod_index import Counter, PodIndex, pod_index, required_pair
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.resources import InputError
from kubetaint.scheduler.status import MAX_NODE_SCORE, SUCCESS, Code, Status

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR, IGNORE = "Honor", "Ignore"
SYSTEM_DEFAULTING, LIST_DEFAULTING = "System", "List"
#: systemDefaultConstraints
SYSTEM_DEFAULT_CONSTRAINTS: tuple[Mapping[str, Any], ...] = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_TOPOLOGY_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)
_MAX_INT32 = 2**31 - 1
SKIP = Status(Code.Skip)
_PRE_FILTER = "PreFilterPodTopologySpread"
_PRE_SCORE = "PreScorePodTopologySpread"
_INVALID_SCORE = -1


@dataclass(frozen=True)
class Constraint:
    """topologySpreadConstraint: the internal version with the selector parsed."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None  # None selects nothing
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def _pod_labels(pod: Mapping[str, Any]) -> Mapping[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


def _uid(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("uid") or "")


def _involved(pod: Mapping[str, Any], pi: PodInfo) -> bool:
    """involvedInTopologySpreading: the pending pod itself, or a bound pod of its namespace."""
    if _uid(pod) == _uid(pi.pod):
        return True
    meta = pod.get("metadata") or {}
    bound = bool((pod.get("spec") or {}).get("nodeName"))
    return bound and (meta.get("namespace") or "default") == pi.namespace


def _selects(c: Constraint, labels: Mapping[str, str]) -> bool:
    return c.selector is not None and label_matcher(c.selector)(labels)


def _node_labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    return (node.get("metadata") or {}).get("labels") or {}


def _has_topology_keys(node: Mapping[str, Any], constraints: Sequence[Constraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints: the node has every constraint's topology key."""
    labels = _node_labels(node)
    return all(c.topology_key in labels for c in constraints)


def filter_constraints(raw: Sequence[Any], pod_labels: Mapping[str, str], action: str) -> list[Constraint]:
    """filterTopologySpreadConstraints: the constraints of one whenUnsatisfiable, with the pod's
    values of matchLabelKeys merged into the selector."""
    out: list[Constraint] = []
    for c in raw:
        if not isinstance(c, Mapping) or c.get("whenUnsatisfiable") != action:
            continue
        selector = _selector(c.get("labelSelector"))
        match_keys = [k for k in c.get("matchLabelKeys") or () if isinstance(k, str) and k in pod_labels]
        if match_keys:
            extra: tuple[Requirement, ...] = tuple((k, "=", (pod_labels[k],)) for k in match_keys)
            selector = LabelSelector(extra + (selector.requirements if selector is not None else ()))
        min_domains = c.get("minDomains")
        out.append(
            Constraint(
                int(c.get("maxSkew") or 0),
                str(c.get("topologyKey") or ""),
                selector,
                int(min_domains) if isinstance(min_domains, int) else 1,
                str(c.get("nodeAffinityPolicy") or HONOR),
                str(c.get("nodeTaintsPolicy") or IGNORE),
            )
        )
    return out


def _validate_default_constraints(raw: Any) -> list[Mapping[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError(f"defaultConstraints: Invalid value: {raw!r}: must be a list")
    for i, c in enumerate(raw):
        where = f"defaultConstraints[{i}]"
        if not isinstance(c, Mapping):
            raise ValueError(f"{where}: Invalid value: {c!r}: must be an object")
        skew = c.get("maxSkew")
        if not isinstance(skew, int) or skew <= 0:
            raise ValueError(f"{where}.maxSkew: Invalid value: {skew!r}: must be greater than zero")
        if not c.get("topologyKey"):
            raise ValueError(f"{where}.topologyKey: Required value: can not be empty")
        if c.get("whenUnsatisfiable") not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            raise ValueError(
                f'{where}.whenUnsatisfiable: Unsupported value: "{c.get("whenUnsatisfiable")}": '
                f'supported values: "DoNotSchedule", "ScheduleAnyway"'
            )
        if c.get("labelSelector") is not None:
            raise ValueError(
                f"{where}.labelSelector: Forbidden: constraint must not define a selector, "
                "as they deduced for each pod"
            )
    return list(raw)


class PodTopologySpread(
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
    name = names.POD_TOPOLOGY_SPREAD

    def __init__(
        self, args: Mapping[str, Any] | None = None, enable_comparison_operators: bool = False
    ) -> None:
        args = args or {}
        self.enable_cmp = enable_comparison_operators
        constraints = _validate_default_constraints(args.get("defaultConstraints"))
        defaulting = args.get("defaultingType") or (LIST_DEFAULTING if constraints else SYSTEM_DEFAULTING)
        if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            raise ValueError(
                f'defaultingType: Unsupported value: "{defaulting}": supported values: "List", "System"'
            )
        if defaulting == SYSTEM_DEFAULTING and constraints:
            raise ValueError(
                f"defaultConstraints: Invalid value: {constraints!r}: "
                'when .defaultingType is "System", .defaultConstraints must be empty'
            )
        self.system_defaulted = defaulting == SYSTEM_DEFAULTING
        self.default_constraints: list[Mapping[str, Any]] = (
            list(SYSTEM_DEFAULT_CONSTRAINTS) if self.system_defaulted else constraints
        )
        self._defaults_for = {
            action: any(c.get("whenUnsatisfiable") == action for c in self.default_constraints)
            for action in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
        }
        self.handle: ClusterListers | None = None

    def use_handle(self, handle: Handle) -> None:
        self.handle = handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (with SchedulerQueueingHints): pods added, relabelled, deleted or given
        a toleration, and nodes added, deleted, relabelled or retainted, each with its hint."""
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    POD,
                    ActionType.Add
                    | ActionType.UpdatePodLabel
                    | ActionType.UpdatePodToleration
                    | ActionType.Delete,
                ),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    NODE,
                    ActionType.Add
                    | ActionType.Delete
                    | ActionType.UpdateNodeLabel
                    | ActionType.UpdateNodeTaint,
                ),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(
        self, pi: PodInfo, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
    ) -> bool:
        """isSchedulableAfterPodChange: only the pending pod itself or a bound pod of its namespace
        matters. The pending pod's new toleration helps when a constraint honours taints; a bound
        pod's label change helps when it changes whether some constraint selects it; an added or
        deleted pod helps when some constraint selects it."""
        if (new is not None and not _involved(new, pi)) or (old is not None and not _involved(old, pi)):
            return False
        constraints = self.constraints(pi, DO_NOT_SCHEDULE)
        if old is not None and new is not None:
            if (
                _uid(new) == _uid(pi.pod)
                and (new.get("spec") or {}).get("tolerations") != (old.get("spec") or {}).get("tolerations")
                and any(c.node_taints_policy == HONOR for c in constraints)
            ):
                return True
            old_labels, new_labels = _pod_labels(old), _pod_labels(new)
            if old_labels == new_labels:
                return False
            return any(_selects(c, old_labels) != _selects(c, new_labels) for c in constraints)
        if new is not None:
            return any(_selects(c, _pod_labels(new)) for c in constraints)
        return old is not None and any(_selects(c, _pod_labels(old)) for c in constraints)

    def is_schedulable_after_node_change(
        self, pi: PodInfo, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
    ) -> bool:
        """isSchedulableAfterNodeChange: a node that now has (or no longer has) every topology key
        of the pending pod's constraints; an updated node with them all whose values of those keys
        or whose taints changed; an added node with them all; a deleted node that had them all."""
        constraints = self.constraints(pi, DO_NOT_SCHEDULE)
        old_matching = old is not None and _has_topology_keys(old, constraints)
        new_matching = new is not None and _has_topology_keys(new, constraints)
        if old is not None and new is not None:
            if old_matching != new_matching:
                return True
            old_labels, new_labels = _node_labels(old), _node_labels(new)
            return new_matching and (
                any(old_labels.get(c.topology_key) != new_labels.get(c.topology_key) for c in constraints)
                or (old.get("spec") or {}).get("taints") != (new.get("spec") or {}).get("taints")
            )
        if new is not None:
            return new_matching
        return old_matching

    def _handle(self) -> ClusterListers:
        assert self.handle is not None, "PodTopologySpread needs a handle"
        return self.handle

    def constraints(self, pi: PodInfo, action: str) -> list[Constraint]:
        """getConstraints / the PreScore constraints: the pod's own, else the defaults."""
        pod = pi.pod
        own = (pod.get("spec") or {}).get("topologySpreadConstraints") or ()
        labels = _pod_labels(pod)
        if own:
            return filter_constraints(own, labels, action)
        if not self._defaults_for[action]:
            return []
        selector = default_selector(pod, self.handle)
        if selector.empty:
            return []
        constraints = filter_constraints(self.default_constraints, labels, action)
        return [
            Constraint(
                c.max_skew,
                c.topology_key,
                selector,
                c.min_domains,
                c.node_affinity_policy,
                c.node_taints_policy,
            )
            for c in constraints
        ]

    # ---- shared --------------------------------------------------------------------------------
    @staticmethod
    def _counts(index: PodIndex, pi: PodInfo, c: Constraint) -> IntArray:
        """Per slot, the pods countPodsMatchSelector counts: same namespace, not terminating, selected."""
        return PodTopologySpread._counter(index, pi, c).counts

    @staticmethod
    def _counter(index: PodIndex, pi: PodInfo, c: Constraint) -> Counter:
        """The index's counter of the pods countPodsMatchSelector counts (`_counts`)."""
        selector, namespace = c.selector, pi.namespace
        key = ("spread", namespace, None if selector is None else selector.requirements)
        labels_match = None if selector is None else label_matcher(selector)

        def match(p: PodInfo) -> bool:
            if labels_match is None or p.namespace != namespace:
                return False
            meta = p.pod.get("metadata") or {}
            return not meta.get("deletionTimestamp") and labels_match(meta.get("labels") or {})

        return index.counter(key, match, required_pair(selector))

    def _inclusion(
        self, pi: PodInfo, cache: Cache, constraints: Sequence[Constraint]
    ) -> dict[tuple[str, str], BoolArray]:
        """matchNodeInclusionPolicies per (nodeAffinityPolicy, nodeTaintsPolicy) in use, over slots."""
        size = len(cache.slot_nodes)
        out: dict[tuple[str, str], BoolArray] = {}
        affinity: BoolArray | None = None
        taints: BoolArray | None = None
        for c in constraints:
            key = (c.node_affinity_policy, c.node_taints_policy)
            if key in out:
                continue
            if (
                not (c.node_affinity_policy == HONOR and pi.has_required_affinity)
                and c.node_taints_policy != HONOR
            ):
                continue  # every node included (the usual): no mask
            mask: BoolArray = np.ones(size, np.bool_)
            if c.node_affinity_policy == HONOR and pi.has_required_affinity:
                if affinity is None:
                    try:
                        matcher = required_matcher(pi)
                    except InputError:
                        matcher = None  # parsing errors are ignored, as upstream
                    affinity = np.fromiter(
                        (
                            ni is not None and (matcher is None or matcher(ni.name, ni.labels))
                            for ni in cache.slot_nodes
                        ),
                        np.bool_,
                        size,
                    )
                mask &= affinity
            if c.node_taints_policy == HONOR:
                if taints is None:
                    tolerated = np.array(
                        [
                            find_matching_untolerated_taint(
                                t, pi.tolerations, do_not_schedule_taints_filter, self.enable_cmp
                            )[0]
                            is None
                            for t in cache.taint_sets
                        ],
                        np.bool_,
                    )
                    taints = tolerated[cache.taint_set[:size]] if len(tolerated) else np.ones(size, np.bool_)
                mask &= taints
            out[key] = mask
        return out

    # ---- filter --------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        try:
            constraints = self.constraints(pi, DO_NOT_SCHEDULE)
        except TermError as exc:
            return Status(Code.Error, f"get constraints from pod: {exc}")
        if not constraints:
            return SKIP
        cache = self._handle().cache
        index = pod_index(cache)
        size = len(cache.slot_nodes)
        keys = tuple(sorted({c.topology_key for c in constraints}))
        eligible = index.with_keys(keys)[:size]
        inclusion = self._inclusion(pi, cache, constraints)
        st = _SpreadFilterState(index, pi.namespace)
        for c in constraints:
            d = index.domains(c.topology_key)
            included = inclusion.get((c.node_affinity_policy, c.node_taints_policy))
            keep = eligible if included is None else eligible & included
            counter = self._counter(index, pi, c)
            counts = counter.counts[:size]
            if included is None and index.same_nodes(keys, c.topology_key):
                # every node with the key counts: the index's per-value sums are the counts
                tp = index.sums(counter, c.topology_key)
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
                self_match=c.selector is not None and c.selector.matches(_pod_labels(pi.pod)),
            )
        state.data[_PRE_FILTER] = st
        return SUCCESS

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        st: _SpreadFilterState | None = state.data.get(_PRE_FILTER)
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
                counts_now = sum(1 for p in ni.pods.values() if _spread_match(c, st.namespace, p))
                before = (
                    sum(1 for p in cached.pods.values() if _spread_match(c, st.namespace, p)) if cached else 0
                )
                tp = tp.copy()
                tp[vid] += counts_now - before
            match_num = int(tp[vid]) if 0 <= vid < len(tp) else 0
            min_match = _min_match(tp, present, c.min_domains)
            if match_num + st.self_match[i] - min_match > c.max_skew:
                return Status(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return SUCCESS

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None:
        st: _SpreadFilterState | None = state.data.get(_PRE_FILTER)
        if st is None:
            return None
        size = len(cache.slot_nodes)
        passed: BoolArray = np.ones(size, np.bool_)
        for i, c in enumerate(st.constraints):
            d = st.index.domains(c.topology_key)
            tp = st.tp[i]
            if len(tp) < len(d.values):  # (values first seen after the counts were taken)
                tp = np.concatenate([tp, np.zeros(len(d.values) - len(tp), np.int64)])
            min_match = _min_match(st.tp[i], st.present[i], c.min_domains)
            # the verdict per value, then per slot by its value (a slot without the key: id -1,
            # the appended False)
            verdicts = np.append(tp + st.self_match[i] - min_match <= c.max_skew, False)
            passed &= verdicts[d.ids[:size]]
        return passed

    # ---- score ---------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        cache = self._handle().cache
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
        inclusion = self._inclusion(pi, cache, constraints)
        st = _SpreadScoreState(index, ignored)
        for c in constraints:
            counter = self._counter(index, pi, c)
            counts = counter.counts[:size]
            if c.topology_key == LABEL_HOSTNAME:
                st.add(c, None, counts, math.log(scored + 2))
                continue
            d = index.domains(c.topology_key)
            # a node without the label counts toward the value "" (upstream reads a missing label as "")
            empty = d.value_ids.get("", len(d.values))
            wanted = np.zeros(max(len(d.values), empty + 1), np.bool_)
            candidate_ids = d.ids[candidates]
            wanted[np.where(candidate_ids >= 0, candidate_ids, empty)] = True
            included = inclusion.get((c.node_affinity_policy, c.node_taints_policy))
            if included is None and not require_all:
                # every node counts toward its value: the index's per-value sums (the values not
                # wanted are never read), the pods on nodes without the label toward ""
                sums = index.sums(counter, c.topology_key)
                tp = np.zeros(len(wanted), np.int64)
                tp[: len(sums)] = sums
                tp[empty] += int(counts.sum()) - int(sums.sum())
            else:
                ids = np.where(d.ids[:size] >= 0, d.ids[:size], empty)
                keep = (
                    eligible_all & wanted[ids] if included is None else eligible_all & included & wanted[ids]
                )
                tp = np.bincount(ids[keep], weights=counts[keep], minlength=len(wanted)).astype(np.int64)
            st.add(c, (empty, tp), counts, math.log(int(wanted.sum()) + 2))
        state.data[_PRE_SCORE] = st
        return SUCCESS

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        return int(self.score_batch(state, pi, self._handle().cache, np.array([ni.slot], np.int64))[0])

    def score_batch(self, state: CycleState, pi: PodInfo, cache: Cache, slots: IntArray) -> IntArray:
        st: _SpreadScoreState = state.data[_PRE_SCORE]
        score = np.zeros(len(slots), np.float64)
        index = st.index
        for c, domain, counts, weight in st.items:
            has = index.domains(c.topology_key).ids[slots] >= 0
            if domain is None:
                cnt = counts[slots]
            else:
                empty, tp = domain
                ids = index.domains(c.topology_key).ids[slots]
                cnt = tp[np.where(ids >= 0, ids, empty)]
            score += np.where(has, cnt.astype(np.float64) * weight + float(c.max_skew - 1), 0.0)
        out: IntArray = np.floor(score + 0.5).astype(np.int64)
        if st.ignored is not None:
            out[st.ignored[slots]] = _INVALID_SCORE
        return out

    def normalize_score(self, state: CycleState, pi: PodInfo, scores: IntArray) -> IntArray:
        valid = scores != _INVALID_SCORE
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


def _spread_match(c: Constraint, namespace: str, p: PodInfo) -> bool:
    if c.selector is None or p.namespace != namespace:
        return False
    if (p.pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return c.selector.matches(_pod_labels(p.pod))


def _min_match(tp: IntArray, present: BoolArray, min_domains: int) -> int:
    """preFilterState.minMatchNum: the least matching count over the eligible domains (0 when
    fewer domains than minDomains; MaxInt32 without any domain)."""
    domains = int(present.sum())
    if domains < min_domains:
        return 0
    if domains == 0:
        return _MAX_INT32
    return int(tp[present[: len(tp)]].min())


@dataclass
class _SpreadFilterState:
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


@dataclass
class _SpreadScoreState:
    index: PodIndex
    #: per slot, whether the node is ignored (it lacks a topology key); None: none is
    ignored: BoolArray | None
    #: per constraint: the constraint, (the value id nodes without the label count toward, the
    #: counts per value id) or None for the hostname key, the per-slot counts, the weight
    items: list[tuple[Constraint, tuple[int, IntArray] | None, IntArray, float]] = field(default_factory=list)

    def add(
        self, c: Constraint, domain: tuple[int, IntArray] | None, counts: IntArray, weight: float
    ) -> None:
        self.items.append((c, domain, counts, weight))
