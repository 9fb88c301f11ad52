"""What PodTopologySpread's filtering and scoring share (mirrors
pkg/scheduler/framework/plugins/podtopologyspread/common.go): the internal constraint
(topologySpreadConstraint) built from the pod's or the default constraints
(filterTopologySpreadConstraints), the node's topology keys (nodeLabelsMatchSpreadConstraints),
the pods a constraint counts per node (countPodsMatchSelector, from `scheduler.pod_index`) and
the nodes it includes (matchNodeInclusionPolicies), and `SpreadPlugin`, what the filtering and
scoring halves read of the plugin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from kubetaint.api.selectors import LabelSelector, Requirement
from kubetaint.core.matching import do_not_schedule_taints_filter, find_matching_untolerated_taint
from kubetaint.scheduler.affinity_terms import _selector, label_matcher
from kubetaint.scheduler.cache import BoolArray, Cache
from kubetaint.scheduler.listers import ClusterListers
from kubetaint.scheduler.plugins.node_affinity import required_matcher
from kubetaint.scheduler.pod_index import Counter, PodIndex, required_pair
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.resources import InputError
from kubetaint.scheduler.status import Code, Status
from kubetaint.speed.reference import reference_mode

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR, IGNORE = "Honor", "Ignore"
SKIP = Status(Code.Skip)


@dataclass(frozen=True)
class Constraint:
    """topologySpreadConstraint: the internal version with the selector parsed."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None  # None selects nothing
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


class SpreadPlugin(Protocol):
    """What filtering.py and scoring.py read of the plugin (plugin.py's PodTopologySpread)."""

    enable_cmp: bool
    system_defaulted: bool

    def constraints(self, pi: PodInfo, action: str) -> list[Constraint]: ...

    def listers(self) -> ClusterListers: ...


def pod_labels(pod: Mapping[str, Any]) -> Mapping[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


def node_labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    return (node.get("metadata") or {}).get("labels") or {}


def selects(c: Constraint, labels: Mapping[str, str]) -> bool:
    return c.selector is not None and label_matcher(c.selector)(labels)


def has_topology_keys(node: Mapping[str, Any], constraints: Sequence[Constraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints: the node has every constraint's topology key."""
    labels = node_labels(node)
    return all(c.topology_key in labels for c in constraints)


def filter_constraints(raw: Sequence[Any], labels: Mapping[str, str], action: str) -> list[Constraint]:
    """filterTopologySpreadConstraints: the constraints of one whenUnsatisfiable, with the pod's
    values of matchLabelKeys merged into the selector."""
    out: list[Constraint] = []
    for c in raw:
        if not isinstance(c, Mapping) or c.get("whenUnsatisfiable") != action:
            continue
        selector = _selector(c.get("labelSelector"))
        match_keys = [k for k in c.get("matchLabelKeys") or () if isinstance(k, str) and k in labels]
        if match_keys:
            extra: tuple[Requirement, ...] = tuple((k, "=", (labels[k],)) for k in match_keys)
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


def counter(index: PodIndex, pi: PodInfo, c: Constraint) -> Counter:
    """The index's counter of the pods countPodsMatchSelector counts per node: same namespace,
    not terminating, selected."""
    selector, namespace = c.selector, pi.namespace
    key = ("spread", namespace, None if selector is None else selector.requirements)
    known = index.known_counter(key)
    if known is not None:
        return known
    labels_match = None if selector is None else label_matcher(selector)
    pair = required_pair(selector)
    if pair is not None and selector is not None and len(selector.requirements) == 1 and not reference_mode():
        # the index offers this counter only pods with the label pair, which is all the
        # selector asks for: the labels need no second look (in reference mode they are matched)

        def match_in_pair(p: PodInfo) -> bool:
            if p.namespace != namespace:
                return False
            meta = p.pod.get("metadata")
            return not (meta.get("deletionTimestamp") if type(meta) is dict else False)

        return index.counter(key, match_in_pair, pair)

    def match(p: PodInfo) -> bool:
        if labels_match is None or p.namespace != namespace:
            return False
        meta = p.pod.get("metadata") or {}
        return not meta.get("deletionTimestamp") and labels_match(meta.get("labels") or {})

    return index.counter(key, match, pair)


def spread_match(c: Constraint, namespace: str, p: PodInfo) -> bool:
    """countPodsMatchSelector's test of one pod (for a node copy the index does not hold)."""
    if c.selector is None or p.namespace != namespace:
        return False
    if (p.pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return c.selector.matches(pod_labels(p.pod))


def inclusion(
    pi: PodInfo, cache: Cache, constraints: Sequence[Constraint], enable_cmp: bool
) -> dict[tuple[str, str], BoolArray]:
    """matchNodeInclusionPolicies per (nodeAffinityPolicy, nodeTaintsPolicy) in use, over slots
    (a pair under which every node is included, the usual, has no mask)."""
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
                            t, pi.tolerations, do_not_schedule_taints_filter, enable_cmp
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
