"""Server-side apply and managedFields over HTTP, with the real kubectl (fresh KUBECACHEDIR per
test), the official Python client and raw requests: field ownership, conflicts (409 with
upstream's message), `--force-conflicts`, removal of what a manager stops applying, the managers
kubectl's commands record (test/cmd's `kubectl-taint` check) and the field manager options."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore
from kubetaint.store.remote import RemoteStore
from kubetaint.store.remote_config import Connection

from .builders import kubectl_env, make_app, make_store, namespace

KUBECTL = shutil.which("kubectl")

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - {name: main, image: "nginx:1.25"}
"""
TOLERATION = """      tolerations:
      - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}
"""
POD_WITH_TOLERATION = """apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - {name: main, image: "nginx:1.25"}
  tolerations:
  - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}
"""
POD_WITHOUT_TOLERATION = """apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - {name: main, image: "nginx:1.25"}
"""
NODE = """apiVersion: v1
kind: Node
metadata:
  name: 127.0.0.1
  labels: {kubernetes.io/hostname: 127.0.0.1}
"""


@dataclass
class Cluster:
    store: MemoryStore
    url: str
    env: dict[str, str]
    workdir: Path

    def kubectl(
        self, *args: str, ok: bool = True, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        assert KUBECTL is not None
        result = subprocess.run(
            [KUBECTL, *args],
            env=self.env,
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            input=stdin,
        )
        if ok:
            assert result.returncode == 0, result.stderr
        return result

    def write(self, name: str, text: str) -> str:
        (self.workdir / name).write_text(text)
        return name

    def managers(self, resource: str, name: str, namespace: str = "default") -> list[tuple[str, str]]:
        obj = self.store.get(resource, "" if resource == "nodes" else namespace, name)
        return [(e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields") or []]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    clock = VirtualClock()
    store = make_store(clock)
    store.create("namespaces", namespace("default"))
    with BackgroundServer(make_app(store, clock)) as server:
        yield Cluster(store, server.url, kubectl_env(server.url, tmp_path), tmp_path)


needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine")


@needs_kubectl
@pytest.mark.kubectl
def test_reapplying_a_manifest_without_a_toleration_removes_it(cluster: Cluster) -> None:
    with_toleration = cluster.write("with.yaml", DEPLOYMENT + TOLERATION)
    without = cluster.write("without.yaml", DEPLOYMENT)
    applied = cluster.kubectl("apply", "--server-side", "-f", with_toleration).stdout.strip()
    assert applied == "deployment.apps/web serverside-applied"
    template = cluster.store.get("deployments.apps", "default", "web")["spec"]["template"]["spec"]
    assert template["tolerations"][0]["key"] == "dedicated"
    cluster.kubectl("apply", "--server-side", "-f", without)
    assert (
        "tolerations"
        not in cluster.store.get("deployments.apps", "default", "web")["spec"]["template"]["spec"]
    )
    entries = cluster.store.get("deployments.apps", "default", "web")["metadata"]["managedFields"]
    assert [(e["manager"], e["operation"]) for e in entries] == [("kubectl", "Apply")]


@needs_kubectl
@pytest.mark.kubectl
def test_a_conflicting_apply_fails_with_upstreams_message_until_forced(cluster: Cluster) -> None:
    manifest = cluster.write("pod.yaml", POD_WITHOUT_TOLERATION)
    cluster.kubectl("apply", "--server-side", "-f", manifest)
    assert (
        cluster.kubectl("label", "pod", "web", "app=other", "--overwrite").stdout.strip() == "pod/web labeled"
    )
    refused = cluster.kubectl("apply", "--server-side", "-f", manifest, ok=False)
    assert refused.returncode == 1
    assert refused.stderr.startswith(
        'error: Apply failed with 1 conflict: conflict with "kubectl-label" using v1: .metadata.labels.app\n'
    )
    assert cluster.store.get("pods", "default", "web")["metadata"]["labels"] == {"app": "other"}
    cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", manifest)
    assert cluster.store.get("pods", "default", "web")["metadata"]["labels"] == {"app": "web"}
    assert cluster.managers("pods", "web") == [("kubectl", "Apply")]


@needs_kubectl
@pytest.mark.kubectl
def test_kubectl_taint_and_cordon_leave_their_managers(cluster: Cluster) -> None:
    cluster.kubectl("create", "-f", cluster.write("node.yaml", NODE))
    cluster.kubectl("taint", "node", "127.0.0.1", "dedicated=foo:PreferNoSchedule")
    template = '{{range .metadata.managedFields}}{{if eq .manager "kubectl-taint"}}{{.manager}}{{end}}{{end}}'
    assert (
        cluster.kubectl("get", "nodes", "127.0.0.1", "-o", f"go-template={template}").stdout
        == "kubectl-taint"
    )
    cluster.kubectl("cordon", "127.0.0.1")
    entries = cluster.store.get("nodes", "", "127.0.0.1")["metadata"]["managedFields"]
    owners = {e["manager"]: e["fieldsV1"] for e in entries}
    assert owners["kubectl-create"] == {"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/hostname": {}}}}
    assert owners["kubectl-taint"] == {"f:spec": {"f:taints": {}}}
    # kubectl up to 1.32 sends cordon's patch without a field manager: its User-Agent names it
    cordon = [m for m in owners if m in ("kubectl-cordon", "kubectl")]
    assert [owners[m] for m in cordon] == [{"f:spec": {"f:unschedulable": {}}}]


@needs_kubectl
@pytest.mark.kubectl
def test_get_shows_managed_fields_only_when_asked(cluster: Cluster) -> None:
    cluster.kubectl("apply", "--server-side", "-f", cluster.write("pod.yaml", POD_WITH_TOLERATION))
    assert "managedFields" not in cluster.kubectl("get", "pod", "web", "-o", "yaml").stdout
    shown = json.loads(cluster.kubectl("get", "pod", "web", "-o", "json", "--show-managed-fields").stdout)
    (entry,) = shown["metadata"]["managedFields"]
    assert entry["manager"] == "kubectl"
    assert entry["operation"] == "Apply"
    assert entry["fieldsType"] == "FieldsV1"
    assert entry["fieldsV1"] == {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {
            "f:containers": {'k:{"name":"main"}': {".": {}, "f:image": {}, "f:name": {}}},
            "f:tolerations": {},
        },
    }


@needs_kubectl
@pytest.mark.kubectl
def test_moving_from_client_side_to_server_side_apply_does_not_conflict(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("web.yaml", DEPLOYMENT))
    changed = cluster.write("web2.yaml", DEPLOYMENT.replace("nginx:1.25", "nginx:1.27"))
    assert cluster.kubectl("apply", "--server-side", "-f", changed).stdout.strip() == (
        "deployment.apps/web serverside-applied"
    )
    stored = cluster.store.get("deployments.apps", "default", "web")
    assert stored["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    managers = [(e["manager"], e["operation"]) for e in stored["metadata"]["managedFields"]]
    assert managers[0] == ("kubectl", "Apply")


TEST_POD = """apiVersion: v1
kind: Pod
metadata:
  name: test-pod
  labels:
    name: test-pod-label
spec:
  containers:
  - name: kubernetes-pause
    image: registry.k8s.io/pause:3.10
"""


@needs_kubectl
@pytest.mark.kubectl
def test_cmd_apply_server_side(cluster: Cluster) -> None:
    # test/cmd/apply.sh run_kubectl_server_side_apply_tests
    manifest = cluster.write("pod.yaml", TEST_POD)
    cluster.kubectl("apply", "--server-side", "-f", manifest)
    labels = cluster.kubectl("get", "pods", "test-pod", "-o", "go-template={{.metadata.labels.name}}").stdout
    assert labels == "test-pod-label"
    managers = "jsonpath={.metadata.managedFields[*].manager}"
    assert "kubectl" in cluster.kubectl("get", "-f", manifest, "-o", managers).stdout
    cluster.kubectl(
        "apply", "--server-side", "--field-manager=my-field-manager", "--force-conflicts", "-f", manifest
    )
    assert "my-field-manager" in cluster.kubectl("get", "-f", manifest, "-o", managers).stdout


@needs_kubectl
@pytest.mark.kubectl
def test_cmd_diff_server_side(cluster: Cluster) -> None:
    # test/cmd/diff.sh "Testing kubectl diff with server-side apply"
    manifest = cluster.write("pod.yaml", TEST_POD)
    changed = cluster.write("pod-changed.yaml", TEST_POD.replace("pause:3.10", "pause:3.4"))
    missing = cluster.kubectl("diff", "--server-side", "-f", manifest, ok=False)
    assert missing.returncode == 1 and "test-pod" in missing.stdout
    assert cluster.kubectl("get", "pods", "-o", "name").stdout == ""  # a diff only dry-runs
    cluster.kubectl("apply", "--server-side", "-f", manifest)
    assert cluster.kubectl("diff", "--server-side", "-f", manifest).stdout == ""  # exit code 0
    different = cluster.kubectl("diff", "--server-side", "-f", changed, ok=False)
    assert different.returncode == 1 and "registry.k8s.io/pause:3.4" in different.stdout


# -- raw HTTP ------------------------------------------------------------------------------------

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "labels": {"app": "p"}},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def test_the_field_manager_defaults_to_the_user_agents_product(cluster: Cluster) -> None:
    r = httpx.post(
        f"{cluster.url}/api/v1/namespaces/default/pods",
        json=POD,
        headers={"User-Agent": "my-tool/1.2 (linux)"},
    )
    assert r.status_code == 201, r.text
    assert [(e["manager"], e["operation"]) for e in r.json()["metadata"]["managedFields"]] == [
        ("my-tool", "Update")
    ]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param(
            "fieldManager=" + "m" * 129,
            'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
            id="a field manager longer than 128 bytes",
        ),
        pytest.param(
            "fieldManager=a%01b",
            'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\x01b": '
            "invalid character U+0001 (at position 1)",
            id="a field manager with a control character",
        ),
    ],
)
def test_bad_field_managers_are_refused(cluster: Cluster, query: str, message: str) -> None:
    r = httpx.post(f"{cluster.url}/api/v1/namespaces/default/pods?{query}", json=POD)
    assert r.status_code == 422
    assert r.json()["message"] == message


def test_force_is_refused_on_other_patches(cluster: Cluster) -> None:
    httpx.post(f"{cluster.url}/api/v1/namespaces/default/pods", json=POD)
    r = httpx.patch(
        f"{cluster.url}/api/v1/namespaces/default/pods/p?force=true",
        content=b"{}",
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 422
    assert r.json()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'
    )


def _apply(cluster: Cluster, body: dict[str, Any], manager: str, force: bool = False) -> httpx.Response:
    query = f"fieldManager={manager}" + ("&force=true" if force else "")
    return httpx.patch(
        f"{cluster.url}/api/v1/namespaces/default/pods/p?{query}",
        content=json.dumps(body).encode(),
        headers=APPLY,
    )


def test_a_conflict_is_a_409_with_one_cause_per_field(cluster: Cluster) -> None:
    assert _apply(cluster, POD, "one").status_code == 201
    other = {
        **POD,
        "metadata": {"name": "p", "labels": {"app": "two"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    r = _apply(cluster, other, "two")
    assert r.status_code == 409
    body = r.json()
    assert body["reason"] == "Conflict"
    assert body["message"] == (
        'Apply failed with 2 conflicts: conflicts with "one":\n- .metadata.labels.app\n- .spec.containers[name="c"].image'
    )
    assert body["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "one"', "field": ".metadata.labels.app"},
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "one"',
            "field": '.spec.containers[name="c"].image',
        },
    ]
    forced = _apply(cluster, other, "two", force=True)
    assert forced.status_code == 200
    assert [e["manager"] for e in forced.json()["metadata"]["managedFields"]] == ["one", "two"]


def test_an_apply_carrying_managed_fields_is_refused(cluster: Cluster) -> None:
    body = {**POD, "metadata": {**POD["metadata"], "managedFields": [{"manager": "x"}]}}
    r = _apply(cluster, body, "one")
    assert r.status_code == 400
    assert r.json()["message"] == "metadata.managedFields must be nil"


def test_a_no_op_apply_writes_nothing(cluster: Cluster) -> None:
    first = _apply(cluster, POD, "one").json()
    again = _apply(cluster, POD, "one").json()
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


def test_a_status_write_records_a_status_entry(cluster: Cluster) -> None:
    created = httpx.post(
        f"{cluster.url}/api/v1/namespaces/default/pods?fieldManager=creator", json=POD
    ).json()
    created["status"] = {**created.get("status", {}), "phase": "Running"}
    r = httpx.put(f"{cluster.url}/api/v1/namespaces/default/pods/p/status?fieldManager=kubelet", json=created)
    assert r.status_code == 200, r.text
    entries = r.json()["metadata"]["managedFields"]
    assert [(e["manager"], e.get("subresource", "")) for e in entries] == [
        ("creator", ""),
        ("kubelet", "status"),
    ]
    assert entries[1]["fieldsV1"] == {"f:status": {"f:phase": {}}}


def test_the_python_client_applies_with_the_apply_content_type(cluster: Cluster) -> None:
    k8s = pytest.importorskip(
        "kubernetes.client", reason="the official kubernetes Python client is not installed"
    )
    with k8s.ApiClient(k8s.Configuration(host=cluster.url)) as api_client:
        core = k8s.CoreV1Api(api_client)
        core.patch_namespaced_pod(
            "p", "default", POD, field_manager="py-apply", _content_type="application/apply-patch+yaml"
        )
        got = core.read_namespaced_pod("p", "default")
    assert [(e.manager, e.operation) for e in got.metadata.managed_fields] == [("py-apply", "Apply")]


def test_an_apply_to_scale_is_answered_with_a_not_modelled_warning(cluster: Cluster) -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    }
    assert (
        httpx.post(f"{cluster.url}/apis/apps/v1/namespaces/default/deployments", json=deployment).status_code
        == 201
    )
    body = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "web"},
        "spec": {"replicas": 3},
    }
    r = httpx.patch(
        f"{cluster.url}/apis/apps/v1/namespaces/default/deployments/web/scale?fieldManager=hpa",
        content=json.dumps(body).encode(),
        headers=APPLY,
    )
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["replicas"] == 3
    assert "not modelled: an apply to /scale" in r.headers["warning"]


def test_a_remote_component_is_recorded_under_its_user_agents_name(cluster: Cluster) -> None:
    store = RemoteStore(
        Connection(server=cluster.url), user_agent="kube-scheduler/v1.35.0 (linux/amd64) kubetaint"
    )
    try:
        created = store.create("pods", {**POD, "metadata": {"name": "p", "namespace": "default"}})
    finally:
        store.close()
    assert [(e["manager"], e["operation"]) for e in created["metadata"]["managedFields"]] == [
        ("kube-scheduler", "Update")
    ]
