"""NodeName: a pod naming spec.nodeName fits only that node
(mirrors pkg/scheduler/framework/plugins/nodename/node_name.go)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.scheduler.cache import BoolArray, Cache
from kubetaint.scheduler.events import NODE, ActionType, ClusterEvent, ClusterEventWithHint
from kubetaint.scheduler.extension_points import (
    CycleState,
    EnqueueExtensions,
    FilterBatch,
    FilterPlugin,
    Plugin,
)
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import SUCCESS, Code, Status

ERR_REASON = "node(s) didn't match the requested node name"


def _after_node_add(pi: PodInfo, _old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """isSchedulableAfterNodeAdded: the added node fits the pod's spec.nodeName (any node fits a
    pod without one)."""
    return new is not None and (not pi.node_name or (new.get("metadata") or {}).get("name") == pi.node_name)


class NodeName(Plugin, EnqueueExtensions, FilterPlugin, FilterBatch):
    name = names.NODE_NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(NODE, ActionType.Add), _after_node_add)]

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        if not pi.node_name or pi.node_name == ni.name:
            return SUCCESS
        return Status(Code.UnschedulableAndUnresolvable, ERR_REASON)

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None:
        if not pi.node_name:
            return None
        mask: BoolArray = cache.valid & False
        ni = cache.nodes.get(pi.node_name)
        if ni is not None:
            mask[ni.slot] = True
        return mask
