"""The cluster's nodes: node groups expanded into `NAME-0..` round-robin over their zones, and a
hollow kubelet for every node (generated or given in `objects`) that reports status, renews its
Lease, runs the pods bound to it and takes scenario faults.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubetaint.kubelet import HollowNodePool, NodeConfig
from kubetaint.sim.scenario import ZONE_LABEL, NodeGroup
from kubetaint.store.interface import JSON

if TYPE_CHECKING:
    from kubetaint.sim.cluster import Cluster

HOSTNAME_LABEL = "kubernetes.io/hostname"


def group_nodes(group: NodeGroup) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, zone, template) of each node of a group: zones assigned round robin."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    for i, name in enumerate(group.node_names()):
        zone = group.zones[i % len(group.zones)] if group.zones else ""
        out.append((name, zone, group.template))
    return out


def node_manifest(name: str, zone: str, template: Mapping[str, Any]) -> JSON:
    """The Node a group member registers as (template labels/taints/capacity, hostname, zone)."""
    meta = dict(template.get("metadata") or {})
    labels = {**(meta.get("labels") or {}), HOSTNAME_LABEL: name}
    if zone:
        labels[ZONE_LABEL] = zone
    meta.update({"name": name, "labels": labels})
    spec = copy.deepcopy(dict(template.get("spec") or {}))
    if not spec.get("taints"):
        spec.pop("taints", None)
    status = copy.deepcopy(dict(template.get("status") or {}))
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}


class NodeFleet:
    """Generated nodes plus the hollow kubelet pool."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.zones: dict[str, str] = {}  # node name -> zone
        self.pool = HollowNodePool(cluster.registry, cluster.clock, pod_informer=cluster.informer("pods"))

    # loading -----------------------------------------------------------------------------------

    def load_groups(self, groups: Sequence[NodeGroup]) -> None:
        for group in groups:
            for name, zone, template in group_nodes(group):
                manifest = node_manifest(name, zone, template)
                self.zones[name] = zone
                self.pool.add_node(self._config(manifest))

    def adopt(self, node: Mapping[str, Any]) -> None:
        """A Node given as an object: a hollow kubelet takes it over (keeping its labels and taints)."""
        name = str(node["metadata"]["name"])
        self.zones[name] = str((node["metadata"].get("labels") or {}).get(ZONE_LABEL) or "")
        if name not in self.pool.kubelets:
            self.pool.add_node(self._config(node))

    def _config(self, node: Mapping[str, Any]) -> NodeConfig:
        meta = node.get("metadata") or {}
        status = node.get("status") or {}
        labels = dict(meta.get("labels") or {})
        zone = str(labels.get(ZONE_LABEL) or "")
        kwargs: dict[str, Any] = {
            "name": str(meta["name"]),
            "labels": labels,
            "annotations": dict(meta.get("annotations") or {}),
            "register_with_taints": list((node.get("spec") or {}).get("taints") or []),
            "zone": zone,
        }
        if status.get("capacity"):
            kwargs["capacity"] = dict(status["capacity"])
        if status.get("allocatable"):
            kwargs["allocatable"] = dict(status["allocatable"])
        return NodeConfig(**kwargs)

    def start(self) -> None:
        self.pool.start()

    # faults ------------------------------------------------------------------------------------

    def nodes_in_zone(self, zone: str) -> list[str]:
        return sorted(name for name, z in self.zones.items() if z == zone)

    def fault(self, names: Iterable[str], fault: str) -> None:
        self.pool.fault(list(names), fault)
