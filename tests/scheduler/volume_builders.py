"""Builders for the volume plugins' tables (upstream's st.MakePod().Volume/PVC, st.MakePersistentVolume
and the storage objects of the tests)."""

from __future__ import annotations

import random
from typing import Any

from kubetaint.clock.virtual import VirtualClock
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.podinfo import make_pod_info
from kubetaint.scheduler.scheduler import Scheduler
from kubetaint.scheduler.status import Status

JSON = dict[str, Any]


def node(name: str, labels: dict[str, str] | None = None, allocatable: dict[str, str] | None = None) -> JSON:
    alloc = {"cpu": "100", "memory": "100Gi", "pods": "1000", **(allocatable or {})}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "status": {"allocatable": alloc, "capacity": dict(alloc)},
    }


def pod(
    name: str = "p",
    *volumes: JSON,
    claims: tuple[str, ...] = (),
    namespace: str = "default",
    node_name: str = "",
    uid: str | None = None,
) -> JSON:
    spec: JSON = {"containers": [{"name": "c", "image": "x"}]}
    vols = list(volumes) + [
        {"name": f"claim-{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
    ]
    if vols:
        spec["volumes"] = vols
    if node_name:
        spec["nodeName"] = node_name
    meta = {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def pvc(
    name: str,
    *,
    namespace: str = "default",
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    storage: str | None = "1Gi",
    class_name: str | None = None,
    volume_name: str = "",
    bound: bool = False,
    annotations: dict[str, str] | None = None,
    phase: str | None = None,
    selector: JSON | None = None,
    deleting: bool = False,
) -> JSON:
    spec: JSON = {"accessModes": list(modes)}
    if storage is not None:
        spec["resources"] = {"requests": {"storage": storage}}
    if class_name is not None:
        spec["storageClassName"] = class_name
    if volume_name:
        spec["volumeName"] = volume_name
    if selector is not None:
        spec["selector"] = selector
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    meta: JSON = {"name": name, "namespace": namespace, "uid": f"pvc-uid-{name}"}
    if ann:
        meta["annotations"] = ann
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    out: JSON = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}
    if phase is not None:
        out["status"] = {"phase": phase}
    return out


def pv(
    name: str,
    *,
    storage: str = "1Gi",
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    class_name: str | None = None,
    labels: dict[str, str] | None = None,
    node_affinity: dict[str, list[str]] | None = None,
    claim: tuple[str, str] | None = None,
    phase: str = "Available",
    csi: tuple[str, str] | None = None,
) -> JSON:
    spec: JSON = {"capacity": {"storage": storage}, "accessModes": list(modes)}
    if csi is not None:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    else:
        spec["hostPath"] = {"path": "/tmp"}
    if class_name is not None:
        spec["storageClassName"] = class_name
    if node_affinity is not None:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": k, "operator": "In", "values": v} for k, v in node_affinity.items()
                        ]
                    }
                ]
            }
        }
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    meta: JSON = {"name": name}
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": phase},
    }


def storage_class(
    name: str, mode: str | None = "Immediate", provisioner: str = "p", topologies: list[JSON] | None = None
) -> JSON:
    out: JSON = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
    }
    if mode is not None:
        out["volumeBindingMode"] = mode
    if topologies is not None:
        out["allowedTopologies"] = topologies
    return out


def csi_node(name: str, **limits: int | None) -> JSON:
    drivers = []
    for driver, count in limits.items():
        entry: JSON = {"name": driver.replace("_", "."), "nodeID": name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": drivers},
    }


def scheduler_with(nodes: list[JSON], pods: list[JSON] = (), objects: list[JSON] = ()) -> Scheduler:  # type: ignore[assignment]
    sched = Scheduler(VirtualClock(), random.Random(0))
    for n in nodes:
        sched.add_node(n)
    for p in pods:
        sched.cache.add_pod(p)
    for obj in objects:
        assert sched.add_storage_object(obj), obj
    return sched


def run_plugin(sched: Scheduler, plugin: str, p: JSON) -> tuple[Status, dict[str, Status]]:
    """PreFilter, then (when it succeeded) Filter on every node of one plugin."""
    pi = make_pod_info(p)
    pl = sched.framework_for(pi).plugins[plugin]
    state = CycleState()
    nodes = sched.cache.node_list()
    pre = pl.pre_filter(state, pi, nodes)
    if not pre.is_success():
        return pre, {}
    return pre, {ni.name: pl.filter(state, pi, ni) for ni in nodes}
