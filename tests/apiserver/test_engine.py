"""The server on the shared engine (the control plane's registry): admission defaults, 422 validation bodies,
admission rejections, pods/binding and pods/eviction with PodDisruptionBudgets (429)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.controlplane import ControlPlane

from .builders import node, pod

PODS = "/api/v1/namespaces/default/pods"
PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"


def _pdb(name: str, allowed: int, current: int, desired: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minAvailable": desired, "selector": {"matchLabels": {"app": "web"}}},
    }, {
        "disruptionsAllowed": allowed,
        "currentHealthy": current,
        "desiredHealthy": desired,
        "expectedPods": current,
        "observedGeneration": 1,
    }


def _running_ready(plane: ControlPlane, name: str) -> None:
    current = plane.store.get("pods", "default", name)
    status = {
        **current["status"],
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
    }
    plane.store.update("pods", {**current, "status": status})


def test_a_created_pod_gets_the_default_not_ready_and_unreachable_tolerations(
    engine_client: TestClient,
) -> None:
    response = engine_client.post(PODS, json=pod("web"))
    assert response.status_code == 201
    tolerations = response.json()["spec"]["tolerations"]
    assert sorted((t["key"], t["tolerationSeconds"]) for t in tolerations) == [
        ("node.kubernetes.io/not-ready", 300),
        ("node.kubernetes.io/unreachable", 300),
    ]


def test_an_invalid_taint_effect_is_a_422_with_upstreams_metadata_taints_path(
    engine_client: TestClient,
) -> None:
    response = engine_client.post(
        "/api/v1/nodes", json=node("n1", taints=[{"key": "k", "value": "v", "effect": "Sometimes"}])
    )
    assert response.status_code == 422
    body = response.json()
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        'Node "n1" is invalid: metadata.taints[0].effect: Unsupported value: "Sometimes": '
        'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
    )
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", '
            '"NoExecute"',
            "field": "metadata.taints[0].effect",
        }
    ]


def test_an_invalid_patch_is_rejected_and_nothing_is_written(
    engine_client: TestClient, plane: ControlPlane
) -> None:
    assert engine_client.post("/api/v1/nodes", json=node("n1")).status_code == 201
    before = plane.store.get("nodes", "", "n1")
    response = engine_client.patch(
        "/api/v1/nodes/n1",
        json={"spec": {"taints": [{"key": "k", "effect": ""}]}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 422
    assert "metadata.taints[0].effect: Required value" in response.json()["message"]
    assert plane.store.get("nodes", "", "n1") == before


def test_a_pod_in_a_missing_priority_class_is_forbidden_by_admission(engine_client: TestClient) -> None:
    body = pod("web")
    body["spec"]["priorityClassName"] = "nope"
    response = engine_client.post(PODS, json=body)
    assert response.status_code == 403
    assert response.json()["reason"] == "Forbidden"
    assert "no PriorityClass with name nope was found" in response.json()["message"]


def test_binding_assigns_the_node_without_pod_update_validation(
    engine_client: TestClient, plane: ControlPlane
) -> None:
    engine_client.post(PODS, json=pod("web"))
    binding = {"metadata": {"name": "web"}, "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
    response = engine_client.post(f"{PODS}/web/binding", json=binding)
    assert response.status_code == 201
    assert plane.store.get("pods", "default", "web")["spec"]["nodeName"] == "n1"


def test_binding_replaces_an_unschedulable_pod_scheduled_condition_like_update_pod_condition(
    engine_client: TestClient, plane: ControlPlane
) -> None:
    created = engine_client.post(PODS, json=pod("late")).json()
    failed = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/1 nodes are available: 1 node(s) had untolerated taint(s).",
    }
    created["status"] = {**created.get("status", {}), "conditions": [failed]}
    assert engine_client.put(f"{PODS}/late/status", json=created).status_code == 200
    binding = {"metadata": {"name": "late"}, "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
    assert engine_client.post(f"{PODS}/late/binding", json=binding).status_code == 201
    conditions = plane.store.get("pods", "default", "late")["status"]["conditions"]
    scheduled = [c for c in conditions if c["type"] == "PodScheduled"]
    assert len(scheduled) == 1
    assert scheduled[0]["status"] == "True"
    assert "reason" not in scheduled[0] and "message" not in scheduled[0]


@pytest.mark.parametrize(
    ("allowed", "current", "desired", "code", "cause"),
    [
        pytest.param(
            0,
            2,
            2,
            429,
            "The disruption budget web-pdb needs 2 healthy pods and has 2 currently",
            id="a budget with no disruptions allowed answers 429 with upstream's cause",
        ),
        pytest.param(
            1, 3, 2, 201, None, id="a budget allowing one disruption lets the eviction delete the pod"
        ),
    ],
)
def test_eviction_honours_the_pod_disruption_budget(
    engine_client: TestClient,
    plane: ControlPlane,
    allowed: int,
    current: int,
    desired: int,
    code: int,
    cause: str | None,
) -> None:
    web = pod("web", labels={"app": "web"})
    engine_client.post(PODS, json=web)
    _running_ready(plane, "web")
    spec, status = _pdb("web-pdb", allowed, current, desired)
    created = plane.store.create("poddisruptionbudgets.policy", spec)
    plane.store.update("poddisruptionbudgets.policy", {**created, "status": status})
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "web", "namespace": "default"},
    }
    response = engine_client.post(f"{PODS}/web/eviction", json=eviction)
    assert response.status_code == code
    pods = [p["metadata"]["name"] for p in plane.store.list("pods", namespace="default").items]
    if cause is None:
        assert pods == []
        budget = engine_client.get(f"{PDBS}/web-pdb").json()
        assert budget["status"]["disruptionsAllowed"] == allowed - 1
        assert "web" in budget["status"]["disruptedPods"]
    else:
        assert pods == ["web"]
        body = response.json()
        assert body["reason"] == "TooManyRequests"
        assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
        assert body["details"]["causes"] == [{"reason": "DisruptionBudget", "message": cause}]
