"""What every client checks, as data shared by the client modules: the objects they create and
the node taint they add and remove."""

from __future__ import annotations

from typing import Any

#: the worker node each client taints and cordons (the control plane is tainted already)
NODE = "node-1"
TAINT = {"key": "clients.kubetaint.io/check", "value": "yes", "effect": "NoSchedule"}


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": dict(data)}


def pod(name: str, **labels: str) -> dict[str, Any]:
    """A pod the scheduler places on a worker (tolerating nothing, so never on the control plane)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name, **labels}},
        "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]},
    }


def eviction(name: str, namespace_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace_name},
    }
