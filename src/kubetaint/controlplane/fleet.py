"""The hollow nodes: a hollow kubelet for every node the control plane runs (registered from a
manifest or adopted from a stored Node) that reports status, renews its Lease, runs the pods bound
to it and takes faults (mirrors kubemark's hollow-node fleet, see kubetaint.kubelet.pool).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubetaint.clock.base import Clock
from kubetaint.kubelet import HollowNodePool, NodeConfig
from kubetaint.store.informer import Informer
from kubetaint.store.interface import Store

ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"


def node_config(node: Mapping[str, Any]) -> NodeConfig:
    """The kubelet configuration that registers `node` (its labels, annotations, taints, capacity,
    InternalIP address and pod CIDR)."""
    meta = node.get("metadata") or {}
    status = node.get("status") or {}
    labels = dict(meta.get("labels") or {})
    kwargs: dict[str, Any] = {
        "name": str(meta["name"]),
        "labels": labels,
        "annotations": dict(meta.get("annotations") or {}),
        "register_with_taints": list((node.get("spec") or {}).get("taints") or []),
        "zone": str(labels.get(ZONE_LABEL) or ""),
    }
    internal_ip = next(
        (str(a.get("address")) for a in status.get("addresses") or [] if a.get("type") == "InternalIP"), ""
    )
    if internal_ip:
        kwargs["internal_ip"] = internal_ip
    pod_cidr = (node.get("spec") or {}).get("podCIDR")
    if pod_cidr:
        kwargs["pod_cidr"] = str(pod_cidr)
    if status.get("capacity"):
        kwargs["capacity"] = dict(status["capacity"])
    if status.get("allocatable"):
        kwargs["allocatable"] = dict(status["allocatable"])
    return NodeConfig(**kwargs)


class NodeFleet:
    """The hollow kubelet pool plus each node's zone (for zone faults)."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        pod_informer: Informer,
        store_for: Callable[[str], Store] | None = None,
    ) -> None:
        self.zones: dict[str, str] = {}  # node name -> zone
        self.pool = HollowNodePool(store, clock, pod_informer=pod_informer, store_for=store_for)

    def add(self, node: Mapping[str, Any]) -> None:
        """A kubelet that registers `node` (a manifest) when the fleet starts."""
        name = str(node["metadata"]["name"])
        self.zones[name] = str((node["metadata"].get("labels") or {}).get(ZONE_LABEL) or "")
        self.pool.add_node(node_config(node))

    def adopt(self, node: Mapping[str, Any]) -> None:
        """A stored Node: a hollow kubelet takes it over (keeping its labels and taints)."""
        name = str(node["metadata"]["name"])
        if name in self.pool.kubelets:
            self.zones[name] = str((node["metadata"].get("labels") or {}).get(ZONE_LABEL) or "")
            return
        self.add(node)

    def start(self) -> None:
        self.pool.start()

    def stop(self) -> None:
        """Cancel every heartbeat (the hollow nodes simply stop, as after `kill`)."""
        self.pool.shutdown()

    # faults ------------------------------------------------------------------------------------

    def nodes_in_zone(self, zone: str) -> list[str]:
        return sorted(name for name, z in self.zones.items() if z == zone)

    def fault(self, names: Iterable[str], fault: str) -> None:
        self.pool.fault(list(names), fault)
