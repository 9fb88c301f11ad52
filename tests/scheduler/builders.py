"""Node and pod builders for scheduler tests."""

from __future__ import annotations

import random
from typing import Any

from kubetaint.clock.virtual import VirtualClock
from kubetaint.scheduler.scheduler import Scheduler


def node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "32Gi",
    pods: str = "110",
    taints: list[dict[str, Any]] | None = None,
    labels: dict[str, str] | None = None,
    unschedulable: bool = False,
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    spec: dict[str, Any] = {"taints": taints or []}
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": dict(alloc)},
    }


def pod(
    name: str,
    *,
    cpu: str | None = None,
    memory: str | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    node_name: str | None = None,
    priority: int | None = None,
    node_selector: dict[str, str] | None = None,
    affinity: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    extra_requests: dict[str, str] | None = None,
    start: str | None = None,
    namespace: str = "default",
) -> dict[str, Any]:
    requests: dict[str, str] = {**(extra_requests or {})}
    if cpu:
        requests["cpu"] = cpu
    if memory:
        requests["memory"] = memory
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}]}
    if tolerations:
        spec["tolerations"] = tolerations
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": f"uid-{name}",
        "labels": labels or {},
    }
    status: dict[str, Any] = {}
    if start:
        status["startTime"] = start
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict[str, Any]:
    out = {"key": key, "effect": effect}
    if value:
        out["value"] = value
    return out


def toleration(key: str = "", operator: str = "Equal", value: str = "", effect: str = "") -> dict[str, Any]:
    out = {"key": key, "operator": operator, "effect": effect}
    if value:
        out["value"] = value
    return out


def scheduler(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]] = (), seed: int = 1, **kw: Any
) -> Scheduler:  # type: ignore[assignment]
    s = Scheduler(VirtualClock(), random.Random(seed), **kw)
    for n in nodes:
        s.add_node(n)
    for p in pods:
        s.add_pod(p)
    return s
