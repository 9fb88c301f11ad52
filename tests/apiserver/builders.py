"""Builders for nodes, pods and the server under test (a memory store on a virtual clock)."""

from __future__ import annotations

import os
import random
from itertools import count
from pathlib import Path
from typing import Any

from starlette.applications import Starlette

from kubetaint.apiserver.app import create_app
from kubetaint.clock import VirtualClock
from kubetaint.registry import Registry
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
DISCOVERY_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)


def node(
    name: str,
    *,
    ready: str | None = "True",
    labels: dict[str, str] | None = None,
    unschedulable: bool = False,
    taints: list[JSON] | None = None,
    internal_ip: str = "",
) -> JSON:
    spec: JSON = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    status: JSON = {
        "nodeInfo": {
            "architecture": "amd64",
            "bootID": "",
            "containerRuntimeVersion": "containerd://1.7.0",
            "kernelVersion": "6.1.0",
            "kubeProxyVersion": "",
            "kubeletVersion": "v1.35.0",
            "machineID": "",
            "operatingSystem": "linux",
            "osImage": "Debian GNU/Linux 12",
            "systemUUID": "",
        }
    }
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": ready}]
    if internal_ip:
        status["addresses"] = [{"type": "InternalIP", "address": internal_ip}]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": status,
    }


def pod(
    name: str,
    namespace: str = "default",
    *,
    node_name: str = "",
    labels: dict[str, str] | None = None,
    phase: str = "Pending",
) -> JSON:
    spec: JSON = {"containers": [{"name": "main", "image": "nginx:1.25"}]}
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": spec,
        "status": {"phase": phase},
    }


def namespace(name: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name},
        "status": {"phase": "Active"},
    }


def make_store(clock: VirtualClock | None = None, history_size: int | None = None) -> MemoryStore:
    from kubetaint.store.interface import StoreOptions

    uids = count()
    options = StoreOptions(history_size=history_size) if history_size else None
    return MemoryStore(clock or VirtualClock(), options=options, uid_factory=lambda: f"uid-{next(uids)}")


def make_app(store: MemoryStore, clock: VirtualClock, registry: Registry | None = None) -> Starlette:
    return create_app(store, clock, registry, rng=random.Random(7), bookmark_interval=0.05)


def kubectl_env(server_url: str, home: Path) -> dict[str, str]:
    """The environment for running the real kubectl against `server_url`: a kubeconfig, HOME and
    a fresh KUBECACHEDIR, all under `home`."""
    kubeconfig = home / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: local\n  cluster: {{server: {server_url}}}\n"
        "contexts:\n- name: local\n  context: {cluster: local, user: local}\n"
        "users:\n- name: local\n  user: {}\ncurrent-context: local\n"
    )
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "KUBECONFIG": str(kubeconfig),
        "KUBECACHEDIR": str(home / "cache"),
    }
