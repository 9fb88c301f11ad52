"""The cluster's nodes: node groups expanded into `NAME-0..` round-robin over their zones, and a
hollow kubelet for every node (generated or given in `objects`) that reports status, renews its
Lease, runs the pods bound to it and takes scenario faults.

SEAM: until kubetaint.kubelet lands, nodes are created Ready by the simulator itself and faults
are refused at run time (they are still checked before the run).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubetaint.sim import components
from kubetaint.sim.scenario import ZONE_LABEL, NodeGroup
from kubetaint.store.interface import JSON

if TYPE_CHECKING:
    from kubetaint.sim.cluster import Cluster

HOSTNAME_LABEL = "kubernetes.io/hostname"


class FaultUnavailableError(RuntimeError):
    """A fault was requested but no hollow kubelets exist to take it."""


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
    """Generated nodes plus the hollow kubelet pool (when available)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.pool: Any = None
        self.zones: dict[str, str] = {}  # node name -> zone
        pool_module = components.optional(components.KUBELET_POOL)
        self._status_module = components.optional(components.KUBELET_NODE_STATUS)
        if pool_module is not None and self._status_module is not None:
            self.pool = pool_module.HollowNodePool(
                cluster.store, cluster.clock, pod_informer=cluster.informer("pods")
            )

    # loading -----------------------------------------------------------------------------------

    def load_groups(self, groups: Sequence[NodeGroup]) -> None:
        for group in groups:
            for name, zone, template in group_nodes(group):
                manifest = node_manifest(name, zone, template)
                self.zones[name] = zone
                if self.pool is not None:
                    self.pool.add_node(self._config(manifest))
                else:
                    self.cluster.create_object(_ready(manifest))

    def adopt(self, node: Mapping[str, Any]) -> None:
        """A Node given as an object: a hollow kubelet takes it over (keeping its labels and taints)."""
        name = str(node["metadata"]["name"])
        self.zones[name] = str((node["metadata"].get("labels") or {}).get(ZONE_LABEL) or "")
        if self.pool is not None and name not in self.pool.kubelets:
            self.pool.add_node(self._config(node))

    def _config(self, node: Mapping[str, Any]) -> Any:
        assert self._status_module is not None
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
        return self._status_module.NodeConfig(**kwargs)

    def start(self) -> None:
        if self.pool is not None:
            self.pool.start()

    # faults ------------------------------------------------------------------------------------

    def nodes_in_zone(self, zone: str) -> list[str]:
        return sorted(name for name, z in self.zones.items() if z == zone)

    def fault(self, names: Iterable[str], fault: str) -> None:
        if self.pool is None:
            raise FaultUnavailableError(
                f"fault {fault!r} needs hollow kubelets (kubetaint.kubelet has not landed)"
            )
        self.pool.fault(list(names), fault)


def _ready(manifest: JSON) -> JSON:
    """SEAM (no kubelet): a registered, Ready node as the kubelet would post it."""
    status = dict(manifest.get("status") or {})
    capacity = status.get("capacity") or {"cpu": "8", "memory": "32Gi", "pods": "110"}
    status.setdefault("capacity", capacity)
    status.setdefault("allocatable", dict(capacity))
    status.setdefault(
        "conditions",
        [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
            }
        ],
    )
    return {**manifest, "status": status}
