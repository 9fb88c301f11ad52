"""Builders for the StatefulSet, Job and CronJob controller tests: a control plane on a virtual
clock with hollow nodes, and the workloads as Kubernetes JSON."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from controlplane.builders import node
from kubetaint.controlplane import ControlPlane
from kubetaint.core.workload_defaults import default_job, with_generated_selector

JSON = dict[str, Any]


def running_plane(*nodes: str, seed: int = 1) -> ControlPlane:
    """A started control plane (scheduler, controllers, hollow kubelets) with these nodes."""
    from controlplane.builders import plane as make_plane

    plane = make_plane(seed=seed)
    plane.ensure_system_namespaces()
    for name in nodes or ("n1",):
        plane.fleet.add(node(name))
    plane.start()
    return plane


def pod_template(
    restart_policy: str = "Always", annotations: dict[str, str] | None = None, **labels: str
) -> JSON:
    meta: JSON = {"labels": dict(labels)} if labels else {}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "metadata": meta,
        "spec": {"restartPolicy": restart_policy, "containers": [{"name": "c", "image": "busybox"}]},
    }


def job(name: str, *, run_seconds: float | None = None, exit_code: int | None = None, **spec: Any) -> JSON:
    annotations = {}
    if run_seconds is not None:
        annotations["kubetaint.io/run-seconds"] = str(run_seconds)
    if exit_code is not None:
        annotations["kubetaint.io/exit-code"] = str(exit_code)
    restart = spec.pop("restart_policy", "Never")
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": pod_template(restart, annotations), **spec},
    }


def statefulset(name: str, replicas: int, **spec: Any) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": pod_template(app=name),
            **spec,
        },
    }


def get(plane: ControlPlane, resource: str, name: str, namespace: str = "default") -> JSON:
    return copy.deepcopy(plane.store.get(resource, namespace, name))


def pods(plane: ControlPlane, namespace: str = "default") -> list[JSON]:
    return sorted(plane.store.list("pods", namespace=namespace).items, key=lambda p: p["metadata"]["name"])


def events(plane: ControlPlane, component: str, namespace: str = "default") -> list[tuple[str, str, str]]:
    """(type, reason, message) of the component's events, in creation order."""
    items = [
        e
        for e in plane.store.list("events", namespace=namespace).items
        if e["source"].get("component") == component
    ]
    items.sort(key=lambda e: (e.get("firstTimestamp") or "", int(e["metadata"]["resourceVersion"])))
    return [(e["type"], e["reason"], e["message"]) for e in items]


def conditions(obj: JSON) -> list[tuple[str, str, str, str]]:
    return [
        (c["type"], c["status"], c.get("reason", ""), c.get("message", ""))
        for c in (obj.get("status") or {}).get("conditions") or []
    ]


def create_job(plane: ControlPlane, manifest: JSON) -> JSON:
    """Create a Job as kube-apiserver does: defaulted, its uid known to its generated selector."""
    uid = str(uuid.UUID(int=plane.controller_rng.getrandbits(128), version=4))
    defaulted = default_job(copy.deepcopy(manifest))
    defaulted["metadata"]["uid"] = uid
    return plane.registry.create("jobs.batch", with_generated_selector(defaulted))
