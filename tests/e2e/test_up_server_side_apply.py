"""`kubetaint up` end to end: kubectl's server-side apply of a Deployment (the GitOps round trip:
a toleration taken out of the manifest leaves the cluster) and test/cmd's node-management check
that `kubectl taint` leaves a `kubectl-taint` managedFields entry on a hollow node."""

from __future__ import annotations

import time
from pathlib import Path

from .harness import UpServer

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
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


def test_kubectl_taint_leaves_its_managed_fields_entry(real_server: UpServer) -> None:
    # test/cmd/node-management.sh
    assert real_server.kubectl(
        "taint", "node", "node-2", "dedicated=foo:PreferNoSchedule"
    ).stdout.strip() == ("node/node-2 tainted")
    template = '{{range .metadata.managedFields}}{{if eq .manager "kubectl-taint"}}{{.manager}}{{end}}{{end}}'
    assert (
        real_server.kubectl("get", "nodes", "node-2", "-o", f"go-template={template}").stdout
        == "kubectl-taint"
    )
    real_server.kubectl("taint", "node", "node-2", "dedicated-")


def test_reapplying_a_deployment_without_a_toleration_removes_it(
    real_server: UpServer, workdir: Path
) -> None:
    manifest = workdir / "web.yaml"
    manifest.write_text(DEPLOYMENT + TOLERATION)
    applied = real_server.kubectl("apply", "--server-side", "-f", str(manifest)).stdout.strip()
    assert applied == "deployment.apps/web serverside-applied"
    jsonpath = "jsonpath={.spec.template.spec.tolerations[*].key}"
    assert real_server.kubectl("get", "deployment", "web", "-o", jsonpath).stdout == "dedicated"
    manifest.write_text(DEPLOYMENT)
    real_server.kubectl("apply", "--server-side", "-f", str(manifest))
    assert real_server.kubectl("get", "deployment", "web", "-o", jsonpath).stdout == ""
    managers = real_server.kubectl(
        "get",
        "deployment",
        "web",
        "-o",
        "jsonpath={.metadata.managedFields[*].manager}",
        "--show-managed-fields",
    ).stdout
    assert managers.split()[0] == "kubectl"


def _managers(server: UpServer, *target: str) -> list[str]:
    jsonpath = "jsonpath={range .metadata.managedFields[*]}{.manager}/{.subresource} {end}"
    return server.kubectl("get", *target, "-o", jsonpath, "--show-managed-fields").stdout.split()


def test_the_components_writes_carry_their_field_managers(real_server: UpServer, workdir: Path) -> None:
    manifest = workdir / "api.yaml"
    manifest.write_text(DEPLOYMENT.replace("name: web", "name: api").replace("app: web", "app: api"))
    real_server.kubectl("create", "-f", str(manifest))
    real_server.kubectl("rollout", "status", "deployment/api", "--timeout=60s")
    pod = real_server.kubectl("get", "pods", "-l", "app=api", "-o", "name").stdout.split()[0]
    deadline = time.monotonic() + 30
    while (managers := _managers(real_server, pod)) != ["kube-controller-manager/", "kubelet/status"]:
        assert time.monotonic() < deadline, managers
        time.sleep(0.5)
    assert _managers(real_server, "node", "node-1")[:2] == ["kubelet/", "kubelet/status"]
    # server-side apply meets the ReplicaSet's replicas the deployment controller owns
    replica_set = real_server.kubectl("get", "rs", "-l", "app=api", "-o", "name").stdout.split()[0]
    applied = workdir / "rs.yaml"
    applied.write_text(
        f"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: {replica_set.split('/')[1]}\n"
        "spec:\n  replicas: 5\n"
    )
    refused = real_server.kubectl("apply", "--server-side", "-f", str(applied), ok=False)
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[0] == (
        'error: Apply failed with 1 conflict: conflict with "kube-controller-manager" using apps/v1: '
        ".spec.replicas"
    )
    real_server.kubectl("delete", "deployment", "api")
