"""Builders for control-plane tests: a plane on a virtual clock and a memory store, nodes, pods,
and a store whose bindings fail as on a full disk."""

from __future__ import annotations

from typing import Any

from kubetaint.api import errors
from kubetaint.clock import VirtualClock
from kubetaint.clock.base import Clock
from kubetaint.controlplane import ControlPlane, ControlPlaneSettings
from kubetaint.store.interface import JSON
from kubetaint.store.memory import MemoryStore

DISK_FULL = "cannot write to /data/kubetaint.db: database or disk is full"


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


class BindingsFail(MemoryStore):
    """A memory store whose pod bindings (updates that set spec.nodeName) fail while `full`, as
    every write does on a full disk; `attempts` keeps the clock's time of each binding."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock)
        self.clock = clock
        self.full = True
        self.attempts: list[float] = []

    def update(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        if resource == "pods" and (obj.get("spec") or {}).get("nodeName"):
            old = self.get("pods", obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
            if not (old.get("spec") or {}).get("nodeName"):
                self.attempts.append(self.clock.now())
                if self.full:
                    raise errors.internal_error(DISK_FULL)
        return super().update(resource, obj, dry_run=dry_run)
