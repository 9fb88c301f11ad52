"""The PodTopologySpread plugin (mirrors pkg/scheduler/framework/plugins/podtopologyspread/
plugin.go): its arguments (the default constraints, System or List defaulting), the events that
may make a pod it rejected schedulable (EventsToRegister and the queueing hints) and the pod's
constraints (getConstraints: its own, else the defaults selecting by helper.DefaultSelector,
`default_selector`). Filtering (DoNotSchedule) is in filtering.py, scoring (ScheduleAnyway) in
scoring.py, what both share in common.py. A pod without constraints is skipped (upstream's Skip).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from kubetaint.scheduler.events import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint
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
from kubetaint.scheduler.plugins.default_selector import default_selector
from kubetaint.scheduler.plugins.pod_topology_spread.common import (
    DO_NOT_SCHEDULE,
    HONOR,
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    SCHEDULE_ANYWAY,
    Constraint,
    filter_constraints,
    has_topology_keys,
    node_labels,
    pod_labels,
    selects,
)
from kubetaint.scheduler.plugins.pod_topology_spread.filtering import Filtering
from kubetaint.scheduler.plugins.pod_topology_spread.scoring import Scoring
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.speed.memo import Memo

SYSTEM_DEFAULTING, LIST_DEFAULTING = "System", "List"
#: systemDefaultConstraints
SYSTEM_DEFAULT_CONSTRAINTS: tuple[Mapping[str, Any], ...] = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_TOPOLOGY_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)


def _uid(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("uid") or "")


def _involved(pod: Mapping[str, Any], pi: PodInfo) -> bool:
    """involvedInTopologySpreading: the pending pod itself, or a bound pod of its namespace."""
    if _uid(pod) == _uid(pi.pod):
        return True
    meta = pod.get("metadata") or {}
    bound = bool((pod.get("spec") or {}).get("nodeName"))
    return bound and (meta.get("namespace") or "default") == pi.namespace


def _default_key(pod: Mapping[str, Any], action: str, version: int) -> Hashable | None:
    """Speeds up the default constraints of the pods of one workload (off with
    KUBETAINT_REFERENCE=1, as every memo): what helper.DefaultSelector reads of a pod (its
    namespace, its labels and its controller's reference), with `action` and the listers'
    `selectors_version`; None when the pod's metadata is not plain."""
    meta = pod.get("metadata")
    if type(meta) is not dict:
        return None
    labels = meta.get("labels")
    if labels is not None and type(labels) is not dict:
        return None
    refs = meta.get("ownerReferences")
    owner: Hashable = None
    if refs:
        if type(refs) is not list:
            return None
        for ref in refs:
            if isinstance(ref, Mapping) and ref.get("controller"):
                owner = (ref.get("apiVersion"), ref.get("kind"), ref.get("name"))
                if not all(type(part) is str or part is None for part in owner):
                    return None
                break
    labels_key = tuple(labels.items()) if labels else ()
    if not all(type(v) is str for _, v in labels_key):
        return None
    return (action, version, meta.get("namespace") or "default", labels_key, owner)


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
        #: the default constraints per whenUnsatisfiable, parsed once (as upstream's New): a pod's
        #: default selector replaces their selector, so the pod's labels change nothing else
        self._defaults: dict[str, tuple[Constraint, ...]] = {
            action: tuple(filter_constraints(self.default_constraints, {}, action))
            for action in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
        }
        self.handle: ClusterListers | None = None
        #: A pod's default constraints by what helper.DefaultSelector reads of it (`_default_key`)
        self._default_constraints: Memo[Hashable, tuple[Constraint, ...]] = Memo(
            "scheduler.pod_topology_spread.default_constraints", 1 << 12
        )

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
            old_labels, new_labels = pod_labels(old), pod_labels(new)
            if old_labels == new_labels:
                return False
            return any(selects(c, old_labels) != selects(c, new_labels) for c in constraints)
        if new is not None:
            return any(selects(c, pod_labels(new)) for c in constraints)
        return old is not None and any(selects(c, pod_labels(old)) for c in constraints)

    def is_schedulable_after_node_change(
        self, pi: PodInfo, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
    ) -> bool:
        """isSchedulableAfterNodeChange: a node that now has (or no longer has) every topology key
        of the pending pod's constraints; an updated node with them all whose values of those keys
        or whose taints changed; an added node with them all; a deleted node that had them all."""
        constraints = self.constraints(pi, DO_NOT_SCHEDULE)
        old_matching = old is not None and has_topology_keys(old, constraints)
        new_matching = new is not None and has_topology_keys(new, constraints)
        if old is not None and new is not None:
            if old_matching != new_matching:
                return True
            old_labels, new_labels = node_labels(old), node_labels(new)
            return new_matching and (
                any(old_labels.get(c.topology_key) != new_labels.get(c.topology_key) for c in constraints)
                or (old.get("spec") or {}).get("taints") != (new.get("spec") or {}).get("taints")
            )
        if new is not None:
            return new_matching
        return old_matching

    def listers(self) -> ClusterListers:
        """The handle's listers (the scheduler's cache among them)."""
        assert self.handle is not None, "PodTopologySpread needs a handle"
        return self.handle

    def constraints(self, pi: PodInfo, action: str) -> list[Constraint]:
        """getConstraints / the PreScore constraints: the pod's own, else the defaults."""
        pod = pi.pod
        own = (pod.get("spec") or {}).get("topologySpreadConstraints") or ()
        if own:
            return filter_constraints(own, pod_labels(pod), action)
        defaults = self._defaults[action]
        if not defaults:
            return []
        handle = self.handle
        key = None if handle is None else _default_key(pod, action, handle.selectors_version())
        known = None if key is None else self._default_constraints.get(key)
        if known is not None:
            return list(known)
        selector = default_selector(pod, handle)
        made = (
            ()
            if selector.empty
            else tuple(
                Constraint(
                    c.max_skew,
                    c.topology_key,
                    selector,
                    c.min_domains,
                    c.node_affinity_policy,
                    c.node_taints_policy,
                )
                for c in defaults
            )
        )
        if key is not None:
            self._default_constraints.put(key, made)
        return list(made)
