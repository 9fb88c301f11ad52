"""End to end with the real kubectl (a version dispatcher: the server reports minor 32, so
kubectl 1.32 runs) against uvicorn on a free port, one fresh server, kubeconfig and KUBECACHEDIR
per test (kubectl-wire.md §0, §1, §3.5, §4)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

from .builders import kubectl_env, make_app, make_store, namespace, node, pod

KUBECTL = shutil.which("kubectl")
pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]

POD_YAML = """apiVersion: v1
kind: Pod
metadata:
  name: mypod
  labels: {app: my}
spec:
  containers:
  - {name: main, image: "nginx:1.25"}
"""


@dataclass
class Cluster:
    store: MemoryStore
    clock: VirtualClock
    env: dict[str, str]
    workdir: Path

    def kubectl(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        assert KUBECTL is not None
        result = subprocess.run(
            [KUBECTL, *args],
            env=self.env,
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if ok:
            assert result.returncode == 0, result.stderr
        return result


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    clock = VirtualClock()
    store = make_store(clock)
    store.create("namespaces", namespace("default"))
    store.create(
        "nodes", node("n1", labels={"node-role.kubernetes.io/control-plane": ""}, internal_ip="10.0.0.1")
    )
    store.create("nodes", node("n2", ready="False"))
    clock.advance(3 * 3600 + 5 * 60)
    with BackgroundServer(make_app(store, clock)) as server:
        env = kubectl_env(server.url, tmp_path)
        (tmp_path / "pod.yaml").write_text(POD_YAML)
        yield Cluster(store, clock, env, tmp_path)


def test_get_nodes_prints_upstream_columns(cluster: Cluster) -> None:
    out = cluster.kubectl("get", "nodes").stdout.splitlines()
    assert out[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert out[1].split() == ["n1", "Ready", "control-plane", "3h5m", "v1.35.0"]
    assert out[2].split() == ["n2", "NotReady", "<none>", "3h5m", "v1.35.0"]
    wide = cluster.kubectl("get", "nodes", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[5:] == [
        "INTERNAL-IP",
        "EXTERNAL-IP",
        "OS-IMAGE",
        "KERNEL-VERSION",
        "CONTAINER-RUNTIME",
    ]
    assert wide[1].split()[5:7] == ["10.0.0.1", "<none>"]


def test_create_then_get_all_namespaces_wide_and_yaml(cluster: Cluster) -> None:
    cluster.store.create("pods", pod("other", "kube-system", node_name="n1"))
    assert cluster.kubectl("create", "-f", "pod.yaml").stdout.strip() == "pod/mypod created"
    duplicate = cluster.kubectl("create", "-f", "pod.yaml", ok=False)
    assert duplicate.returncode == 1
    assert (
        'Error from server (AlreadyExists): error when creating "pod.yaml": pods "mypod" already exists'
        in (duplicate.stderr)
    )
    out = cluster.kubectl("get", "pods", "-A", "-o", "wide", "--show-labels").stdout.splitlines()
    assert out[0].split() == [
        "NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE",
        "READINESS", "GATES", "LABELS",
    ]  # fmt: skip
    rows = sorted(line.split() for line in out[1:])
    assert rows[0] == [
        "default",
        "mypod",
        "0/1",
        "Pending",
        "0",
        "0s",
        "<none>",
        "<none>",
        "<none>",
        "<none>",
        "app=my",
    ]
    assert rows[1][:2] == ["kube-system", "other"] and rows[1][7] == "n1"
    yaml_out = cluster.kubectl("get", "pod", "mypod", "-o", "yaml").stdout
    assert "kind: Pod" in yaml_out and "image: nginx:1.25" in yaml_out and "uid: " in yaml_out


def test_taint_and_untaint_a_node(cluster: Cluster) -> None:
    assert (
        cluster.kubectl("taint", "nodes", "n1", "dedicated=gpu:NoSchedule").stdout.strip()
        == "node/n1 tainted"
    )
    assert cluster.store.get("nodes", "", "n1")["spec"]["taints"] == [
        {"effect": "NoSchedule", "key": "dedicated", "value": "gpu"}
    ]
    again = cluster.kubectl("taint", "nodes", "n1", "dedicated=gpu:NoSchedule", ok=False)
    assert (
        "node n1 already has dedicated taint(s) with same effect(s) and --overwrite is false" in again.stderr
    )
    assert (
        cluster.kubectl("taint", "nodes", "n1", "dedicated=gpu:NoSchedule-").stdout.strip()
        == "node/n1 untainted"
    )
    assert "taints" not in cluster.store.get("nodes", "", "n1")["spec"]


def test_cordon_shows_scheduling_disabled(cluster: Cluster) -> None:
    assert cluster.kubectl("cordon", "n1").stdout.strip() == "node/n1 cordoned"
    assert cluster.kubectl("cordon", "n1").stdout.strip() == "node/n1 already cordoned"
    rows = cluster.kubectl("get", "nodes").stdout.splitlines()
    assert rows[1].split()[1] == "Ready,SchedulingDisabled"
    assert cluster.kubectl("uncordon", "n1").stdout.strip() == "node/n1 uncordoned"
    assert "unschedulable" not in cluster.store.get("nodes", "", "n1")["spec"]


def test_delete_pod_and_not_found(cluster: Cluster) -> None:
    cluster.store.create("pods", pod("p"))
    assert cluster.kubectl("delete", "pod", "p").stdout.strip() == 'pod "p" deleted'
    missing = cluster.kubectl("delete", "pod", "p", ok=False)
    assert missing.returncode == 1
    assert missing.stderr.strip() == 'Error from server (NotFound): pods "p" not found'
    assert cluster.kubectl("get", "pods").stderr.strip() == "No resources found in default namespace."


def test_apply_twice_label_and_server_side_apply(cluster: Cluster) -> None:
    assert cluster.kubectl("apply", "-f", "pod.yaml").stdout.strip() == "pod/mypod created"
    assert cluster.kubectl("apply", "-f", "pod.yaml").stdout.strip() == "pod/mypod unchanged"
    assert cluster.kubectl("label", "pod", "mypod", "tier=web").stdout.strip() == "pod/mypod labeled"
    assert cluster.store.get("pods", "default", "mypod")["metadata"]["labels"] == {"app": "my", "tier": "web"}
    (cluster.workdir / "ssa.yaml").write_text(POD_YAML.replace("mypod", "ssapod"))
    assert (
        cluster.kubectl("apply", "--server-side", "-f", "ssa.yaml").stdout.strip()
        == "pod/ssapod serverside-applied"
    )
    managers = [
        m["manager"] for m in cluster.store.get("pods", "default", "ssapod")["metadata"]["managedFields"]
    ]
    assert managers == ["kubectl"]


SERVICE_YAML = """apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
"""


def test_applying_a_service_again_merges_its_ports_by_port_and_defaults_their_protocol(
    cluster: Cluster,
) -> None:
    (cluster.workdir / "svc.yaml").write_text(SERVICE_YAML + "  - {port: 80}\n")
    assert cluster.kubectl("apply", "-f", "svc.yaml").stdout.strip() == "service/web created"
    (cluster.workdir / "svc.yaml").write_text(
        SERVICE_YAML + "  - {name: http, port: 80}\n  - {name: https, port: 443, targetPort: 8443}\n"
    )
    assert cluster.kubectl("apply", "-f", "svc.yaml").stdout.strip() == "service/web configured"
    assert cluster.store.get("services", "default", "web")["spec"]["ports"] == [
        {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80},
        {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 8443},
    ]


def test_sort_by_uses_full_row_objects(cluster: Cluster) -> None:
    cluster.store.create("pods", pod("b", node_name="n1"))
    cluster.store.create("pods", pod("a", node_name="n2"))
    out = cluster.kubectl("get", "pods", "--sort-by=.spec.nodeName").stdout.splitlines()
    assert [line.split()[0] for line in out[1:]] == ["b", "a"]


def test_get_pods_watch_prints_new_rows_as_they_change(cluster: Cluster) -> None:
    assert KUBECTL is not None
    cluster.store.create("pods", pod("first"))
    watcher = subprocess.Popen(
        [KUBECTL, "get", "pods", "-w", "--request-timeout=20s"],
        env=cluster.env,
        cwd=cluster.workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watcher.stdout is not None
        assert watcher.stdout.readline().split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        assert watcher.stdout.readline().split()[:3] == ["first", "0/1", "Pending"]
        cluster.store.create("pods", pod("second", phase="Running"))
        assert watcher.stdout.readline().split()[:3] == ["second", "0/1", "Running"]
    finally:
        watcher.kill()
        watcher.communicate()
