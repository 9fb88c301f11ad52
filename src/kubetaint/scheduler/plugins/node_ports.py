"""NodePorts: a pod's hostPorts must be free on the node
(mirrors pkg/scheduler/framework/plugins/nodeports/node_ports.go and framework HostPortInfo)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubetaint.scheduler.cache import BoolArray, Cache
from kubetaint.scheduler.events import ASSIGNED_POD, NODE, ActionType, ClusterEvent, ClusterEventWithHint
from kubetaint.scheduler.extension_points import (
    CycleState,
    EnqueueExtensions,
    FilterBatch,
    FilterPlugin,
    Plugin,
    PreFilterPlugin,
)
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.podinfo import HostPort, PodInfo, make_pod_info
from kubetaint.scheduler.status import SUCCESS, Code, Status

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_ANY = "0.0.0.0"


def conflicts(wanted: Sequence[HostPort], used: Mapping[HostPort, int]) -> bool:
    """HostPortInfo.CheckConflict: 0.0.0.0 clashes with every IP on the same protocol and port."""
    if not used:
        return False
    for ip, protocol, port in wanted:
        if ip == _ANY:
            if any(u_proto == protocol and u_port == port for _, u_proto, u_port in used):
                return True
        elif (ip, protocol, port) in used or (_ANY, protocol, port) in used:
            return True
    return False


def _after_pod_delete(pi: PodInfo, old: Mapping[str, Any] | None, _new: Mapping[str, Any] | None) -> bool:
    """isSchedulableAfterPodDeleted: a deleted pod that was bound or nominated and held a host port
    the pending pod wants."""
    if old is None:
        return False
    if not (old.get("spec") or {}).get("nodeName") and not (old.get("status") or {}).get("nominatedNodeName"):
        return False
    deleted = make_pod_info(old)
    return any(p in pi.host_ports for p in deleted.host_ports) or conflicts(
        pi.host_ports, dict.fromkeys(deleted.host_ports, 1)
    )


class NodePorts(Plugin, EnqueueExtensions, PreFilterPlugin, FilterPlugin, FilterBatch):
    name = names.NODE_PORTS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(ASSIGNED_POD, ActionType.Delete), _after_pod_delete),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.Add)),
        ]

    def pre_filter(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        return SUCCESS if pi.host_ports else Status(Code.Skip)

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        if conflicts(pi.host_ports, ni.used_ports):
            return Status(Code.Unschedulable, ERR_REASON)
        return SUCCESS

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None:
        if not pi.host_ports:
            return None
        nodes = cache.slot_nodes
        return np.fromiter(
            (ni is not None and not conflicts(pi.host_ports, ni.used_ports) for ni in nodes),
            np.bool_,
            len(nodes),
        )
