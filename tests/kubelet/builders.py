"""Builders for hollow-kubelet tests: a virtual clock, a memory store, nodes and pods."""

from __future__ import annotations

import itertools
from typing import Any

from kubetaint.clock import VirtualClock
from kubetaint.kubelet import HollowNodePool, KubeletSettings, NodeConfig
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]


def make_store(clock: VirtualClock) -> MemoryStore:
    counter = itertools.count()
    return MemoryStore(clock, uid_factory=lambda: f"uid-{next(counter):05d}")


def node_config(name: str, **overrides: Any) -> NodeConfig:
    values: dict[str, Any] = {"internal_ip": "192.168.0.10", "pod_cidr": "10.0.0.0/24", "zone": "zone-a"}
    values.update(overrides)
    return NodeConfig(name=name, **values)


def make_pool(
    names: list[str], settings: KubeletSettings | None = None, **overrides: Any
) -> tuple[VirtualClock, MemoryStore, HollowNodePool]:
    clock = VirtualClock()
    store = make_store(clock)
    pool = HollowNodePool(store, clock, [node_config(n, **overrides) for n in names], settings)
    return clock, store, pool


def container(
    name: str = "c", cpu: str | None = None, memory: str | None = None, limits: bool = False
) -> JSON:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    resources: JSON = {"requests": requests} if requests else {}
    if limits and requests:
        resources["limits"] = dict(requests)
    return {"name": name, "image": "registry.k8s.io/pause:3.10", "resources": resources}


def pod(
    name: str,
    node: str = "",
    *,
    namespace: str = "default",
    tolerations: list[JSON] | None = None,
    containers: list[JSON] | None = None,
    priority: int | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> JSON:
    body: JSON = {"containers": containers or [container()], **spec}
    if node:
        body["nodeName"] = node
    if tolerations is not None:
        body["tolerations"] = tolerations
    if priority is not None:
        body["priority"] = priority
    meta: JSON = {"name": name, "namespace": namespace, "labels": labels or {}}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


def taint_node(store: MemoryStore, name: str, *taints: JSON) -> None:
    node = store.get("nodes", "", name)
    spec = {**node.get("spec", {}), "taints": [*node.get("spec", {}).get("taints", []), *taints]}
    store.update("nodes", {**node, "spec": spec})


def condition(obj: JSON, ctype: str) -> JSON | None:
    for cond in obj.get("status", {}).get("conditions", []):
        if cond["type"] == ctype:
            return dict(cond)
    return None


def events(store: MemoryStore, reason: str | None = None) -> list[JSON]:
    items = store.list("events").items
    return [e for e in items if reason is None or e["reason"] == reason]
