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


FINALIZED_POD = """apiVersion: v1
kind: Pod
metadata: {name: %(name)s, finalizers: [example.com/keep]}
spec:
  containers: [{name: web, image: nginx}]
"""


def _phase_and_deletion(server: UpServer, name: str) -> tuple[str, str]:
    out = server.kubectl(
        "get", "pod", name, "-o", "jsonpath={.status.phase} {.metadata.deletionTimestamp}", ok=False
    ).stdout
    phase, _, stamp = out.partition(" ")
    return phase, stamp.strip()


def _drop_finalizers(server: UpServer, name: str) -> None:
    server.kubectl(
        "patch", "pod", name, "--type=json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]'
    )


def test_a_deleted_pod_with_finalizers_stays_terminating_until_they_are_removed(
    real_server: UpServer,
) -> None:
    real_server.kubectl("create", "-f", _write(real_server, "kept.yaml", FINALIZED_POD % {"name": "kept"}))
    eventually(lambda: _phase_and_deletion(real_server, "kept")[0] == "Running", "pod kept running")
    real_server.kubectl("delete", "pod", "kept", "--wait=false")
    _, stamp = eventually(
        lambda: (found := _phase_and_deletion(real_server, "kept"))[0] == "Succeeded" and found,
        "the kubelet's final status of pod kept",
    )
    assert stamp, "Terminating: the pod carries its deletionTimestamp"
    # a terminal pod prints its containers' state even while deleted (printPod shows Terminating
    # only for a pod not yet in a terminal phase)
    assert "Completed" in real_server.kubectl("get", "pod", "kept").stdout
    _drop_finalizers(real_server, "kept")
    eventually(
        lambda: "NotFound" in real_server.kubectl("get", "pod", "kept", ok=False).stderr, "pod kept removed"
    )


def test_an_evicted_pod_with_finalizers_keeps_its_disruption_target_condition(
    virtual_server: UpServer,
) -> None:
    """The e2e taint suite's "evicted pods carry the DisruptionTarget condition" finds the pod."""
    manifest = FINALIZED_POD % {"name": "disrupted"}
    manifest = manifest.replace("spec:\n", "spec:\n  nodeSelector: {kubernetes.io/hostname: node-1}\n")
    virtual_server.kubectl("create", "-f", _write(virtual_server, "disrupted.yaml", manifest))
    eventually(
        lambda: _phase_and_deletion(virtual_server, "disrupted")[0] == "Running", "pod disrupted running"
    )
    virtual_server.kubectl("taint", "nodes", "node-1", "gone=yes:NoExecute")
    try:
        virtual_server.kubetaint("clock", "advance", "1m")
        eventually(lambda: _phase_and_deletion(virtual_server, "disrupted")[1], "pod disrupted terminating")
        conditions = json.loads(
            virtual_server.kubectl("get", "pod", "disrupted", "-o", "jsonpath={.status.conditions}").stdout
        )
        target = next(c for c in conditions if c["type"] == "DisruptionTarget")
        assert (target["status"], target["reason"]) == ("True", "DeletionByTaintManager")
    finally:
        virtual_server.kubectl("taint", "nodes", "node-1", "gone-")
        _drop_finalizers(virtual_server, "disrupted")


def test_empty_taints_and_unschedulable_false_are_omitted_as_upstream_does(
    real_server: UpServer, core_v1: Any
) -> None:
    real_server.kubectl("taint", "nodes", "node-2", "once=yes:NoSchedule")
    real_server.kubectl(
        "patch", "node", "node-2", "--type=json", "-p", '[{"op":"remove","path":"/spec/taints/0"}]'
    )
    real_server.kubectl("patch", "node", "node-2", "--type=merge", "-p", '{"spec":{"unschedulable":false}}')
    spec = json.loads(real_server.kubectl("get", "node", "node-2", "-o", "json").stdout)["spec"]
    assert "taints" not in spec and "unschedulable" not in spec, spec
    raw = json.loads(core_v1.read_node("node-2", _preload_content=False).data)
    assert "taints" not in raw["spec"] and "unschedulable" not in raw["spec"]


def test_logs_and_exec_say_the_hollow_node_has_no_container_runtime(real_server: UpServer) -> None:
    real_server.kubectl("run", "talker", "--image=nginx")
    node = eventually(
        lambda: real_server.kubectl("get", "pod", "talker", "-o", "jsonpath={.spec.nodeName}").stdout,
        "talker bound",
    )
    eventually(lambda: "Running" in real_server.kubectl("get", "pod", "talker").stdout, "talker running")
    logs = real_server.kubectl("logs", "talker", ok=False)
    assert logs.returncode == 1
    assert (
        f'Error from server (BadRequest): pod "talker" is on hollow node "{node}", which has no container '
        'runtime: no logs of container "talker"'
    ) in logs.stderr
    executed = real_server.kubectl("exec", "talker", "--", "ls", ok=False)
    assert executed.returncode != 0
    assert "which has no container runtime" in executed.stderr, executed.stderr
    missing = real_server.kubectl("logs", "ghost", ok=False)
    assert 'error from server (NotFound): pods "ghost" not found in namespace "default"' in missing.stderr
    real_server.kubectl("delete", "pod", "talker", "--wait=false")
