"""Node and pod builders for scheduler tests."""

from __future__ import annotations

import random
from typing import Any

from kubetaint.clock.virtual import VirtualClock
from kubetaint.scheduler.cache import Cache
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


def cache_with_pods() -> tuple[Cache, list[dict[str, Any]]]:
    """A cache of two 8-CPU nodes holding four bound pods (one with an extended resource)."""
    cache = Cache()
    cache.add_node(node("n1", cpu="8"))
    cache.add_node(node("n2", cpu="8"))
    pods = [
        pod("a", cpu="500m", memory="1Gi", node_name="n1"),
        pod("b", cpu="1", node_name="n1", extra_requests={"example.com/gpu": "1"}),
        pod("c", memory="2Gi", node_name="n1"),
        pod("d", cpu="250m", node_name="n2"),
    ]
    for p in pods:
        cache.add_pod(p)
    return cache, pods


def cache_state(cache: Cache) -> Any:
    """Everything a cache knows, comparable with ==: per node its pods (key, pod, node name) in
    order, requested totals, non-zero requests and ports; the slot columns; the pod-to-node map;
    the assumed pods; the pods of unknown nodes; the generation."""
    nodes = {
        name: (
            [(key, pi.pod, pi.node_name) for key, pi in ni.pods.items()],
            dict(ni.requested),
            ni.nonzero_cpu,
            ni.nonzero_memory,
            dict(ni.used_ports),
        )
        for name, ni in cache.nodes.items()
    }
    slots = [ni.slot for ni in cache.nodes.values()]
    return (
        nodes,
        cache.req[slots].tolist(),
        cache.pod_count[slots].tolist(),
        dict(cache.pod_nodes),
        set(cache.assumed),
        {name: list(pods) for name, pods in cache._orphans.items()},
        cache.generation,
    )
