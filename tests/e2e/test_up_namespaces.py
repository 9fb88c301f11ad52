"""Namespace lifecycle on `kubetaint up` with the real kubectl and the official Python client, on
SQLite and on etcd: a pod in a missing namespace is refused with upstream's NotFound; `kubectl
delete ns team-a` takes the namespace through Terminating (creates refused with upstream's
Forbidden), removes its Deployment, ReplicaSet and pods, frees their nodes' capacity for a pod
waiting elsewhere, and then the namespace itself; the immortal namespaces stay."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl not found on PATH")


def _etcd_module() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "store" / "etcd_server.py"
    spec = importlib.util.spec_from_file_location("kubetaint_tests_etcd_server_ns", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ETCD = _etcd_module()

TEAM_A = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-a}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: "5"}}}]
"""
BIG = """apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  containers: [{name: big, image: nginx, resources: {requests: {cpu: "5"}}}]
"""


@pytest.fixture(params=["sqlite", "etcd"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[UpServer]:
    args = ["--nodes", "2"]
    etcd = None
    if request.param == "etcd":
        if ETCD.ETCD_BINARY is None:
            pytest.skip(ETCD.SKIP_REASON)
        (tmp_path / "etcd").mkdir()
        etcd = ETCD.EtcdServer(tmp_path / "etcd")
        args += ["--store", "etcd://" + str(etcd.url).removeprefix("http://")]
    up = UpServer(tmp_path, *args).start()
    try:
        yield up
    finally:
        up.kill()
        if etcd is not None:
            etcd.stop()


def _phase(server: UpServer, name: str) -> str:
    return server.kubectl("get", "ns", name, "-o", "jsonpath={.status.phase}", ok=False).stdout


def test_kubectl_delete_ns_removes_its_workloads_frees_capacity_then_the_namespace(server: UpServer) -> None:
    refused = server.kubectl("run", "x", "-n", "missing", "--image=nginx", ok=False)
    assert refused.returncode == 1
    assert refused.stderr.strip() == 'Error from server (NotFound): namespaces "missing" not found'

    assert server.kubectl("create", "ns", "team-a").stdout.strip() == "namespace/team-a created"
    (server.workdir / "team-a.yaml").write_text(TEAM_A)
    server.kubectl("apply", "-f", "team-a.yaml")

    def placed() -> list[str] | None:
        nodes = server.kubectl(
            "get", "pods", "-n", "team-a", "-o", "jsonpath={.items[*].spec.nodeName}"
        ).stdout
        return sorted(nodes.split()) if len(nodes.split()) == 2 else None

    assert eventually(placed, "team-a's pods") == ["node-1", "node-2"]
    (server.workdir / "big.yaml").write_text(BIG)
    server.kubectl("apply", "-f", "big.yaml")
    time.sleep(1)
    assert server.kubectl("get", "pod", "big", "-o", "jsonpath={.spec.nodeName}").stdout == ""  # no room

    forbidden = server.kubectl("delete", "ns", "default", ok=False)
    assert forbidden.stderr.strip() == (
        'Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted'
    )
    deleted = server.kubectl("delete", "ns", "team-a", "--wait=false")
    assert deleted.stdout.strip() == 'namespace "team-a" deleted'
    assert _phase(server, "team-a") == "Terminating"
    late = server.kubectl("run", "late", "-n", "team-a", "--image=nginx", ok=False)
    assert late.stderr.strip() == (
        'Error from server (Forbidden): pods "late" is forbidden: unable to create new content in '
        "namespace team-a because it is being terminated"
    )
    # the pods go first (gracefully), then the rest; the namespace follows (about 16 s: upstream
    # requeues after half the pods' 30 s grace period, plus one)
    deadline = time.monotonic() + 45
    while server.kubectl("get", "ns", "team-a", ok=False).returncode == 0:
        assert time.monotonic() < deadline, "team-a was not removed"
        time.sleep(0.5)
    for kind in ("pods", "replicasets", "deployments", "serviceaccounts"):
        listed = server.kubectl("get", kind, "-n", "team-a", "-o", "name").stdout.strip()
        assert listed == "", kind
    node = eventually(
        lambda: server.kubectl("get", "pod", "big", "-o", "jsonpath={.spec.nodeName}").stdout or None,
        "big to be scheduled in the freed capacity",
    )
    assert node in ("node-1", "node-2")
    assert _phase(server, "default") == "Active"


def test_the_official_python_client_sees_the_lifecycle(server: UpServer) -> None:
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    api = client.CoreV1Api(config.new_client_from_config(config_file=str(server.kubeconfig)))
    created = api.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py")))
    assert created.spec.finalizers == ["kubernetes"] and created.status.phase == "Active"
    held = client.V1ObjectMeta(name="held", finalizers=["example.com/hold"])
    api.create_namespaced_config_map("py", client.V1ConfigMap(metadata=held))
    with pytest.raises(ApiException) as missing:
        api.create_namespaced_config_map("nope", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm")))
    assert missing.value.status == 404
    api.delete_namespace("py")
    with pytest.raises(ApiException) as refused:
        api.create_namespaced_config_map("py", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm2")))
    assert refused.value.status == 403 and "because it is being terminated" in str(refused.value.body)

    def waiting() -> dict[str, str] | None:
        namespace = api.read_namespace("py")
        found = {c.type: c.message for c in namespace.status.conditions or [] if c.status == "True"}
        return found or None

    conditions = eventually(waiting, "the conditions of the terminating namespace")
    assert api.read_namespace("py").status.phase == "Terminating"
    assert conditions == {
        "NamespaceContentRemaining": "Some resources are remaining: configmaps. has 1 resource instances",
        "NamespaceFinalizersRemaining": "Some content in the namespace has finalizers remaining: "
        "example.com/hold in 1 resource instances",
    }
    api.patch_namespaced_config_map("held", "py", {"metadata": {"finalizers": None}})

    def gone() -> bool:
        try:
            api.read_namespace("py")
        except ApiException as err:
            return err.status == 404
        return False

    eventually(gone, "the namespace py to be removed")
    assert api.list_namespaced_config_map("py").items == []
