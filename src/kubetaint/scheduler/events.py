"""Cluster events and queueing hints (mirrors pkg/scheduler/framework/events.go and types.go ClusterEvent).

A plugin registers the events that may make a pod it rejected schedulable, each with a hint function
deciding, for one pod and one event, whether to requeue it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from enum import IntFlag
from typing import Any

from kubetaint.api.quantity import parse_quantity
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.resources import pod_requests

NODE = "Node"
POD = "Pod"
ASSIGNED_POD = "AssignedPod"
UNSCHEDULED_POD = "UnschedulablePod"
WILDCARD = "*"


class ActionType(IntFlag):
    """framework.ActionType bits."""

    Add = 1
    Delete = 2
    UpdateNodeAllocatable = 4
    UpdateNodeLabel = 8
    UpdateNodeTaint = 16
    UpdateNodeCondition = 32
    UpdateNodeAnnotation = 64
    UpdatePodLabel = 128
    UpdatePodScaleDown = 256
    UpdatePodToleration = 512
    UpdatePodSchedulingGatesEliminated = 1024
    UpdateOther = 2048
    All = 4095


Update = ActionType.All & ~(ActionType.Add | ActionType.Delete)


@dataclass(frozen=True)
class ClusterEvent:
    resource: str
    action: ActionType
    label: str = ""

    def matches(self, other: ClusterEvent) -> bool:
        """Whether this registered event covers the event `other` that happened."""
        if self.resource not in (WILDCARD, other.resource) and not (
            self.resource == POD and other.resource in (ASSIGNED_POD, UNSCHEDULED_POD)
        ):
            return False
        return bool(self.action & other.action)


#: A queueing hint: (pending pod, old object, new object) -> requeue?
QueueingHintFn = Callable[[PodInfo, Mapping[str, Any] | None, Mapping[str, Any] | None], bool]


def always_queue(_pod: PodInfo, _old: Mapping[str, Any] | None, _new: Mapping[str, Any] | None) -> bool:
    return True


@dataclass(frozen=True)
class ClusterEventWithHint:
    """A registered event and its QueueingHintFn. `signature`, when given, is a pod's key for the
    hint: pods with equal signatures get the same answer for the same event (so the queue asks
    once per signature)."""

    event: ClusterEvent
    hint: QueueingHintFn = always_queue
    signature: Callable[[PodInfo], Hashable] | None = None


UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ActionType.All, "UnschedulableTimeout")


_NO_ACTION = ActionType(0)
_TAINT, _ALLOCATABLE = int(ActionType.UpdateNodeTaint), int(ActionType.UpdateNodeAllocatable)
_LABEL, _CONDITION = int(ActionType.UpdateNodeLabel), int(ActionType.UpdateNodeCondition)
_ANNOTATION = int(ActionType.UpdateNodeAnnotation)


def node_change_actions(old: Mapping[str, Any], new: Mapping[str, Any]) -> ActionType:
    """NodeSchedulingPropertiesChange: which scheduling-relevant parts of a node changed.

    As upstream's extractors: a node uncordoned (spec.unschedulable true to false, not the
    reverse) or its taints changed is UpdateNodeTaint; status.allocatable changed by value
    (quantities compared semantically, capacity not read) is UpdateNodeAllocatable; labels,
    the conditions' type → status map and annotations their own bits. A status post that moves
    only heartbeat times raises nothing.

    (Parts that are the very same object in both are unchanged; the bits are gathered as an int:
    a status update of thousands of nodes compares just the status.)"""
    bits = 0
    o_spec, n_spec = old.get("spec") or {}, new.get("spec") or {}
    if o_spec is not n_spec and (
        (bool(o_spec.get("unschedulable")) and not n_spec.get("unschedulable"))
        or (o_spec.get("taints") or []) != (n_spec.get("taints") or [])
    ):
        bits |= _TAINT
    o_status, n_status = old.get("status") or {}, new.get("status") or {}
    if o_status is not n_status:
        if _resources_differ(o_status.get("allocatable"), n_status.get("allocatable")):
            bits |= _ALLOCATABLE
        if _conditions_differ(o_status.get("conditions") or (), n_status.get("conditions") or ()):
            bits |= _CONDITION
    o_meta, n_meta = old.get("metadata") or {}, new.get("metadata") or {}
    if o_meta is not n_meta:
        if _differ(o_meta.get("labels") or {}, n_meta.get("labels") or {}):
            bits |= _LABEL
        if _differ(o_meta.get("annotations") or {}, n_meta.get("annotations") or {}):
            bits |= _ANNOTATION
    return ActionType(bits) if bits else _NO_ACTION


def _conditions(status: Mapping[str, Any]) -> dict[str, Any]:
    return {c.get("type"): c.get("status") for c in status.get("conditions") or ()}


def _differ(old: object, new: object) -> bool:
    """`old != new`, answered at once for the very same dict (which equals itself: a dict
    compares its values by identity first)."""
    if old is new and type(old) is dict:
        return False
    return old != new


def _resources_differ(old: Any, new: Any) -> bool:
    """Whether two ResourceLists differ by equality.Semantic: the same names with quantities of
    equal value ("1" and "1000m" are equal; absent and empty lists are equal)."""
    if not _differ(old, new):
        return False
    old, new = old or {}, new or {}
    if not isinstance(old, Mapping) or not isinstance(new, Mapping) or old.keys() != new.keys():
        return True
    for name, amount in old.items():
        other = new[name]
        if amount == other:
            continue
        try:
            if parse_quantity(amount) != parse_quantity(other):
                return True
        except (TypeError, ValueError):
            return True
    return False


def _conditions_differ(old: Any, new: Any) -> bool:
    """Whether the conditions' type → status maps differ (`_conditions` of each compared). Lists
    of the same string types with the same statuses in the same order (a status post that moves
    only heartbeat times) make the same maps: told without building them."""
    if type(old) is list and type(new) is list and len(old) == len(new):
        for o, n in zip(old, new, strict=True):
            if type(o) is not dict or type(n) is not dict:
                break
            o_type = o.get("type")
            if type(o_type) is not str or o_type != n.get("type"):
                break
            o_status, n_status = o.get("status"), n.get("status")
            if o_status is not n_status and o_status != n_status:
                break
        else:
            return False
    return _conditions({"conditions": old}) != _conditions({"conditions": new})


def pod_change_actions(old: Mapping[str, Any], new: Mapping[str, Any]) -> ActionType:
    """PodSchedulingPropertiesChange for the parts kubetaint's plugins care about."""
    action = ActionType(0)
    o_spec, n_spec = old.get("spec") or {}, new.get("spec") or {}
    if ((old.get("metadata") or {}).get("labels") or {}) != ((new.get("metadata") or {}).get("labels") or {}):
        action |= ActionType.UpdatePodLabel
    if (o_spec.get("tolerations") or []) != (n_spec.get("tolerations") or []):
        action |= ActionType.UpdatePodToleration
    if o_spec.get("schedulingGates") and not n_spec.get("schedulingGates"):
        action |= ActionType.UpdatePodSchedulingGatesEliminated
    if _scaled_down(old, new):
        action |= ActionType.UpdatePodScaleDown
    return action or ActionType.UpdateOther


def _scaled_down(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """extractPodScaleDown: some resource the old pod requested is no longer requested, or less."""
    o_spec, n_spec = old.get("spec") or {}, new.get("spec") or {}
    if all(
        o_spec.get(part) is n_spec.get(part) or o_spec.get(part) == n_spec.get(part)
        for part in ("containers", "initContainers", "overhead", "resources")
    ):
        return False
    try:
        before, after = pod_requests(old), pod_requests(new)
    except ValueError:  # a malformed quantity: not a scale-down that can be told
        return False
    return any(name not in after or amount > after[name] for name, amount in before.items())
