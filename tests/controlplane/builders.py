"""Builders for control-plane tests: a plane on a virtual clock and a memory store, nodes, pods."""

from __future__ import annotations

from typing import Any

from kubetaint.clock import VirtualClock
from kubetaint.controlplane import ControlPlane, ControlPlaneSettings
from kubetaint.store.memory import MemoryStore


def plane(settings: ControlPlaneSettings | None = None, seed: int = 1) -> ControlPlane:
    clock = VirtualClock()
    return ControlPlane(MemoryStore(clock), clock, settings=settings, seed=seed)


def node(name: str, *, zone: str = "", taints: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    spec: dict[str, Any] = {"taints": taints} if taints else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec}


def pod(name: str, *, tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx"}]}
    if tolerations:
        spec["tolerations"] = tolerations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
