"""NodeAffinity: nodeSelector and required node affinity (Filter), preferred terms (Score)
(mirrors pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubetaint.scheduler.cache import BoolArray, Cache, IntArray
from kubetaint.scheduler.events import NODE, ActionType, ClusterEvent, ClusterEventWithHint
from kubetaint.scheduler.framework import CycleState, Plugin, default_normalize_score
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.plugins.node_selector import (
    Matcher,
    compile_preferred,
    compile_required,
    required_node_names,
)
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.resources import object_ref
from kubetaint.scheduler.status import MAX_NODE_SCORE, SUCCESS, Code, Status

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_REQUIRED = "NodeAffinity/required"
_PREFERRED = "NodeAffinity/preferred"
_NODE_NAMES = "NodeAffinity/nodeNames"


def required_matcher(pi: PodInfo) -> Matcher | None:
    return compile_required(pi.pod, object_ref({"kind": "Pod", **pi.pod}))


class NodeAffinity(Plugin):
    name = names.NODE_AFFINITY

    def __init__(self) -> None:
        self._required: dict[str, tuple[Mapping[str, Any], Matcher | None]] = {}
        self._names: dict[str, tuple[Mapping[str, Any], frozenset[str] | None]] = {}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.Add | ActionType.UpdateNodeLabel), self._after_node
            )
        ]

    def _after_node(self, pi: PodInfo, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
        if new is None:
            return False
        matcher = self._matcher(pi)
        if matcher is None:
            return True
        meta = new.get("metadata") or {}
        if not matcher(meta.get("name", ""), meta.get("labels") or {}):
            return False
        if old is None:
            return True
        old_meta = old.get("metadata") or {}
        return not matcher(old_meta.get("name", ""), old_meta.get("labels") or {})

    def _matcher(self, pi: PodInfo) -> Matcher | None:
        cached = self._required.get(pi.key)
        if cached is not None and cached[0] is pi.pod:
            return cached[1]
        matcher = required_matcher(pi) if pi.has_required_affinity else None
        if len(self._required) > 65536:
            self._required.clear()
        self._required[pi.key] = (pi.pod, matcher)
        return matcher

    def _pinned_names(self, pi: PodInfo) -> frozenset[str] | None:
        cached = self._names.get(pi.key)
        if cached is not None and cached[0] is pi.pod:
            return cached[1]
        names = required_node_names(pi.pod) if pi.has_required_affinity else None
        if len(self._names) > 65536:
            self._names.clear()
        self._names[pi.key] = (pi.pod, names)
        return names

    def pre_filter(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        matcher = self._matcher(pi)
        if matcher is None:
            return Status(Code.Skip)
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
        matcher = state.data.get(_REQUIRED) or self._matcher(pi)
        if matcher is None or matcher(ni.name, ni.labels):
            return SUCCESS
        return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_POD)

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None:
        matcher = state.data.get(_REQUIRED) or self._matcher(pi)
        if matcher is None:
            return None
        nodes = cache.slot_nodes
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
        if not pi.preferred_terms:
            return Status(Code.Skip)
        state.data[_PREFERRED] = compile_preferred(pi.pod, object_ref({"kind": "Pod", **pi.pod}))
        return SUCCESS

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        terms = state.data.get(_PREFERRED)
        if terms is None:
            terms = compile_preferred(pi.pod, object_ref({"kind": "Pod", **pi.pod}))
        return sum(weight for weight, match in terms if match(ni.name, ni.labels))

    def normalize_score(self, state: CycleState, pi: PodInfo, scores: IntArray) -> IntArray:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)
