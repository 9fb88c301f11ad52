"""NodeUnschedulable: cordoned nodes reject pods that don't tolerate the synthetic
node.kubernetes.io/unschedulable:NoSchedule taint
(mirrors pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.core.matching import tolerations_tolerate_taint
from kubetaint.scheduler.cache import BoolArray, Cache
from kubetaint.scheduler.events import NODE, UNSCHEDULED_POD, ActionType, ClusterEvent, ClusterEventWithHint
from kubetaint.scheduler.extension_points import (
    CycleState,
    EnqueueExtensions,
    FilterBatch,
    FilterPlugin,
    Plugin,
)
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.podinfo import PodInfo, pod_key
from kubetaint.scheduler.status import SUCCESS, Code, Status

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def tolerates_unschedulable(pi: PodInfo) -> bool:
    return tolerations_tolerate_taint(pi.tolerations, UNSCHEDULABLE_TAINT, False)[0]


def _after_node_change(pi: PodInfo, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    if new is None:
        return False
    was = old is not None and bool((old.get("spec") or {}).get("unschedulable"))
    now = bool((new.get("spec") or {}).get("unschedulable"))
    return (old is None or was) and not now


def _after_toleration_change(
    pi: PodInfo, _old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
) -> bool:
    """isSchedulableAfterPodTolerationChange: the pending pod's own update, when its tolerations now
    tolerate the unschedulable taint (tolerations are only ever added)."""
    if new is None or pod_key(new) != pi.key:
        return False
    tolerations = [t for t in (new.get("spec") or {}).get("tolerations") or () if isinstance(t, dict)]
    return tolerations_tolerate_taint(tolerations, UNSCHEDULABLE_TAINT, False)[0]


class NodeUnschedulable(Plugin, EnqueueExtensions, FilterPlugin, FilterBatch):
    name = names.NODE_UNSCHEDULABLE

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.Add | ActionType.UpdateNodeTaint),
                _after_node_change,
                signature=_any_pod,
            ),
            ClusterEventWithHint(
                ClusterEvent(UNSCHEDULED_POD, ActionType.UpdatePodToleration), _after_toleration_change
            ),
        ]

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        if not ni.unschedulable or tolerates_unschedulable(pi):
            return SUCCESS
        return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE)

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None:
        if tolerates_unschedulable(pi):
            return None
        return ~cache.unschedulable


def _any_pod(_pi: PodInfo) -> int:
    """The node-change answer is the same for every pod."""
    return 0
