"""Live clusters in one step, against a real `kubetaint up` through the kubeconfig it writes
(HTTPS, its CA and a bearer token): `snapshot`, `explain pod/NAME` and `whatif` with
--kubeconfig/--context/-n/-l, an exec-plugin kubeconfig, and `kubectl kubetaint` run by the real
kubectl's plugin mechanism (an executable named kubectl-kubetaint on the PATH)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from .harness import KUBECTL, UpServer, eventually

MANIFESTS = """apiVersion: v1
kind: Pod
metadata: {name: runner, labels: {app: web}}
spec:
  nodeName: node-1
  containers: [{name: c, image: nginx}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: managed}}
  template:
    metadata: {labels: {app: managed}}
    spec:
      nodeSelector: {kubernetes.io/hostname: node-2}
      containers: [{name: c, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata: {name: picky, labels: {app: batch}}
spec:
  nodeSelector: {disk: ssd}
  containers: [{name: c, image: nginx}]
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    server = UpServer(tmp_path_factory.mktemp("up-live"), "--clock", "virtual", "--nodes", "2").start()
    try:
        if KUBECTL is not None:
            path = server.workdir / "pods.yaml"
            path.write_text(MANIFESTS)
            server.kubectl("apply", "-f", str(path))
        else:
            for doc in yaml.safe_load_all(MANIFESTS):
                assert server.client().post("/api/v1/namespaces/default/pods", json=doc).status_code == 201
        eventually(lambda: _phase_known(server), "the pods stored")
        yield server
    finally:
        server.kill()


def _phase_known(server: UpServer) -> bool | None:
    items = server.get("/api/v1/namespaces/default/pods").json()["items"]
    bound = [p for p in items if p["spec"].get("nodeName")]
    return True if len(items) == 3 and len(bound) == 2 else None


def _context(server: UpServer) -> str:
    return str(yaml.safe_load(server.kubeconfig.read_text())["current-context"])


def test_snapshot_reads_the_cluster_through_its_kubeconfig_and_context(cluster: UpServer) -> None:
    out = cluster.kubetaint(
        "snapshot",
        "--kubeconfig",
        str(cluster.kubeconfig),
        "--context",
        _context(cluster),
        "-l",
        "app=web",
        "-o",
        "-",
    )
    assert out.returncode == 0, out.stderr
    objects = json.loads(out.stdout)["spec"]["objects"]
    assert {"node-1", "node-2"} <= {o["metadata"]["name"] for o in objects if o["kind"] == "Node"}
    assert [o["metadata"]["name"] for o in objects if o["kind"] == "Pod"] == ["runner"]


def test_snapshot_writes_yaml_with_output_format_and_explain_reads_it(cluster: UpServer) -> None:
    as_json = cluster.kubetaint("snapshot", "-o", "-")
    as_yaml = cluster.kubetaint("snapshot", "-o", "-", "--output-format", "yaml")
    assert as_yaml.returncode == 0, as_yaml.stderr
    assert not as_yaml.stdout.lstrip().startswith("{")
    assert yaml.safe_load(as_yaml.stdout)["spec"] == json.loads(as_json.stdout)["spec"]
    path = cluster.workdir / "snapshot.yaml"
    written = cluster.kubetaint("snapshot", "-o", str(path), "--output-format", "yaml")
    assert written.returncode == 0 and written.stdout == ""
    assert written.stderr.endswith(f"written to {path}\n")
    out = cluster.kubetaint("explain", str(path), "-o", "json")
    assert out.returncode == 0, out.stderr
    pods = {pod["name"]: pod["result"] for pod in json.loads(out.stdout)["pods"]}
    assert pods["picky"] == "Unschedulable"


def test_an_unknown_context_is_one_line(cluster: UpServer) -> None:
    out = cluster.kubetaint("snapshot", "--context", "nope", "-o", "-")
    assert out.returncode == 1
    assert (
        out.stderr.startswith("error: ") and "context was not found for specified context: nope" in out.stderr
    )
    assert out.stderr.count("\n") == 1


def test_explain_a_live_pending_pod_by_name(cluster: UpServer) -> None:
    out = cluster.kubetaint("explain", "pod/picky", "-o", "json")  # KUBECONFIG from the environment
    assert out.returncode == 0, out.stderr
    (pod,) = json.loads(out.stdout)["pods"]
    assert pod["name"] == "picky" and pod["result"] == "Unschedulable"
    assert "didn't match Pod's node affinity/selector" in pod["message"]


def test_explain_a_running_pod_as_if_it_were_pending(cluster: UpServer) -> None:
    out = cluster.kubetaint("explain", "pod/runner", "-n", "default", "--fail-on", "unschedulable")
    assert out.returncode == 0, out.stderr
    assert "Pod default/runner: Scheduled" in out.stdout


def test_explain_the_pending_pods_a_selector_picks(cluster: UpServer) -> None:
    out = cluster.kubetaint("explain", "-l", "app=batch", "-o", "json")
    assert out.returncode == 0, out.stderr
    assert [p["name"] for p in json.loads(out.stdout)["pods"]] == ["picky"]
    missing = cluster.kubetaint("explain", "pod/ghost")
    assert (
        missing.returncode == 1 and missing.stderr == 'error: pods "ghost" not found in namespace "default"\n'
    )


def test_whatif_captures_the_cluster_itself(cluster: UpServer) -> None:
    out = cluster.kubetaint(
        "whatif",
        "taint",
        "node-1",
        "maintenance=true:NoExecute",
        "--kubeconfig",
        str(cluster.kubeconfig),
        "--for",
        "10m",
        "-o",
        "json",
        "--fail-on",
        "pending",
    )
    assert out.returncode == 0, out.stderr
    document = json.loads(out.stdout)
    assert document["summary"]["evictedAtOnce"] == 1  # the bare pod on node-1


def _exec_kubeconfig(cluster: UpServer, api_version: str) -> Path:
    """The server's kubeconfig with its user's token handed out by an exec plugin instead."""
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    user = config["users"][0]["user"]
    token = user.pop("token")
    user.pop("client-certificate-data", None)  # the plugin's token is the only credential
    user.pop("client-key-data", None)
    plugin = cluster.workdir / f"token-plugin-{api_version.rsplit('/', 1)[1]}"
    plugin.write_text(
        f"#!{sys.executable}\n"
        "import json, os\n"
        "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
        "assert info['spec']['interactive'] is False\n"
        f"print(json.dumps({{'apiVersion': info['apiVersion'], 'kind': 'ExecCredential',"
        f" 'status': {{'token': os.environ['PLUGIN_TOKEN']}}}}))\n"
    )
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    user["exec"] = {
        "apiVersion": api_version,
        "command": str(plugin),
        "env": [{"name": "PLUGIN_TOKEN", "value": token}],
        "interactiveMode": "Never",
    }
    path = cluster.workdir / f"exec-{plugin.name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize(
    "api_version", ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]
)
def test_an_exec_plugin_kubeconfig_logs_in(cluster: UpServer, api_version: str) -> None:
    path = _exec_kubeconfig(cluster, api_version)
    out = cluster.kubetaint("snapshot", "--kubeconfig", str(path), "-o", "-")
    assert out.returncode == 0, out.stderr
    assert any(o["kind"] == "Node" for o in json.loads(out.stdout)["spec"]["objects"])


def test_a_failing_exec_plugin_is_one_line(cluster: UpServer) -> None:
    path = _exec_kubeconfig(cluster, "client.authentication.k8s.io/v1")
    config = yaml.safe_load(path.read_text())
    config["users"][0]["user"]["exec"]["command"] = "no-such-credential-helper"
    config["users"][0]["user"]["exec"]["installHint"] = "install it first"
    path.write_text(yaml.safe_dump(config))
    out = cluster.kubetaint("whatif", "drain", "node-2", "--kubeconfig", str(path))
    assert out.returncode == 1
    assert "executable no-such-credential-helper not found (install it first)" in out.stderr
    assert out.stderr.count("\n") == 1


@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine")
def test_kubectl_runs_kubetaint_as_a_plugin(cluster: UpServer, tmp_path: Path) -> None:
    installed = Path(sys.executable).parent / "kubectl-kubetaint"
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    if installed.exists():  # the console script pip installed (pip install -e .)
        shutil.copy(installed, plugins / "kubectl-kubetaint")
    else:  # the same entry point, for an environment installed before the script was declared
        script = plugins / "kubectl-kubetaint"
        script.write_text(
            f"#!{sys.executable}\nfrom kubetaint.cli.main import kubectl_main\nkubectl_main()\n"
        )
        script.chmod(0o755)
    env = {**cluster.env, "PATH": os.pathsep.join([str(plugins), cluster.env["PATH"]])}
    assert KUBECTL is not None
    listed = subprocess.run([KUBECTL, "plugin", "list"], env=env, capture_output=True, text=True, check=False)
    assert "kubectl-kubetaint" in listed.stdout
    out = subprocess.run(
        [KUBECTL, "kubetaint", "whatif", "drain", "node-2", "--for", "10m"],
        env=env,
        cwd=cluster.workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "node-2" in out.stdout
    usage = subprocess.run(
        [KUBECTL, "kubetaint", "--help"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert usage.stdout.startswith("Usage: kubectl kubetaint [OPTIONS] COMMAND")
