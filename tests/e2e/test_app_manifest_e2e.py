"""An ordinary application manifest on `kubetaint up` with the real kubectl: one `kubectl apply -f`
of a Namespace, ServiceAccount, ConfigMap, Secret, Service, Deployment, StatefulSet, Job and
CronJob succeeds without a warning (kubetaint runs every one of them); `kubectl get` prints
upstream's columns; every namespace has its default
ServiceAccount and `default/kubernetes` holds the first service IP."""

from __future__ import annotations

import base64
import ipaddress
import json
import subprocess
import time
from collections.abc import Iterator

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

MANIFEST = """apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: web, namespace: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: shop}
data:
  LOG_LEVEL: info
  app.properties: "color=blue"
---
apiVersion: v1
kind: Secret
metadata: {name: web-secret, namespace: shop}
type: Opaque
stringData: {password: s3cret}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      serviceAccountName: web
      containers: [{name: web, image: "nginx:1.27"}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "postgres:16"}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: busybox}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: report, namespace: shop}
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: report, image: busybox}]
"""


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    server = UpServer(tmp_path_factory.mktemp("up-app"), "--nodes", "2").start()
    yield server
    server.kill()


@pytest.fixture(scope="module")
def applied(up: UpServer) -> subprocess.CompletedProcess[str]:
    manifest = up.workdir / "app.yaml"
    manifest.write_text(MANIFEST)
    return up.kubectl("apply", "-f", str(manifest))


@pytest.fixture
def server(up: UpServer, applied: subprocess.CompletedProcess[str]) -> UpServer:
    return up


def _table(server: UpServer, *args: str) -> list[list[str]]:
    out = server.kubectl("get", *args, "-n", "shop").stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def test_one_apply_creates_every_object(applied: subprocess.CompletedProcess[str]) -> None:
    assert applied.stdout.splitlines() == [
        "namespace/shop created",
        "serviceaccount/web created",
        "configmap/web-config created",
        "secret/web-secret created",
        "service/web created",
        "deployment.apps/web created",
        "statefulset.apps/db created",
        "job.batch/migrate created",
        "cronjob.batch/report created",
    ]


def test_the_workloads_are_created_without_a_warning(applied: subprocess.CompletedProcess[str]) -> None:
    assert [line for line in applied.stderr.splitlines() if line.startswith("Warning:")] == []


def test_get_prints_upstreams_columns(server: UpServer) -> None:
    assert _table(server, "configmap", "web-config")[0] == ["NAME", "DATA", "AGE"]
    assert _table(server, "configmap", "web-config")[1][:2] == ["web-config", "2"]
    assert _table(server, "secret", "web-secret")[0] == ["NAME", "TYPE", "DATA", "AGE"]
    assert _table(server, "secret", "web-secret")[1][:3] == ["web-secret", "Opaque", "1"]
    assert _table(server, "sa", "web")[0] == ["NAME", "SECRETS", "AGE"]
    header, row = _table(server, "svc", "web")
    assert header == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert row[:2] == ["web", "ClusterIP"] and row[3:5] == ["<none>", "80/TCP"]
    assert ipaddress.IPv4Address(row[2]) in ipaddress.IPv4Network("10.96.0.0/12")
    assert _table(server, "sts", "db")[0] == ["NAME", "READY", "AGE"]
    eventually(lambda: _table(server, "sts", "db")[1][:2] == ["db", "1/1"] or None, "db-0 to be ready")
    assert _table(server, "job", "migrate")[0] == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    eventually(
        lambda: _table(server, "job", "migrate")[1][:3] == ["migrate", "Complete", "1/1"] or None,
        "the job to complete",
    )
    assert _table(server, "cronjob", "report")[0] == [
        "NAME",
        "SCHEDULE",
        "TIMEZONE",
        "SUSPEND",
        "ACTIVE",
        "LAST",
        "SCHEDULE",
        "AGE",
    ]
    assert _table(server, "cronjob", "report")[1][:7] == ["report", "0", "*", "*", "*", "*", "<none>"]


def test_the_deployment_runs_and_the_secret_is_stored_as_data(server: UpServer) -> None:
    eventually(lambda: _table(server, "deploy", "web")[1][1] == "2/2" or None, "the deployment to be ready")
    data = server.kubectl(
        "get", "secret", "web-secret", "-n", "shop", "-o", "jsonpath={.data.password}"
    ).stdout
    assert base64.b64decode(data) == b"s3cret"


def test_every_namespace_has_its_default_service_account(server: UpServer) -> None:
    def listed() -> bool | None:
        out = server.kubectl("get", "sa", "-A", "--no-headers").stdout
        found = {tuple(line.split()[:2]) for line in out.splitlines() if line.strip()}
        wanted = {
            (ns, "default") for ns in ("default", "kube-system", "kube-public", "kube-node-lease", "shop")
        }
        return wanted <= found or None

    eventually(listed, "a default ServiceAccount in every namespace")


def test_the_kubernetes_service_holds_the_first_service_ip(server: UpServer) -> None:
    row = server.kubectl("get", "svc", "kubernetes", "-n", "default", "--no-headers").stdout.split()
    assert row[:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]


def test_a_taken_cluster_ip_is_refused_in_upstreams_words(server: UpServer) -> None:
    taken = server.kubectl("get", "svc", "web", "-n", "shop", "-o", "jsonpath={.spec.clusterIP}").stdout
    manifest = server.workdir / "clash.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: clash, namespace: shop}\n"
        f"spec: {{clusterIP: {taken}, ports: [{{port: 80}}]}}\n"
    )
    result = server.kubectl("apply", "-f", str(manifest), ok=False)
    assert result.returncode == 1
    assert (
        f'The Service "clash" is invalid: spec.clusterIPs: Invalid value: []string{{"{taken}"}}: '
        f"failed to allocate IP {taken}: provided IP is already allocated"
    ) in result.stderr


def test_a_config_map_is_watchable(server: UpServer) -> None:
    path = "/api/v1/namespaces/shop/configmaps"
    version = server.get(path).json()["metadata"]["resourceVersion"]
    with server.stream(path, {"watch": "1", "resourceVersion": version}) as response:
        patch = '{"data":{"LOG_LEVEL":"debug"}}'
        server.kubectl("patch", "configmap", "web-config", "-n", "shop", "--type=merge", "-p", patch)
        event = json.loads(next(response.iter_lines()))
    assert (event["type"], event["object"]["data"]["LOG_LEVEL"]) == ("MODIFIED", "debug")


def test_field_selectors_of_secrets_and_jobs(server: UpServer) -> None:
    opaque = server.kubectl("get", "secrets", "-n", "shop", "--field-selector", "type=Opaque", "-o", "name")
    assert opaque.stdout.split() == ["secret/web-secret"]

    def completed() -> bool | None:
        done = server.kubectl(
            "get", "jobs", "-n", "shop", "--field-selector", "status.successful=1", "-o", "name"
        )
        return done.stdout.split() == ["job.batch/migrate"] or None

    eventually(completed, "the job to have one successful pod")


def test_deleting_the_namespace_removes_every_object_and_pod_in_it(server: UpServer) -> None:
    """Last in this module: the namespace goes, with its StatefulSet's, Job's and Deployment's pods."""
    eventually(lambda: _table(server, "sts", "db")[1][1] == "1/1" or None, "db-0 to be ready")
    assert server.kubectl("delete", "ns", "shop", "--wait=false").stdout.strip() == 'namespace "shop" deleted'

    # pods first (gracefully), then the rest: about 16 s, as upstream requeues after half the
    # pods' 30 s grace period, plus one
    deadline = time.monotonic() + 45
    while server.kubectl("get", "ns", "shop", ok=False).returncode == 0:
        assert time.monotonic() < deadline, "shop was not removed"
        time.sleep(0.5)
    kinds = "pods,deployments,replicasets,statefulsets,jobs,cronjobs,services,configmaps,secrets"
    left = server.kubectl("get", kinds, "-n", "shop", "--no-headers", "-o", "name")
    assert left.stdout.split() == []
