"""NodeInfo: a node plus the pods on it and their summed requests
(mirrors pkg/scheduler/framework/types.go NodeInfo, kept incrementally)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubetaint.scheduler.podinfo import HostPort, PodInfo
from kubetaint.scheduler.resources import CPU, MEMORY, PODS, Resources, allocatable_source, node_allocatable

Taint = dict[str, Any]
TaintKey = tuple[tuple[str, str, str], ...]


def taint_key(taints: list[Taint]) -> TaintKey:
    """The taints' (key, value, effect), in order (what a toleration is matched against)."""
    return tuple(
        (str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or "")) for t in taints
    )


class NodeInfo:
    """One node's scheduling state. `requested` sums pod requests, `nonzero_*` the scoring requests."""

    __slots__ = (
        "_allocatable_source",
        "allocatable",
        "allowed_pods",
        "labels",
        "name",
        "node",
        "nonzero_cpu",
        "nonzero_memory",
        "pods",
        "requested",
        "slot",
        "taint_key",
        "taint_set",
        "taints",
        "unschedulable",
        "used_ports",
    )

    def __init__(self, node: Mapping[str, Any], slot: int = -1, taint_set: int = 0) -> None:
        self.slot = slot
        self.taint_set = taint_set
        self.pods: dict[str, PodInfo] = {}
        self.requested: Resources = {}
        self.nonzero_cpu = 0
        self.nonzero_memory = 0
        self.used_ports: dict[HostPort, int] = {}
        self._allocatable_source: Mapping[str, Any] | None = None
        self.set_node(node)

    @property
    def allocatable_source(self) -> Mapping[str, Any] | None:
        """The quantities `allocatable` was parsed from (resources.allocatable_source of a node set)."""
        return self._allocatable_source

    def set_node(self, node: Mapping[str, Any]) -> None:
        meta = node.get("metadata") or {}
        spec = node.get("spec") or {}
        self.node: Mapping[str, Any] = node
        self.name: str = meta.get("name", "")
        self.labels: Mapping[str, str] = meta.get("labels") or {}
        self.taints: list[Taint] = list(spec.get("taints") or ())
        #: the taints' (key, value, effect): what tolerations are matched against, by value
        self.taint_key: TaintKey = taint_key(self.taints)
        self.unschedulable = bool(spec.get("unschedulable"))
        # a status update mostly carries the very quantities parsed last time: keep their parse
        source = allocatable_source(node)
        known = self._allocatable_source
        if known is None or (source is not known and source != known):
            self.allocatable: Resources = node_allocatable(node)
            self._allocatable_source = source
        self.allowed_pods = self.allocatable.get(PODS, 0)

    def add_pod(self, pi: PodInfo) -> None:
        self.pods[pi.key] = pi
        req = self.requested
        for name, amount in pi.requests.items():
            req[name] = req.get(name, 0) + amount
        self.nonzero_cpu += pi.nonzero.get(CPU, 0)
        self.nonzero_memory += pi.nonzero.get(MEMORY, 0)
        ports = self.used_ports
        for port in pi.host_ports:
            ports[port] = ports.get(port, 0) + 1

    def add_pods(self, pis: Iterable[PodInfo]) -> None:
        """`add_pod` of each pod in turn. Pods sharing their requests, nonzero and host ports
        objects (one template's spec facts, never changed) are summed once per group: integer
        totals, and every resource name and port first met in the same order (a group is met
        first at its first pod)."""
        pods = self.pods
        groups: dict[tuple[int, int, int], list[Any]] = {}  # ids -> [requests, nonzero, ports, count]
        for pi in pis:
            pods[pi.key] = pi
            ids = (id(pi.requests), id(pi.nonzero), id(pi.host_ports))
            group = groups.get(ids)
            if group is None:
                groups[ids] = [pi.requests, pi.nonzero, pi.host_ports, 1]
            else:
                group[3] += 1
        req = self.requested
        ports = self.used_ports
        for requests, nonzero, host_ports, count in groups.values():
            for name, amount in requests.items():
                req[name] = req.get(name, 0) + amount * count
            self.nonzero_cpu += nonzero.get(CPU, 0) * count
            self.nonzero_memory += nonzero.get(MEMORY, 0) * count
            for port in host_ports:
                ports[port] = ports.get(port, 0) + count

    def remove_pod(self, pi: PodInfo) -> bool:
        old = self.pods.pop(pi.key, None)
        if old is None:
            return False
        req = self.requested
        for name, amount in old.requests.items():
            req[name] = req.get(name, 0) - amount
        self.nonzero_cpu -= old.nonzero.get(CPU, 0)
        self.nonzero_memory -= old.nonzero.get(MEMORY, 0)
        ports = self.used_ports
        for port in old.host_ports:
            left = ports.get(port, 0) - 1
            if left > 0:
                ports[port] = left
            else:
                ports.pop(port, None)
        return True

    def clone(self) -> NodeInfo:
        """A copy whose pods and totals can change without touching this one (preemption dry runs)."""
        copy = NodeInfo.__new__(NodeInfo)
        for attr in NodeInfo.__slots__:
            setattr(copy, attr, getattr(self, attr))
        copy.pods = dict(self.pods)
        copy.requested = dict(self.requested)
        copy.used_ports = dict(self.used_ports)
        return copy

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"
