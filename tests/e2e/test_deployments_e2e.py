"""Deployments on `kubetaint up` with the real kubectl: apply, rollout status, set image, the old
ReplicaSet at 0, rollout undo, scale, and `kubectl delete deployment` cascading (the garbage
collector) so that no ReplicaSet or pod remains; `--cascade=orphan` keeps the ReplicaSet."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: c
        image: nginx:1
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    up = UpServer(tmp_path_factory.mktemp("up-deployments"), "--nodes", "2").start()
    yield up
    up.kill()


def _rs_rows(server: UpServer) -> dict[str, list[str]]:
    out = server.kubectl("get", "rs", "-l", "app=web", "--no-headers").stdout
    return {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()}


def _pods(server: UpServer) -> list[str]:
    out = server.kubectl("get", "pods", "-l", "app=web", "--no-headers", "-o", "name").stdout
    return [line for line in out.splitlines() if line.strip()]


def _rollout_status(server: UpServer) -> str:
    result = server.kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    return result.stdout


def test_a_deployment_rolls_out_updates_rolls_back_and_is_deleted_with_its_replicasets(
    server: UpServer,
) -> None:
    manifest = server.workdir / "web.yaml"
    manifest.write_text(DEPLOYMENT)
    server.kubectl("apply", "-f", str(manifest))
    assert 'deployment "web" successfully rolled out' in _rollout_status(server)
    [first] = _rs_rows(server)

    server.kubectl("set", "image", "deployment/web", "c=nginx:2")
    assert 'deployment "web" successfully rolled out' in _rollout_status(server)
    rows = _rs_rows(server)
    assert len(rows) == 2
    assert rows[first][:3] == ["0", "0", "0"]  # DESIRED CURRENT READY of the old ReplicaSet
    [second] = [name for name in rows if name != first]
    assert rows[second][:3] == ["3", "3", "3"]
    history = server.kubectl("rollout", "history", "deployment/web").stdout
    assert "1 " in history and "2 " in history

    server.kubectl("rollout", "undo", "deployment/web")
    assert 'deployment "web" successfully rolled out' in _rollout_status(server)
    image = server.kubectl(
        "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"
    )
    assert image.stdout == "nginx:1"
    rows = _rs_rows(server)
    assert rows[first][:3] == ["3", "3", "3"] and rows[second][:3] == ["0", "0", "0"]
    revision = server.kubectl(
        "get", "rs", first, "-o", "jsonpath={.metadata.annotations.deployment\\.kubernetes\\.io/revision}"
    )
    assert revision.stdout == "3"

    assert "deployment.apps/web scaled" in server.kubectl("scale", "deployment/web", "--replicas=4").stdout
    assert 'deployment "web" successfully rolled out' in _rollout_status(server)
    assert eventually(lambda: len(_pods(server)) == 4, "4 pods")

    server.kubectl("delete", "deployment", "web")
    eventually(lambda: not _rs_rows(server), "the ReplicaSets to be collected")
    eventually(lambda: not _pods(server), "the pods to be collected")


def test_an_orphaning_delete_keeps_the_replicaset_and_its_pods(server: UpServer) -> None:
    manifest = server.workdir / "keep.yaml"
    manifest.write_text(DEPLOYMENT.replace("name: web", "name: keep").replace("app: web", "app: keep"))
    server.kubectl("apply", "-f", str(manifest))
    server.kubectl("rollout", "status", "deployment/keep", "--timeout=30s")
    server.kubectl("delete", "deployment", "keep", "--cascade=orphan")
    gone = server.kubectl("get", "deployment", "keep", ok=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr
    owners = server.kubectl(
        "get", "rs", "-l", "app=keep", "-o", "jsonpath={.items[*].metadata.ownerReferences}"
    )
    assert owners.stdout == ""
    names = server.kubectl("get", "rs", "-l", "app=keep", "-o", "name").stdout.split()
    assert len(names) == 1
    server.kubectl("delete", *names)
    eventually(
        lambda: not server.kubectl("get", "pods", "-l", "app=keep", "-o", "name").stdout.strip(),
        "the orphaned ReplicaSet's pods to be collected with it",
    )
