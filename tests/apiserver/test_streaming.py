"""pods/log, exec, attach and portforward: kube-apiserver's answers up to the kubelet
(pkg/registry/core/pod/strategy.go LogLocation, streamLocation, validateContainer), then a 400
that says the hollow node has no container runtime."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.store.memory import MemoryStore

from .builders import pod

PODS = "/api/v1/namespaces/default/pods"


def two_containers(name: str) -> dict[str, Any]:
    obj = pod(name, node_name="node-1")
    obj["spec"]["containers"] = [{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx"}]
    obj["spec"]["initContainers"] = [{"name": "init", "image": "busybox"}]
    return obj


@pytest.fixture
def pods(store: MemoryStore) -> MemoryStore:
    store.create("pods", pod("placed", node_name="node-1"))
    store.create("pods", pod("pending"))
    store.create("pods", two_containers("pair"))
    return store


@pytest.mark.parametrize(
    ("method", "path", "code", "message"),
    [
        pytest.param("GET", "ghost/log", 404, 'pods "ghost" not found', id="logs of a missing pod"),
        pytest.param(
            "POST", "ghost/exec?command=ls", 404, 'pods "ghost" not found', id="exec into a missing pod"
        ),
        pytest.param(
            "GET",
            "placed/log",
            400,
            'pod "placed" is on hollow node "node-1", which has no container runtime: no logs of container "main"',
            id="logs of a pod on a hollow node",
        ),
        pytest.param(
            "POST",
            "placed/exec?command=ls&stdout=true",
            400,
            'pod "placed" is on hollow node "node-1", which has no container runtime: '
            'cannot exec into container "main"',
            id="exec into a pod on a hollow node",
        ),
        pytest.param(
            "POST",
            "placed/attach?container=main",
            400,
            'pod "placed" is on hollow node "node-1", which has no container runtime: '
            'cannot attach to container "main"',
            id="attach to a pod on a hollow node",
        ),
        pytest.param(
            "POST",
            "placed/portforward?ports=80",
            400,
            'pod "placed" is on hollow node "node-1", which has no container runtime: cannot forward ports',
            id="port forwarding to a pod on a hollow node",
        ),
        pytest.param(
            "GET",
            "placed/log?container=other",
            400,
            "container other is not valid for pod placed",
            id="a container not in the pod",
        ),
        pytest.param(
            "GET",
            "pair/log",
            400,
            "a container name must be specified for pod pair, choose one of: [init a b]",
            id="a pod of several containers needs a container name",
        ),
        pytest.param("GET", "pair/log?container=init", 400, "", id="an init container is a valid container"),
        pytest.param(
            "POST",
            "pending/exec?command=ls",
            400,
            "pod pending does not have a host assigned",
            id="exec into an unscheduled pod",
        ),
        pytest.param(
            "DELETE",
            "placed/log",
            405,
            "the server does not allow this method on the requested resource",
            id="log takes GET only",
        ),
    ],
)
def test_pod_subresources_answer_as_kube_apiserver_without_a_kubelet(
    client: TestClient, pods: MemoryStore, method: str, path: str, code: int, message: str
) -> None:
    response = client.request(method, f"{PODS}/{path}")
    assert response.status_code == code, response.text
    body = response.json()
    assert body["kind"] == "Status" and body["code"] == code
    if message:
        assert body["message"] == message
    else:
        assert "no container runtime" in body["message"]


def test_logs_of_an_unscheduled_pod_are_empty(client: TestClient, pods: MemoryStore) -> None:
    response = client.get(f"{PODS}/pending/log")
    assert (response.status_code, response.text) == (200, "")
