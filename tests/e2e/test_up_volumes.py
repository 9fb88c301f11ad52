"""`kubetaint up` with storage: kubectl applies a StorageClass, a local PersistentVolume, a claim
and a pod; the persistent volume controller makes the volume Available, the scheduler's
VolumeBinding places the pod on the PV's node and pre-binds the volume to the claim (PreBind),
the controller completes the binding, and kubectl prints the storage kinds with its own
columns."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import UpServer, eventually

MANIFESTS = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-node-2}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disk}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-2]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local
  resources: {requests: {storage: 5Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: default}
spec:
  containers: [{name: db, image: postgres}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    workdir = tmp_path_factory.mktemp("up-volumes")
    up = UpServer(workdir, "--nodes", "3").start()
    yield up
    up.kill()


def test_a_pod_with_a_local_volume_claim_goes_to_the_volumes_node(server: UpServer) -> None:
    path = Path(server.workdir / "db.yaml")
    path.write_text(MANIFESTS)
    applied = server.kubectl("apply", "-f", str(path))
    assert "persistentvolumeclaim/data created" in applied.stdout
    node = eventually(
        lambda: server.kubectl("get", "pod", "db", "-o", "jsonpath={.spec.nodeName}").stdout.strip() or None,
        "the pod bound",
    )
    assert node == "node-2"
    volume = eventually(
        lambda: (
            out
            if (
                out := server.kubectl(
                    "get", "pvc", "data", "-o", "jsonpath={.status.phase}/{.spec.volumeName}"
                ).stdout
            )
            == "Bound/pv-node-2"
            else None
        ),
        "the claim bound",
    )
    assert volume == "Bound/pv-node-2"


def test_kubectl_prints_the_storage_kinds_with_its_columns(server: UpServer) -> None:
    pvs = server.kubectl("get", "pv").stdout.splitlines()
    assert pvs[0].split() == [
        "NAME",
        "CAPACITY",
        "ACCESS",
        "MODES",
        "RECLAIM",
        "POLICY",
        "STATUS",
        "CLAIM",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "REASON",
        "AGE",
    ]
    assert pvs[1].split()[:7] == ["pv-node-2", "10Gi", "RWO", "Retain", "Bound", "default/data", "local"]
    claims = server.kubectl("get", "pvc").stdout.splitlines()
    assert claims[1].split()[:6] == ["data", "Bound", "pv-node-2", "10Gi", "RWO", "local"]
    classes = server.kubectl("get", "sc").stdout.splitlines()
    assert classes[1].split()[:4] == [
        "local",
        "kubernetes.io/no-provisioner",
        "Delete",
        "WaitForFirstConsumer",
    ]
