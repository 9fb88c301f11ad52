"""End to end with the official Python `kubernetes` client against uvicorn: list, create, patch,
binding, watch (kubectl-wire.md §10)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

from .builders import make_app, make_store, namespace, node

kubernetes = pytest.importorskip(
    "kubernetes", reason="the official kubernetes Python client is not installed"
)
from kubernetes import client as k8s  # noqa: E402
from kubernetes import watch as k8s_watch  # noqa: E402


@pytest.fixture
def api() -> Iterator[tuple[MemoryStore, Any]]:
    clock = VirtualClock()
    store = make_store(clock)
    store.create("namespaces", namespace("default"))
    store.create("nodes", node("n1", labels={"kubernetes.io/hostname": "n1"}))
    with BackgroundServer(make_app(store, clock)) as server:
        config = k8s.Configuration(host=server.url)
        with k8s.ApiClient(config) as api_client:
            yield store, k8s.CoreV1Api(api_client)


def test_list_nodes_and_empty_lists_deserialize(api: tuple[MemoryStore, Any]) -> None:
    _, core = api
    nodes = core.list_node()
    assert [n.metadata.name for n in nodes.items] == ["n1"]
    assert nodes.items[0].status.node_info.kubelet_version == "v1.35.0"
    assert core.list_pod_for_all_namespaces(label_selector="app=web").items == []


def test_create_patch_bind_and_watch_a_pod(api: tuple[MemoryStore, Any]) -> None:
    store, core = api
    body = k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name="web", labels={"app": "web"}),
        spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="main", image="nginx")]),
    )
    created = core.create_namespaced_pod("default", body)
    assert created.status.phase == "Pending"
    start = created.metadata.resource_version
    core.patch_node(
        "n1", {"spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}}
    )
    assert store.get("nodes", "", "n1")["spec"]["taints"][0]["key"] == "dedicated"
    core.patch_node("n1", [{"op": "add", "path": "/metadata/labels/zone", "value": "a"}])
    assert store.get("nodes", "", "n1")["metadata"]["labels"]["zone"] == "a"
    binding = k8s.V1Binding(
        metadata=k8s.V1ObjectMeta(name="web"), target=k8s.V1ObjectReference(kind="Node", name="n1")
    )
    response = core.create_namespaced_binding("default", binding, _preload_content=False)
    assert response.status == 201
    assert core.read_namespaced_pod("web", "default").spec.node_name == "n1"
    stream = k8s_watch.Watch().stream(
        core.list_namespaced_pod, "default", resource_version=start, timeout_seconds=1
    )
    events = [(e["type"], e["object"].spec.node_name) for e in stream]
    assert events == [("MODIFIED", "n1")]


def test_api_exception_carries_the_status(api: tuple[MemoryStore, Any]) -> None:
    _, core = api
    with pytest.raises(k8s.ApiException) as err:
        core.read_namespaced_pod("ghost", "default")
    assert err.value.status == 404
    assert '"message":"pods \\"ghost\\" not found"' in err.value.body
