"""`kubetaint up` end to end: kubectl's server-side apply of a Deployment (the GitOps round trip:
a toleration taken out of the manifest leaves the cluster) and test/cmd's node-management check
that `kubectl taint` leaves a `kubectl-taint` managedFields entry on a hollow node."""

from __future__ import annotations

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
