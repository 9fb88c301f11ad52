"""DaemonSet ControllerRef claims on `kubetaint up` with the real kubectl: a bare pod carrying
the DaemonSet's labels on a node is adopted (its ownerReferences name the DaemonSet) instead of
getting a duplicate beside it, and relabelling a daemon pod releases it (ClaimPods)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

DAEMON_SET = """apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: OnDelete}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "agent:1"}]
"""

BARE_POD = """apiVersion: v1
kind: Pod
metadata: {name: bare, labels: {app: agent}}
spec:
  nodeName: %s
  containers: [{name: agent, image: "agent:1"}]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    up = UpServer(tmp_path_factory.mktemp("up-ds-claim"), "--nodes", "1").start()
    yield up
    up.kill()


def _pods(server: UpServer) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(server.kubectl("get", "pods", "-o", "json").stdout)["items"]
    return items


def _controller(pod: dict[str, Any]) -> tuple[str, str] | None:
    for ref in pod["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return ref["kind"], ref["name"]
    return None


def test_a_bare_pod_is_adopted_instead_of_duplicated_and_released_when_relabelled(server: UpServer) -> None:
    workers = ["-l", "!node-role.kubernetes.io/control-plane"]  # the DaemonSet runs on workers only
    node = server.kubectl("get", "nodes", *workers, "-o", "jsonpath={.items[0].metadata.name}").stdout.strip()
    pod_path = server.workdir / "bare.yaml"
    pod_path.write_text(BARE_POD % node)
    assert server.kubectl("apply", "-f", str(pod_path)).stdout.strip() == "pod/bare created"
    ds_path = server.workdir / "ds.yaml"
    ds_path.write_text(DAEMON_SET)
    assert server.kubectl("apply", "-f", str(ds_path)).stdout.strip() == "daemonset.apps/agent created"

    def adopted() -> bool | None:
        pod = json.loads(server.kubectl("get", "pod", "bare", "-o", "json").stdout)
        return True if _controller(pod) == ("DaemonSet", "agent") else None

    eventually(adopted, "the bare pod owned by the DaemonSet")
    uid = server.kubectl("get", "ds", "agent", "-o", "jsonpath={.metadata.uid}").stdout.strip()
    bare = json.loads(server.kubectl("get", "pod", "bare", "-o", "json").stdout)
    [ref] = bare["metadata"]["ownerReferences"]
    assert ref == {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "name": "agent",
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    status = json.loads(server.kubectl("get", "ds", "agent", "-o", "json").stdout)["status"]
    assert (status.get("desiredNumberScheduled"), status.get("currentNumberScheduled")) == (1, 1)
    assert [p["metadata"]["name"] for p in _pods(server)] == ["bare"]

    server.kubectl("label", "pod", "bare", "app=debug", "--overwrite")

    def released_and_replaced() -> bool | None:
        pods = {p["metadata"]["name"]: p for p in _pods(server)}
        replacements = [
            n for n, p in pods.items() if n != "bare" and _controller(p) == ("DaemonSet", "agent")
        ]
        return (
            True if "bare" in pods and _controller(pods["bare"]) is None and len(replacements) == 1 else None
        )

    eventually(released_and_replaced, "the relabelled pod released and a new daemon pod on its node")
