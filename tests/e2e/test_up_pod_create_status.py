"""A pod created in-process by `kubetaint up`'s ReplicaSet controller, read with the real kubectl,
carries the status the pod strategy's PrepareForCreate gives every created pod (phase Pending and
its QoS class) before any kubelet runs it, as on a real cluster."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

#: Its pods select a node label no node has: they stay unscheduled, never reaching a kubelet.
REPLICA_SET = """apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: waits}
spec:
  replicas: 2
  selector: {matchLabels: {app: waits}}
  template:
    metadata: {labels: {app: waits}}
    spec:
      nodeSelector: {example.com/pool: none}
      containers:
      - name: c
        image: pause
        resources: {limits: {cpu: 100m, memory: 64Mi}}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    up = UpServer(tmp_path_factory.mktemp("up-pod-create"), "--nodes", "1").start()
    yield up
    up.kill()


def test_a_replica_sets_pod_reads_pending_with_its_qos_class(server: UpServer) -> None:
    path = server.workdir / "rs.yaml"
    path.write_text(REPLICA_SET)
    assert server.kubectl("apply", "-f", str(path)).stdout.strip() == "replicaset.apps/waits created"

    def two_pods() -> list[dict] | None:
        items = json.loads(server.kubectl("get", "pods", "-l", "app=waits", "-o", "json").stdout)["items"]
        return items if len(items) == 2 else None

    for pod in eventually(two_pods, "the ReplicaSet's two pods"):
        assert pod["metadata"]["ownerReferences"][0]["name"] == "waits"
        assert pod["metadata"]["generation"] == 1
        assert pod["status"]["phase"] == "Pending"
        assert pod["status"]["qosClass"] == "Guaranteed"  # limits alone: requests default to them
        assert "nodeName" not in pod["spec"]


GATED_POD = """apiVersion: v1
kind: Pod
metadata: {name: gated}
spec:
  schedulingGates: [{name: example.com/quota}]
  containers: [{name: c, image: pause}]
"""


def test_a_pod_created_with_scheduling_gates_reads_schedulinggated(server: UpServer) -> None:
    path = server.workdir / "gated.yaml"
    path.write_text(GATED_POD)
    assert server.kubectl("create", "-f", str(path)).stdout.strip() == "pod/gated created"
    row = server.kubectl("get", "pod", "gated", "--no-headers").stdout.split()
    assert row[:3] == ["gated", "0/1", "SchedulingGated"]
    status = json.loads(server.kubectl("get", "pod", "gated", "-o", "json").stdout)["status"]
    (condition,) = status["conditions"]
    assert {k: condition[k] for k in ("type", "status", "reason", "message")} == {
        "type": "PodScheduled",
        "status": "False",
        "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates",
    }
    assert condition["lastTransitionTime"]
    assert (status["phase"], status["qosClass"]) == ("Pending", "BestEffort")
