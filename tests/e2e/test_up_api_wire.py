"""What `kubetaint up` serves on the wire, as kube-apiserver does: field selectors on unset fields,
event names, discovery paths with a trailing slash, finalizers, omitted empty fields and the
pod subresources a hollow node cannot serve (real kubectl and the official Python client)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]


@pytest.fixture(scope="module")
def core_v1(real_server: UpServer) -> Iterator[Any]:
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=str(real_server.kubeconfig))
    try:
        yield client.CoreV1Api(api_client)
    finally:
        api_client.close()


def _write(server: UpServer, name: str, text: str) -> str:
    path = server.workdir / name
    path.write_text(text)
    return str(path)


def test_schedulable_nodes_are_listed_the_e2e_frameworks_way(real_server: UpServer, core_v1: Any) -> None:
    """GetReadySchedulableNodes lists with `spec.unschedulable=false`: nodes without the field match."""
    real_server.kubectl("cordon", "node-3")
    try:
        listed = core_v1.list_node(field_selector="spec.unschedulable=false")
        assert sorted(n.metadata.name for n in listed.items) == ["control-plane", "node-1", "node-2"]
        cordoned = real_server.kubectl(
            "get", "nodes", "--field-selector", "spec.unschedulable=true", "-o", "name"
        )
        assert cordoned.stdout.split() == ["node/node-3"]
    finally:
        real_server.kubectl("uncordon", "node-3")


def test_pods_without_host_network_match_host_network_false(real_server: UpServer) -> None:
    real_server.kubectl("run", "plain-net", "--image=nginx")
    selected = real_server.kubectl("get", "pods", "--field-selector", "spec.hostNetwork=false", "-o", "name")
    assert "pod/plain-net" in selected.stdout.split()
    assert (
        "plain-net"
        not in real_server.kubectl("get", "pods", "--field-selector", "spec.hostNetwork=true").stdout
    )
    real_server.kubectl("delete", "pod", "plain-net", "--wait=false")


def test_a_field_label_nodes_do_not_have_is_a_bad_request(real_server: UpServer) -> None:
    result = real_server.kubectl("get", "nodes", "--field-selector", "metadata.namespace=x", ok=False)
    assert result.returncode == 1
    assert "field label not supported: metadata.namespace" in result.stderr


def test_an_immediate_eviction_on_the_virtual_clock_keeps_every_event(virtual_server: UpServer) -> None:
    """The scheduler's Scheduled and TaintManagerEviction share one virtual instant: both are kept."""
    virtual_server.kubectl(
        "run",
        "evicted-now",
        "--image=nginx",
        "--overrides",
        '{"spec":{"nodeSelector":{"kubernetes.io/hostname":"node-2"}}}',
    )
    eventually(
        lambda: "Running" in virtual_server.kubectl("get", "pod", "evicted-now").stdout,
        "pod evicted-now running",
    )
    virtual_server.kubectl("taint", "nodes", "node-2", "now=yes:NoExecute")
    try:
        eventually(
            lambda: "evicted-now" not in virtual_server.kubectl("get", "pods", "-o", "name").stdout,
            "pod evicted-now evicted",
        )
        events = virtual_server.kubectl(
            "get", "events", "--field-selector", "involvedObject.name=evicted-now", "-o", "json"
        ).stdout
        reasons = [e["reason"] for e in json.loads(events)["items"]]
        assert "TaintManagerEviction" in reasons, reasons
        names = [e["metadata"]["name"] for e in json.loads(events)["items"]]
        assert all(re.fullmatch(r"evicted-now\.[0-9a-f]+", name) for name in names), names
    finally:
        virtual_server.kubectl("taint", "nodes", "node-2", "now-")


@pytest.mark.parametrize(("path", "kind"), [("/api/", "APIVersions"), ("/apis/", "APIGroupList")])
def test_discovery_roots_answer_with_a_trailing_slash(real_server: UpServer, path: str, kind: str) -> None:
    response = real_server.get(path)
    assert response.status_code == 200, response.text
    assert response.json()["kind"] == kind
    assert response.json() == real_server.get(path.rstrip("/")).json()
