"""Builders for the workload controller tests: store, clock, workloads and pods as Kubernetes JSON."""

from __future__ import annotations

import copy
import itertools
import random
from typing import Any

from kubetaint.clock import VirtualClock
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.controllers.replicaset.owners import OwnerSelectorIndex
from kubetaint.store.informer import Informer
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]
APP = {"app": "web"}


def make_env() -> tuple[VirtualClock, MemoryStore, random.Random]:
    clock = VirtualClock()
    counter = itertools.count()
    store = MemoryStore(clock, uid_factory=lambda: f"uid-{next(counter):05d}")
    return clock, store, random.Random(1)


def template(labels: dict[str, str] | None = None, **spec: Any) -> JSON:
    return {
        "metadata": {"labels": dict(labels or APP)},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
    }


def replicaset(name: str, replicas: int, labels: dict[str, str] | None = None, **spec: Any) -> JSON:
    labels = labels or APP
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": template(labels),
            **spec,
        },
    }


def deployment(name: str, replicas: int, labels: dict[str, str] | None = None, **tspec: Any) -> JSON:
    labels = labels or APP
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": template(labels, **tspec),
        },
    }


def daemonset(name: str, labels: dict[str, str] | None = None, **tspec: Any) -> JSON:
    labels = labels or {"app": "agent"}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {"selector": {"matchLabels": dict(labels)}, "template": template(labels, **tspec)},
    }


def node(
    name: str, *, taints: list[JSON] | None = None, labels: dict[str, str] | None = None, ready: str = "True"
) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints} if taints else {},
        "status": {"conditions": [{"type": "Ready", "status": ready}]},
    }


def pod(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    node_name: str = "",
    phase: str = "Running",
    ready: bool = True,
    namespace: str = "default",
    owner: JSON | None = None,
    created: str | None = None,
    **extra_meta: Any,
) -> JSON:
    meta: JSON = {
        "name": name,
        "namespace": namespace,
        "labels": dict(APP if labels is None else labels),
        **extra_meta,
    }
    if owner is not None:
        meta["ownerReferences"] = [owner]
    if created is not None:
        meta["creationTimestamp"] = created
    status: JSON = {"phase": phase}
    if phase == "Running":
        status["conditions"] = [
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
    spec: JSON = {"containers": [{"name": "c", "image": "nginx"}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def owner_ref(obj: JSON, kind: str, api_version: str = "apps/v1") -> JSON:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def names(objs: list[JSON]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


def pods_of(store: MemoryStore, namespace: str = "default") -> list[JSON]:
    return store.list("pods", namespace=namespace).items


def events(store: MemoryStore, reason: str | None = None) -> list[JSON]:
    return [e for e in store.list("events").items if reason is None or e["reason"] == reason]


def daemon_pods_by_node_by_scan(pods: Any, uid: str) -> dict[str, list[JSON]]:
    """The DaemonSet controller's pods-by-node grouping worked out from scratch (every pod in the
    informer `pods`, in key order, controlled by `uid` and pinned to a node): what its
    event-maintained grouping must always equal."""
    from kubetaint.controllers.daemonset.placement import target_node_name
    from kubetaint.controllers.replicaset import podutil

    result: dict[str, list[JSON]] = {}
    for p in sorted(pods.items(), key=podutil.key_of):
        ref = podutil.controller_ref_of(p)
        target = target_node_name(p)
        if ref is not None and ref.get("uid") == uid and target is not None:
            result.setdefault(target, []).append(p)
    return result


def write_owner(
    store: Any, informer: Informer, op: str, i: int, namespace: str, selector: dict[str, Any] | None
) -> None:
    """One step of an owner history for ReplicaSet `rs{i}` in `namespace`: "delete" it (if there);
    create it with `selector` when missing; "status" writes its status (the selector object kept);
    any other op updates it in place with a copy of `selector` (a new object, equal or not)."""
    name = f"rs{i}"
    existing = informer.get(namespace, name)
    if op == "delete":
        if existing is not None:
            store.delete("replicasets.apps", namespace, name)
        return
    if existing is None:
        body = replicaset(name, 1)
        body["metadata"]["namespace"] = namespace
        body["spec"]["selector"] = copy.deepcopy(selector)
        store.create("replicasets.apps", body)
    elif op == "status":
        store.update("replicasets.apps", {**existing, "status": {"replicas": i}})
    else:
        spec = {**existing["spec"], "selector": copy.deepcopy(selector)}
        store.update("replicasets.apps", {**existing, "spec": spec})


def owner_index_state(index: PodOwnerIndex, *, versions: bool = True) -> tuple[Any, ...]:
    """Everything a PodOwnerIndex holds, as plain values to compare two indexes by (`versions`:
    with the owners' version counters, which only an index fed the same events can share)."""
    state: tuple[Any, ...] = (
        {owner: set(keys) for owner, keys in index.owned.items()},
        {owner: set(keys) for owner, keys in index.orphans.items()},
        {labels: set(keys) for labels, keys in index._orphan_labels.items()},
        dict(index._owner_of),
        dict(index._labels_of),
    )
    return (*state, dict(index._versions)) if versions else state


def owner_selector_index() -> tuple[MemoryStore, Informer, OwnerSelectorIndex]:
    """A fresh store with a started ReplicaSet informer and the owner index over it."""
    _, store, _ = make_env()
    informer = Informer(store, "replicasets.apps")
    owners = OwnerSelectorIndex(informer)
    informer.start()
    return store, informer, owners
