"""The scale subresource of Deployments and ReplicaSets, DeleteOptions propagation (finalizers
and deletionTimestamp instead of removal), and the workload table columns."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
MERGE = {"Content-Type": "application/merge-patch+json"}


def deployment(name: str = "web", replicas: int = 3) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


@pytest.fixture
def web(client: TestClient) -> dict[str, Any]:
    created = client.post(DEPLOYMENTS, json=deployment())
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    return body


def test_get_scale_reports_the_replicas_and_the_selector(client: TestClient, web: dict[str, Any]) -> None:
    got = client.get(f"{DEPLOYMENTS}/web/scale").json()
    assert (got["kind"], got["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert got["spec"] == {"replicas": 3}
    assert got["status"] == {"replicas": 0, "selector": "app=web"}
    assert got["metadata"]["uid"] == web["metadata"]["uid"]


def test_patching_the_scale_sets_the_deployment_replicas(client: TestClient, web: dict[str, Any]) -> None:
    patched = client.patch(f"{DEPLOYMENTS}/web/scale", json={"spec": {"replicas": 5}}, headers=MERGE)
    assert patched.status_code == 200 and patched.json()["spec"] == {"replicas": 5}
    assert client.get(f"{DEPLOYMENTS}/web").json()["spec"]["replicas"] == 5


def test_putting_a_scale_sets_the_deployment_replicas(client: TestClient, web: dict[str, Any]) -> None:
    scale = client.get(f"{DEPLOYMENTS}/web/scale").json()
    put = client.put(f"{DEPLOYMENTS}/web/scale", json={**scale, "spec": {"replicas": 1}})
    assert put.status_code == 200, put.text
    assert client.get(f"{DEPLOYMENTS}/web").json()["spec"]["replicas"] == 1


def test_a_negative_scale_is_invalid(client: TestClient, web: dict[str, Any]) -> None:
    refused = client.patch(f"{DEPLOYMENTS}/web/scale", json={"spec": {"replicas": -1}}, headers=MERGE)
    assert refused.status_code == 422
    assert refused.json()["message"] == (
        'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'
    )


def test_discovery_advertises_the_scale_subresources(client: TestClient) -> None:
    names = {r["name"] for r in client.get("/apis/apps/v1").json()["resources"]}
    assert {"deployments/scale", "replicasets/scale"} <= names


@pytest.mark.parametrize(
    ("options", "finalizers"),
    [
        pytest.param({"propagationPolicy": "Orphan"}, ["orphan"], id="orphan"),
        pytest.param({"propagationPolicy": "Foreground"}, ["foregroundDeletion"], id="foreground"),
        pytest.param({"orphanDependents": True}, ["orphan"], id="legacy orphanDependents"),
    ],
)
def test_a_propagating_delete_marks_the_object_and_returns_it(
    client: TestClient, web: dict[str, Any], options: dict[str, Any], finalizers: list[str]
) -> None:
    response = client.request("DELETE", f"{DEPLOYMENTS}/web", json=options)
    assert response.status_code == 200
    body = response.json()
    assert body["kind"] == "Deployment" and body["metadata"]["finalizers"] == finalizers
    assert body["metadata"]["deletionTimestamp"] and body["metadata"]["deletionGracePeriodSeconds"] == 0
    # removing the finalizer (what the garbage collector does) completes the deletion
    patch = {"metadata": {"finalizers": None}}
    assert client.patch(f"{DEPLOYMENTS}/web", json=patch, headers=MERGE).status_code == 200
    assert client.get(f"{DEPLOYMENTS}/web").status_code == 404


def test_a_background_delete_removes_the_object(client: TestClient, web: dict[str, Any]) -> None:
    response = client.request("DELETE", f"{DEPLOYMENTS}/web", json={"propagationPolicy": "Background"})
    assert response.status_code == 200 and response.json()["kind"] == "Status"
    assert client.get(f"{DEPLOYMENTS}/web").status_code == 404


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(
            {"propagationPolicy": "Sideways"},
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": '
            'supported values: "Foreground", "Background", "Orphan", "nil"',
            id="an unknown policy",
        ),
        pytest.param(
            {"propagationPolicy": "Orphan", "orphanDependents": True},
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": '
            "orphanDependents and deletionPropagation cannot be both set",
            id="both the policy and the legacy field",
        ),
    ],
)
def test_invalid_delete_options_are_refused(
    client: TestClient, web: dict[str, Any], options: dict[str, Any], message: str
) -> None:
    response = client.request("DELETE", f"{DEPLOYMENTS}/web", json=options)
    assert response.status_code == 422 and response.json()["message"] == message
    assert client.get(f"{DEPLOYMENTS}/web").status_code == 200


def test_deployment_and_replicaset_tables_have_kubectl_columns(
    client: TestClient, web: dict[str, Any]
) -> None:
    accept = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    table = client.get(DEPLOYMENTS, headers=accept).json()
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"]
    [row] = table["rows"]
    assert row["cells"][:4] == ["web", "0/3", 0, 0] and row["cells"][5:] == ["c", "nginx", "app=web"]
    rs_table = client.get("/apis/apps/v1/namespaces/default/replicasets", headers=accept).json()
    assert [c["name"] for c in rs_table["columnDefinitions"]][:5] == [
        "Name",
        "Desired",
        "Current",
        "Ready",
        "Age",
    ]
