"""End to end with the real kubectl: `kubectl explain` on the served OpenAPI v3 schemas,
client-side apply computing strategic merge patches from them, and unknown fields rejected as a
real cluster rejects them (kubectl-wire.md §4.9, §4.10, §4.15, §9)."""

from __future__ import annotations

import pytest

from .test_kubectl import KUBECTL, Cluster, cluster

__all__ = ["cluster"]

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]

TOLERATING_POD = """apiVersion: v1
kind: Pod
metadata: {name: tol, labels: {app: a}}
spec:
  containers:
  - {name: main, image: "nginx:1.25"}
  - {name: side, image: busybox}
  tolerations:
  - {key: k1, operator: Exists, effect: NoSchedule}
  - {key: k2, operator: Equal, value: v, effect: NoExecute, tolerationSeconds: 60}
"""


@pytest.mark.parametrize(
    ("args", "lines"),
    [
        pytest.param(
            ["pods"],
            [
                "KIND:       Pod",
                "VERSION:    v1",
                "    Pod is a collection of containers that can run on a host. This resource is",
                "  spec\t<PodSpec>",
                "  status\t<PodStatus>",
            ],
            id="explain pods prints the kind, its description and its fields",
        ),
        pytest.param(
            ["pod.spec.tolerations"],
            [
                "FIELD: tolerations <[]Toleration>",
                "    If specified, the pod's tolerations.",
                "  effect\t<string>",
                "  enum: NoExecute, NoSchedule, PreferNoSchedule",
                "  operator\t<string>",
                "  enum: Equal, Exists, Gt, Lt",
                "  tolerationSeconds\t<integer>",
            ],
            id="explain pod.spec.tolerations lists the toleration fields with their enums",
        ),
        pytest.param(
            ["nodes.spec.taints"],
            [
                "FIELD: taints <[]Taint>",
                "  effect\t<string> -required-",
                "  key\t<string> -required-",
                "  timeAdded\t<string>",
            ],
            id="explain nodes.spec.taints marks key and effect required",
        ),
        pytest.param(
            ["nodes.spec.taints.effect"],
            ["FIELD: effect <string>", "ENUM:", "    NoExecute", "    PreferNoSchedule"],
            id="explain of a single enum field prints the ENUM block",
        ),
        pytest.param(
            ["deployments.spec", "--recursive"],
            [
                "GROUP:      apps",
                "KIND:       Deployment",
                "FIELD: spec <DeploymentSpec>",
                "  selector\t<LabelSelector> -required-",
                "  template\t<PodTemplateSpec> -required-",
                "      tolerations\t<[]Toleration>",
            ],
            id="explain deployments.spec --recursive walks into the pod template",
        ),
        pytest.param(
            ["pdb.spec"],
            ["GROUP:      policy", "KIND:       PodDisruptionBudget", "  maxUnavailable\t<string>"],
            id="explain by short name in a named group",
        ),
        pytest.param(
            ["runtimeclasses"],
            ["GROUP:      node.k8s.io", "KIND:       RuntimeClass", "  handler\t<string> -required-"],
            id="explain runtimeclasses",
        ),
        pytest.param(
            ["priorityclasses.value"],
            ["GROUP:      scheduling.k8s.io", "FIELD: value <integer>"],
            id="explain priorityclasses.value",
        ),
        pytest.param(["leases.spec"], ["FIELD: spec <LeaseSpec>", "  holderIdentity\t<string>"], id="leases"),
    ],
)
def test_explain_prints_upstream_schemas(cluster: Cluster, args: list[str], lines: list[str]) -> None:
    out = cluster.kubectl("explain", *args).stdout.splitlines()
    for line in lines:
        assert line in out


def test_explain_of_a_missing_field_fails_as_upstream(cluster: Cluster) -> None:
    result = cluster.kubectl("explain", "pods.spec.nope", ok=False)
    assert result.returncode != 0
    assert 'error: field "nope" does not exist' in result.stderr


def test_apply_twice_patches_containers_by_name_and_replaces_tolerations(cluster: Cluster) -> None:
    manifest = cluster.workdir / "tol.yaml"
    manifest.write_text(TOLERATING_POD)
    assert cluster.kubectl("apply", "-f", "tol.yaml").stdout.strip() == "pod/tol created"
    assert cluster.kubectl("apply", "-f", "tol.yaml").stdout.strip() == "pod/tol unchanged"
    manifest.write_text(
        TOLERATING_POD.replace("nginx:1.25", "nginx:1.26")
        .replace("{app: a}", "{app: a, tier: web}")
        .replace(
            "{key: k2, operator: Equal, value: v, effect: NoExecute, tolerationSeconds: 60}", "{key: k3}"
        )
    )
    result = cluster.kubectl("apply", "-f", "tol.yaml", "-v=8")
    assert "pod/tol configured" in result.stdout
    patch_lines = [line for line in result.stderr.splitlines() if "$setElementOrder/containers" in line]
    assert patch_lines, "kubectl sent no strategic merge patch"
    pod = cluster.store.get("pods", "default", "tol")
    assert [c["image"] for c in pod["spec"]["containers"]] == ["nginx:1.26", "busybox"]
    assert [t["key"] for t in pod["spec"]["tolerations"]] == ["k1", "k3"]
    assert pod["metadata"]["labels"] == {"app": "a", "tier": "web"}


def _workload(kind_status: dict[str, int], **spec: object) -> dict[str, object]:
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "containers": [{"name": "main", "image": "nginx:1.25"}, {"name": "side", "image": "busybox"}]
        },
    }
    return {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template, **spec},
        "status": kind_status,
    }


def test_get_workloads_wide_prints_upstream_columns(cluster: Cluster) -> None:
    store = cluster.store
    store.create("deployments.apps", _workload({"readyReplicas": 2, "updatedReplicas": 3}, replicas=3))
    store.create("replicasets.apps", _workload({"replicas": 3, "readyReplicas": 1}, replicas=3))
    daemon = _workload({"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberAvailable": 1})
    daemon["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}  # type: ignore[index]
    store.create("daemonsets.apps", daemon)
    out = cluster.kubectl("get", "deployments,replicasets,daemonsets", "-o", "wide").stdout.splitlines()
    rows = [line.split() for line in out if line.strip()]
    assert rows[0] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert rows[1] == [
        "deployment.apps/web",
        "2/3",
        "3",
        "0",
        "0s",
        "main,side",
        "nginx:1.25,busybox",
        "app=web",
    ]
    assert rows[2] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert rows[3] == [
        "replicaset.apps/web",
        "3",
        "3",
        "1",
        "0s",
        "main,side",
        "nginx:1.25,busybox",
        "app=web",
    ]
    assert rows[4] == [
        "NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE",
        "NODE", "SELECTOR", "AGE", "CONTAINERS", "IMAGES", "SELECTOR",
    ]  # fmt: skip
    assert rows[5] == [
        "daemonset.apps/web", "2", "2", "0", "0", "1", "disk=ssd", "0s", "main,side", "nginx:1.25,busybox", "app=web",
    ]  # fmt: skip
    narrow = cluster.kubectl("get", "daemonsets").stdout.splitlines()
    assert narrow[0].split() == [
        "NAME",
        "DESIRED",
        "CURRENT",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "NODE",
        "SELECTOR",
        "AGE",
    ]
