"""The InterPodAffinity plugin (mirrors pkg/scheduler/framework/plugins/interpodaffinity/
plugin.go): its arguments (hardPodAffinityWeight, ignorePreferredTermsOfExistingPods), the
events that may make a pod it rejected schedulable (EventsToRegister and the queueing hints) and
mergeAffinityTermNamespacesIfNotEmpty. Filtering (required terms, existing pods' required
anti-affinity) is in filtering.py, scoring (preferred terms both ways, existing pods' required
affinity weighted by hardPodAffinityWeight) in scoring.py, what both share in common.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.scheduler.affinity_terms import AffinityTerm, TermError, pod_affinity_info
from kubetaint.scheduler.events import ASSIGNED_POD, NODE, ActionType, ClusterEvent, ClusterEventWithHint
from kubetaint.scheduler.extension_points import (
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
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.plugins.inter_pod_affinity.common import pod_labels
from kubetaint.scheduler.plugins.inter_pod_affinity.filtering import Filtering
from kubetaint.scheduler.plugins.inter_pod_affinity.scoring import Scoring
from kubetaint.scheduler.podinfo import PodInfo

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1


def _pod_matches_all(terms: Sequence[AffinityTerm], pod: Mapping[str, Any]) -> bool:
    """podMatchesAllAffinityTerms of a pod object (no namespace labels)."""
    if not terms:
        return False
    namespace = (pod.get("metadata") or {}).get("namespace") or "default"
    labels = pod_labels(pod)
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


class InterPodAffinity(
    Filtering,
    Scoring,
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

    def listers(self) -> ClusterListers:
        """The handle's listers (the scheduler's cache among them)."""
        assert self.handle is not None, "InterPodAffinity needs a handle"
        return self.handle

    def merge_namespaces(self, term: AffinityTerm) -> AffinityTerm:
        """mergeAffinityTermNamespacesIfNotEmpty: a namespaceSelector with requirements becomes
        the namespaces it selects now (an empty one keeps selecting every namespace)."""
        selector = term.namespace_selector
        if selector is None or selector.empty:
            return term
        return term.with_namespaces(self.listers().namespaces_selected(selector))
