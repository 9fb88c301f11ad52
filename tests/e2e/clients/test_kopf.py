"""kopf, the Python operator framework, against `kubetaint up`: its handlers see pods created
and deleted (holding them with its finalizer until its deletion handler ran, which the hollow
kubelet honours) and a node's `spec.unschedulable` change, and it stops cleanly. The operator
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


@pytest.fixture(scope="module")
def core(cluster: UpServer) -> Iterator[Any]:
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=str(cluster.kubeconfig))
    core_v1 = client.CoreV1Api(api_client)
    core_v1.create_namespace(namespace(NS))
    try:
        yield core_v1
    finally:
        api_client.close()


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


def test_the_operator_ran_without_errors_and_stops_cleanly(operator: Operator) -> None:
    operator.proc.send_signal(signal.SIGTERM)
    assert operator.proc.wait(timeout=START_TIMEOUT) == 0
    output = operator.output()
    assert "Traceback" not in output
    assert [line for line in output.splitlines() if "[ERROR" in line or "[WARNING" in line] == []
