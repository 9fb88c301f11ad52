"""Done-when of issue 9 (items 1-2): `kubetaint snapshot` of a running `kubetaint up`, then
`kubetaint whatif taint node-2 maintenance=true:NoExecute` predicts what really happens when the
taint is applied to that server with kubectl and its virtual clock is advanced."""

from __future__ import annotations

import json

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]

MANIFESTS = """apiVersion: v1
kind: Pod
metadata: {name: doomed}
spec:
  nodeName: node-2
  containers: [{name: web, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata: {name: calm}
spec:
  nodeName: node-2
  tolerations: [{key: maintenance, operator: Exists, effect: NoExecute}]
  containers: [{name: web, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata: {name: patient}
spec:
  nodeName: node-2
  tolerations: [{key: maintenance, operator: Exists, effect: NoExecute, tolerationSeconds: 120}]
  containers: [{name: web, image: nginx}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {kubernetes.io/hostname: node-2}
      containers: [{name: web, image: nginx}]
"""


def _pods(server: UpServer) -> dict[str, str]:
    out = server.kubectl("get", "pods", "-o", "json").stdout
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in json.loads(out)["items"]}


def _bound(server: UpServer, count: int) -> dict[str, str] | None:
    pods = _pods(server)
    return pods if len(pods) == count and all(pods.values()) else None


def _without(server: UpServer, name: str) -> dict[str, str] | None:
    pods = _pods(server)
    return pods if name not in pods else None


def test_whatif_predicts_the_evictions_of_a_real_taint(virtual_server: UpServer) -> None:
    server = virtual_server
    path = server.workdir / "pods.yaml"
    path.write_text(MANIFESTS)
    server.kubectl("apply", "-f", str(path))
    before = eventually(lambda: _bound(server, 4), "4 bound pods")
    snap = server.workdir / "snap.json"
    result = server.kubetaint("snapshot", "--kubeconfig", str(server.kubeconfig), "-o", str(snap))
    assert result.returncode == 0, result.stderr
    result = server.kubetaint(
        "whatif",
        "taint",
        "node-2",
        "maintenance=true:NoExecute",
        "-f",
        str(snap),
        "--for",
        "10m",
        "-o",
        "json",
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    predicted = {e["name"]: e["t"] for e in doc["evictions"]}
    web = next(name for name in before if name.startswith("web-"))
    assert predicted == {"doomed": 0.0, web: 0.0, "patient": 120.0}
    assert [e["name"] for e in doc["notEvicted"]] == ["calm"]
    (pending,) = doc["pending"]  # the web replica may only run on node-2
    assert pending["owner"] == "ReplicaSet/web"

    server.kubectl("taint", "nodes", "node-2", "maintenance=true:NoExecute")
    eventually(lambda: "doomed" not in _pods(server) and web not in _pods(server), "the at-once evictions")
    assert "patient" in _pods(server)
    assert server.kubetaint("clock", "advance", "10m").returncode == 0
    after = eventually(lambda: _without(server, "patient"), "the later eviction")
    assert set(after) - set(before) == {n for n in after if n.startswith("web-")}
    assert "calm" in after and all(after[n] == "" for n in after if n.startswith("web-"))
