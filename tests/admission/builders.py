"""Builders for admission tests: pods, namespaces, classes and request attributes."""

from __future__ import annotations

import json
from typing import Any

from kubetaint.admission import CREATE, Attributes, DictLookup

JSONDict = dict[str, Any]


def container(name: str = "c", requests: JSONDict | None = None, limits: JSONDict | None = None) -> JSONDict:
    resources: JSONDict = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"name": name, "image": "busybox", "resources": resources} if resources else {"name": name}


def pod(
    name: str = "p",
    namespace: str = "ns",
    *,
    containers: list[JSONDict] | None = None,
    init_containers: list[JSONDict] | None = None,
    tolerations: list[JSONDict] | None = None,
    **spec: Any,
) -> JSONDict:
    body: JSONDict = {"containers": containers if containers is not None else [container()]}
    if init_containers is not None:
        body["initContainers"] = init_containers
    if tolerations is not None:
        body["tolerations"] = tolerations
    body.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": body,
    }


def best_effort_pod(**kwargs: Any) -> JSONDict:
    return pod(containers=[container()], **kwargs)


def burstable_pod(**kwargs: Any) -> JSONDict:
    return pod(containers=[container(requests={"cpu": "500m"}, limits={"cpu": "1"})], **kwargs)


def guaranteed_pod(**kwargs: Any) -> JSONDict:
    res = {"cpu": "1", "memory": "1Gi"}
    return pod(containers=[container(requests=res, limits=res)], **kwargs)


def namespace(
    name: str = "ns",
    *,
    defaults: list[JSONDict] | str | None = None,
    whitelist: list[JSONDict] | str | None = None,
) -> JSONDict:
    annotations: dict[str, str] = {}
    if defaults is not None:
        annotations["scheduler.alpha.kubernetes.io/defaultTolerations"] = (
            defaults if isinstance(defaults, str) else json.dumps(defaults)
        )
    if whitelist is not None:
        annotations["scheduler.alpha.kubernetes.io/tolerationsWhitelist"] = (
            whitelist if isinstance(whitelist, str) else json.dumps(whitelist)
        )
    meta: JSONDict = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def priority_class(name: str, value: int, *, default: bool = False, policy: str | None = None) -> JSONDict:
    pc: JSONDict = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}}
    pc["value"] = value
    if default:
        pc["globalDefault"] = True
    if policy is not None:
        pc["preemptionPolicy"] = policy
    return pc


def runtime_class(
    name: str, *, overhead: JSONDict | None = None, scheduling: JSONDict | None = None
) -> JSONDict:
    rc: JSONDict = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}}
    rc["handler"] = name
    if overhead is not None:
        rc["overhead"] = overhead
    if scheduling is not None:
        rc["scheduling"] = scheduling
    return rc


def node(name: str = "n1", taints: list[JSONDict] | None = None) -> JSONDict:
    spec: JSONDict = {"taints": taints} if taints is not None else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec}


def pod_create(obj: JSONDict, **kwargs: Any) -> Attributes:
    meta = obj.get("metadata") or {}
    return Attributes(
        CREATE, "pods", obj, namespace=meta.get("namespace", ""), name=meta.get("name", ""), **kwargs
    )


#: Resource (plural) of each kind admission reads.
KIND_RESOURCES = {
    "Namespace": "namespaces",
    "PriorityClass": "priorityclasses",
    "RuntimeClass": "runtimeclasses",
    "Node": "nodes",
    "Pod": "pods",
}


def lookup(*objects: JSONDict) -> DictLookup:
    """The objects indexed by the resource of their kind."""
    found = DictLookup()
    for obj in objects:
        found.add(KIND_RESOURCES[obj["kind"]], obj)
    return found


def tol(
    key: str = "", operator: str = "", value: str = "", effect: str = "", seconds: int | None = None
) -> JSONDict:
    """A toleration with only its non-empty fields, as the API stores it."""
    t: JSONDict = {
        k: v for k, v in (("key", key), ("operator", operator), ("value", value), ("effect", effect)) if v
    }
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return t
