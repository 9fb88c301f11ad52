"""Cluster events and queueing hints (mirrors pkg/scheduler/framework/events.go and types.go ClusterEvent).

A plugin registers the events that may make a pod it rejected schedulable, each with a hint function
deciding, for one pod and one event, whether to requeue it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import IntFlag
from typing import Any

from kubetaint.scheduler.podinfo import PodInfo

NODE = "Node"
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
        if self.resource not in (WILDCARD, other.resource):
            return False
        return bool(self.action & other.action)


#: A queueing hint: (pending pod, old object, new object) -> requeue?
QueueingHintFn = Callable[[PodInfo, Mapping[str, Any] | None, Mapping[str, Any] | None], bool]


def always_queue(_pod: PodInfo, _old: Mapping[str, Any] | None, _new: Mapping[str, Any] | None) -> bool:
    return True


@dataclass(frozen=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn = always_queue


FORCE_ACTIVATE = ClusterEvent(WILDCARD, ActionType.All, "ForceActivate")
UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ActionType.All, "UnschedulableTimeout")


def node_change_actions(old: Mapping[str, Any], new: Mapping[str, Any]) -> ActionType:
    """NodeSchedulingPropertiesChange: which scheduling-relevant parts of a node changed."""
    action = ActionType(0)
    o_status, n_status = old.get("status") or {}, new.get("status") or {}
    o_spec, n_spec = old.get("spec") or {}, new.get("spec") or {}
    o_meta, n_meta = old.get("metadata") or {}, new.get("metadata") or {}
    if bool(o_spec.get("unschedulable")) != bool(n_spec.get("unschedulable")):
        action |= ActionType.UpdateNodeTaint
    if o_status.get("allocatable") != n_status.get("allocatable") or o_status.get("capacity") != n_status.get(
        "capacity"
    ):
        action |= ActionType.UpdateNodeAllocatable
    if (o_meta.get("labels") or {}) != (n_meta.get("labels") or {}):
        action |= ActionType.UpdateNodeLabel
    if (o_spec.get("taints") or []) != (n_spec.get("taints") or []):
        action |= ActionType.UpdateNodeTaint
    if _conditions(o_status) != _conditions(n_status):
        action |= ActionType.UpdateNodeCondition
    if (o_meta.get("annotations") or {}) != (n_meta.get("annotations") or {}):
        action |= ActionType.UpdateNodeAnnotation
    return action


def _conditions(status: Mapping[str, Any]) -> dict[str, Any]:
    return {c.get("type"): c.get("status") for c in status.get("conditions") or ()}


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
    if o_spec.get("containers") != n_spec.get("containers"):
        action |= ActionType.UpdatePodScaleDown
    return action or ActionType.UpdateOther
