"""kopf, the Python operator framework, against `kubetaint up`: its handlers see pods created
and deleted (holding them with its finalizer until its deletion handler ran, which the hollow
kubelet honours), a node's `spec.unschedulable` change and custom resources of a
CustomResourceDefinition (a child ConfigMap it owns, which the garbage collector removes with
its owner; the handlers' results in the status subresource), and it stops cleanly. The operator
(kopf_operator.py beside this file) runs as `kopf run --standalone` in its own process."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..harness import START_TIMEOUT, UpServer, eventually
from .checks import NODE, namespace, pod

NS = "kopf"
OPERATOR = Path(__file__).with_name("kopf_operator.py")


class Operator:
    def __init__(self, proc: subprocess.Popen[str], log: Path) -> None:
        self.proc = proc
        self.log = log

    def output(self) -> str:
        return self.log.read_text()


#: kopf's own example CRD (examples/crd.yaml of kopf), served with a status subresource
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "kopfexamples.kopf.dev"},
    "spec": {
        "group": "kopf.dev",
        "scope": "Namespaced",
        "names": {
            "plural": "kopfexamples",
            "singular": "kopfexample",
            "kind": "KopfExample",
            "shortNames": ["kex"],
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
}


@pytest.fixture(scope="module")
def api(cluster: UpServer) -> Iterator[Any]:
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=str(cluster.kubeconfig))
    client.CoreV1Api(api_client).create_namespace(namespace(NS))
    extensions = client.ApiextensionsV1Api(api_client)
    extensions.create_custom_resource_definition(CRD)

    def established() -> bool:
        conditions = (
            extensions.read_custom_resource_definition(CRD["metadata"]["name"]).status.conditions or []
        )
        return any(c.type == "Established" and c.status == "True" for c in conditions)

    eventually(established, "the CRD to be established")
    try:
        yield api_client
    finally:
        api_client.close()


@pytest.fixture(scope="module")
def core(api: Any) -> Any:
    from kubernetes import client

    return client.CoreV1Api(api)


@pytest.fixture(scope="module")
def operator(cluster: UpServer, core: Any) -> Iterator[Operator]:
    log = cluster.workdir / "kopf.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kopf", "run", "--standalone", "--namespace", NS, str(OPERATOR)],
            env=cluster.env,
            cwd=cluster.workdir,
            stdout=sink,
            stderr=subprocess.STDOUT,
            text=True,
        )
    running = Operator(proc, log)
    try:
        eventually(lambda: "Initial authentication has finished" in running.output(), "kopf to log in")
        yield running
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=START_TIMEOUT)


def _annotations(obj: Any) -> dict[str, str]:
    return dict(obj.metadata.annotations or {})


def test_a_created_pod_is_handled_and_held_by_the_finalizer(core: Any, operator: Operator) -> None:
    core.create_namespaced_pod(NS, pod("handled", kopf="watched"))

    def seen() -> Any:
        current = core.read_namespaced_pod("handled", NS)
        return current if "kopf.test/seen" in _annotations(current) else None

    handled = eventually(seen, "kopf's creation handler")
    assert _annotations(handled)["kopf.test/seen"] == "created"
    assert handled.metadata.finalizers == ["kopf.zalando.org/KopfFinalizerMarker"]


def test_a_deleted_pod_goes_once_the_deletion_handler_released_it(core: Any, operator: Operator) -> None:
    core.create_namespaced_pod(NS, pod("released", kopf="watched"))
    eventually(lambda: core.read_namespaced_pod("released", NS).metadata.finalizers, "kopf's finalizer")
    core.delete_namespaced_pod("released", NS)
    eventually(
        lambda: not core.list_namespaced_pod(NS, field_selector="metadata.name=released").items,
        "the pod to go",
    )
    assert "[kopf/released] cleaning up after released" in operator.output()


def test_a_node_cordoned_and_uncordoned_is_seen(core: Any, operator: Operator) -> None:
    def annotation() -> str | None:
        return _annotations(core.read_node(NODE)).get("kopf.test/unschedulable")

    core.patch_node(NODE, {"spec": {"unschedulable": True}})
    assert eventually(lambda: annotation() == "true", "kopf to see the cordon")
    core.patch_node(NODE, {"spec": {"unschedulable": None}})
    assert eventually(lambda: annotation() == "false", "kopf to see the uncordon")


def test_a_custom_resource_gets_its_child_and_status(api: Any, core: Any, operator: Operator) -> None:
    from kubernetes import client

    custom = client.CustomObjectsApi(api)
    example = {
        "apiVersion": "kopf.dev/v1",
        "kind": "KopfExample",
        "metadata": {"name": "kex1"},
        "spec": {"field": "a"},
    }
    created = custom.create_namespaced_custom_object("kopf.dev", "v1", NS, "kopfexamples", example)

    def child() -> Any:
        found = core.list_namespaced_config_map(NS, field_selector="metadata.name=kex1-child").items
        return found[0] if found else None

    owned = eventually(child, "kopf's child ConfigMap")
    assert owned.data == {"field": "a"}
    assert [(o.kind, o.name, o.uid) for o in owned.metadata.owner_references] == [
        ("KopfExample", "kex1", created["metadata"]["uid"])
    ]

    def status() -> Any:
        return custom.get_namespaced_custom_object("kopf.dev", "v1", NS, "kopfexamples", "kex1").get("status")

    assert eventually(lambda: (status() or {}).get("example_created"), "kopf's result in the status") == {
        "child": "kex1-child"
    }
    custom.patch_namespaced_custom_object(
        "kopf.dev", "v1", NS, "kopfexamples", "kex1", {"spec": {"field": "b"}}
    )
    eventually(lambda: (status() or {}).get("field") == "b", "kopf's field handler")


def test_the_child_of_a_deleted_custom_resource_is_garbage_collected(
    api: Any, core: Any, operator: Operator
) -> None:
    from kubernetes import client

    custom = client.CustomObjectsApi(api)
    example = {
        "apiVersion": "kopf.dev/v1",
        "kind": "KopfExample",
        "metadata": {"name": "kex2"},
        "spec": {"field": "a"},
    }
    custom.create_namespaced_custom_object("kopf.dev", "v1", NS, "kopfexamples", example)

    def child() -> Any:
        found = core.list_namespaced_config_map(NS, field_selector="metadata.name=kex2-child").items
        return found[0] if found else None

    eventually(child, "kopf's child ConfigMap")
    custom.delete_namespaced_custom_object("kopf.dev", "v1", NS, "kopfexamples", "kex2")
    eventually(lambda: child() is None, "the garbage collector to remove the child with its owner")


def test_the_operator_ran_without_errors_and_stops_cleanly(operator: Operator) -> None:
    operator.proc.send_signal(signal.SIGTERM)
    assert operator.proc.wait(timeout=START_TIMEOUT) == 0
    output = operator.output()
    assert "Traceback" not in output
    assert [line for line in output.splitlines() if "[ERROR" in line or "[WARNING" in line] == []
