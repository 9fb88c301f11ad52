"""NodeAffinity: nodeSelector and required node affinity (Filter), preferred terms (Score)
(mirrors pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubetaint.scheduler.cache import BoolArray, Cache, IntArray
from kubetaint.scheduler.events import NODE, ActionType, ClusterEvent, ClusterEventWithHint
from kubetaint.scheduler.extension_points import (
    CycleState,
    EnqueueExtensions,
    FilterBatch,
    FilterPlugin,
    Plugin,
    PreFilterPlugin,
    PreFilterResultPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kubetaint.scheduler.framework import default_normalize_score
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.plugins.node_selector import compile_required, required_node_names
from kubetaint.scheduler.plugins.node_selector_parse import (
    Matcher,
    go_aggregate,
    lazy_node_selector,
    preferred_terms,
    required_affinity,
    selector_errors,
    terms_matcher,
)
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.resources import object_ref
from kubetaint.scheduler.status import MAX_NODE_SCORE, SUCCESS, Code, Status
from kubetaint.speed.memo import Memo

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_REQUIRED = "NodeAffinity/required"
_PREFERRED = "NodeAffinity/preferred"
_NODE_NAMES = "NodeAffinity/nodeNames"
_ADDED = "addedAffinity"
_REQUIRED_FIELD = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED_FIELD = "preferredDuringSchedulingIgnoredDuringExecution"


def required_matcher(pi: PodInfo) -> Matcher | None:
    """API validation of the pod's nodeSelector and required terms (InputError naming the field)
    with a matcher (for inputs checked before they are scheduled, as `explain` checks them)."""
    return compile_required(pi.pod, object_ref({"kind": "Pod", **pi.pod}))


def node_affinity_args_errors(args: Mapping[str, Any]) -> list[str]:
    """ValidateNodeAffinityArgs: the parse errors of addedAffinity's required and preferred terms."""
    added = args.get(_ADDED)
    if not isinstance(added, Mapping):
        return []
    errs: list[str] = []
    required = added.get(_REQUIRED_FIELD)
    if isinstance(required, Mapping):
        errs += selector_errors(lazy_node_selector(required, f"{_ADDED}.{_REQUIRED_FIELD}"))
    errs += preferred_terms(added.get(_PREFERRED_FIELD), f"{_ADDED}.{_PREFERRED_FIELD}")[1]
    return errs


class NodeAffinity(
    Plugin,
    EnqueueExtensions,
    PreFilterPlugin,
    PreFilterResultPlugin,
    FilterPlugin,
    FilterBatch,
    PreScorePlugin,
    ScorePlugin,
    ScoreExtensions,
):
    name = names.NODE_AFFINITY

    def __init__(self, args: Mapping[str, Any] | None = None) -> None:
        args = args or {}
        errs = node_affinity_args_errors(args)
        if errs:
            raise ValueError(go_aggregate(errs))
        raw_added = args.get(_ADDED)
        added: Mapping[str, Any] = raw_added if isinstance(raw_added, Mapping) else {}
        required = added.get(_REQUIRED_FIELD)
        #: addedAffinity's required node selector (every term parsed), or None
        self.added_selector: Matcher | None = (
            terms_matcher(lazy_node_selector(required)) if isinstance(required, Mapping) else None
        )
        pref = added.get(_PREFERRED_FIELD)
        #: addedAffinity's preferred terms, or None when there are none
        self.added_preferred: list[tuple[int, Matcher]] | None = (
            preferred_terms(pref)[0] if isinstance(pref, list) and pref else None
        )
        #: by the spec facts' required_sig (the nodeSelector and required terms by value)
        self._required: Memo[tuple[str | None, str | None], tuple[Matcher | None]] = Memo(
            "scheduler.node_affinity.required", 1 << 12
        )
        self._names: Memo[tuple[str | None, str | None], tuple[frozenset[str] | None]] = Memo(
            "scheduler.node_affinity.pinned_names", 1 << 12
        )

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.Add | ActionType.UpdateNodeLabel), self._after_node
            )
        ]

    def _after_node(self, pi: PodInfo, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
        if new is None:
            return False
        meta = new.get("metadata") or {}
        if self.added_selector is not None and not self.added_selector(
            meta.get("name", ""), meta.get("labels") or {}
        ):
            return False
        matcher = self._matcher(pi)
        if matcher is None:
            return True
        if not matcher(meta.get("name", ""), meta.get("labels") or {}):
            return False
        if old is None:
            return True
        old_meta = old.get("metadata") or {}
        return not matcher(old_meta.get("name", ""), old_meta.get("labels") or {})

    def _matcher(self, pi: PodInfo) -> Matcher | None:
        if not pi.has_required_affinity:
            return None
        key = pi.facts.required_sig
        cached = self._required.get(key)
        if cached is not None:
            return cached[0]
        matcher = required_affinity(pi.pod)
        self._required.put(key, (matcher,))
        return matcher

    def _pinned_names(self, pi: PodInfo) -> frozenset[str] | None:
        if not pi.has_required_affinity:
            return None
        key = pi.facts.required_sig
        cached = self._names.get(key)
        if cached is not None:
            return cached[0]
        names = required_node_names(pi.pod)
        self._names.put(key, (names,))
        return names

    def pre_filter(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        matcher = self._matcher(pi)
        if matcher is None:
            if self.added_selector is None:
                return Status(Code.Skip)
            return SUCCESS
        state.data[_REQUIRED] = matcher
        names = self._pinned_names(pi)
        if names is not None:
            if not names:  # every term names nodes, and none is named by all its requirements
                return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
            state.data[_NODE_NAMES] = names
        return SUCCESS

    def pre_filter_result(self, state: CycleState, pi: PodInfo) -> frozenset[str] | None:
        """PreFilterResult.NodeNames of this cycle's PreFilter: the only nodes the required terms
        can match (each term pins `metadata.name`), or None for all nodes."""
        names: frozenset[str] | None = state.data.get(_NODE_NAMES)
        return names

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        added = self.added_selector
        if added is not None and not added(ni.name, ni.labels):
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_ENFORCED)
        matcher = state.data.get(_REQUIRED) or self._matcher(pi)
        if matcher is None or matcher(ni.name, ni.labels):
            return SUCCESS
        return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_POD)

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None:
        matcher = state.data.get(_REQUIRED) or self._matcher(pi)
        nodes = cache.slot_nodes
        added = self.added_selector
        if added is not None:
            both = matcher
            return np.fromiter(
                (
                    ni is not None
                    and added(ni.name, ni.labels)
                    and (both is None or both(ni.name, ni.labels))
                    for ni in nodes
                ),
                np.bool_,
                len(nodes),
            )
        if matcher is None:
            return None
        names = self._pinned_names(pi)
        if names is not None:  # only the pinned nodes can match: test just those
            mask = np.zeros(len(nodes), np.bool_)
            for name in names:
                ni = cache.nodes.get(name)
                if ni is not None and nodes[ni.slot] is ni:
                    mask[ni.slot] = matcher(ni.name, ni.labels)
            return mask
        return np.fromiter(
            (ni is not None and matcher(ni.name, ni.labels) for ni in nodes), np.bool_, len(nodes)
        )

    def pre_score(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        raw = _pod_preferred(pi)
        if raw is None and self.added_preferred is None:
            return Status(Code.Skip)
        terms, errs = preferred_terms(raw)
        if errs:
            return Status(Code.Error, go_aggregate(errs))
        state.data[_PREFERRED] = terms
        return SUCCESS

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        count = 0
        if self.added_preferred is not None:
            count += sum(weight for weight, match in self.added_preferred if match(ni.name, ni.labels))
        terms = state.data.get(_PREFERRED)
        if terms is None:
            terms = preferred_terms(_pod_preferred(pi))[0]
        return count + sum(weight for weight, match in terms if match(ni.name, ni.labels))

    def normalize_score(self, state: CycleState, pi: PodInfo, scores: IntArray) -> IntArray:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)


def _pod_preferred(pi: PodInfo) -> Any:
    """The pod's preferredDuringScheduling terms, or None when the field is absent."""
    affinity = ((pi.pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    return affinity.get(_PREFERRED_FIELD)
