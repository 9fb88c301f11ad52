"""Object metadata over HTTP and through the real kubectl: owner references and finalizers are
validated for every write, an update's preconditions (uid, resourceVersion) fail with 409 before
any validation error, and the update rules of metadata give 422 with upstream's causes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.controlplane import ControlPlane
from kubetaint.store.memory import MemoryStore

from .builders import kubectl_env
from .test_kubectl import KUBECTL, Cluster

PODS = "/api/v1/namespaces/default/pods"


def pod_body(**meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", **meta},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]},
    }


@pytest.fixture
def engine_cluster(plane: ControlPlane, tmp_path: Path) -> Iterator[Cluster]:
    """kubectl against the server on the shared engine (admission and validation as served)."""
    app = create_app(plane.store, plane.clock, plane.registry)
    with BackgroundServer(app) as server:
        env = kubectl_env(server.url, tmp_path)
        assert isinstance(plane.store, MemoryStore)
        yield Cluster(plane.store, plane.clock, env, tmp_path)


def test_create_with_an_owner_reference_lacking_its_uid_is_invalid(engine_client: TestClient) -> None:
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs"}
    response = engine_client.post(PODS, json=pod_body(ownerReferences=[owner]))
    assert response.status_code == 422
    body = response.json()
    assert (
        body["message"]
        == 'Pod "p" is invalid: metadata.ownerReferences.uid: Invalid value: "": must not be empty'
    )
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "": must not be empty',
            "field": "metadata.ownerReferences.uid",
        }
    ]


def test_replace_with_another_uid_is_a_conflict_even_when_invalid(engine_client: TestClient) -> None:
    created = engine_client.post(PODS, json=pod_body()).json()
    uid = created["metadata"]["uid"]
    changed = {**created, "metadata": {**created["metadata"], "uid": "other", "finalizers": ["bad name!"]}}
    response = engine_client.put(f"{PODS}/p", json=changed)
    assert response.status_code == 409
    assert response.json()["message"] == (
        'Operation cannot be fulfilled on pods "p": Precondition failed: '
        f"UID in precondition: other, UID in object meta: {uid}"
    )


def test_replace_setting_a_deletion_grace_period_is_invalid(engine_client: TestClient) -> None:
    created = engine_client.post(PODS, json=pod_body()).json()
    changed = {**created, "metadata": {**created["metadata"], "deletionGracePeriodSeconds": 5}}
    response = engine_client.put(f"{PODS}/p", json=changed)
    assert response.status_code == 422
    assert response.json()["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 5: field is immutable",
            "field": "metadata.deletionGracePeriodSeconds",
        }
    ]


def test_replace_without_system_fields_takes_them_from_the_stored_pod(engine_client: TestClient) -> None:
    created = engine_client.post(PODS, json=pod_body()).json()
    meta = {
        k: v for k, v in created["metadata"].items() if k not in ("uid", "creationTimestamp", "generation")
    }
    response = engine_client.put(f"{PODS}/p", json={**created, "metadata": {**meta, "labels": {"a": "b"}}})
    assert response.status_code == 200
    stored = response.json()["metadata"]
    assert stored["uid"] == created["metadata"]["uid"]
    assert stored["creationTimestamp"] == created["metadata"]["creationTimestamp"]


@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine")
def test_kubectl_replace_with_a_changed_uid_is_a_conflict(engine_cluster: Cluster) -> None:
    (engine_cluster.workdir / "pod.json").write_text(json.dumps(pod_body()))
    engine_cluster.kubectl("create", "-f", "pod.json")
    stored = json.loads(engine_cluster.kubectl("get", "pod", "p", "-o", "json").stdout)
    uid = stored["metadata"]["uid"]
    stored["metadata"]["uid"] = "0f0e0d0c-0000-4000-8000-000000000000"
    (engine_cluster.workdir / "changed.json").write_text(json.dumps(stored))
    result = engine_cluster.kubectl("replace", "-f", "changed.json", ok=False)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'Error from server (Conflict): error when replacing "changed.json": Operation cannot be '
        'fulfilled on pods "p": Precondition failed: UID in precondition: '
        f"0f0e0d0c-0000-4000-8000-000000000000, UID in object meta: {uid}"
    )


@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine")
def test_kubectl_replace_with_two_controllers_is_invalid(engine_cluster: Cluster) -> None:
    (engine_cluster.workdir / "pod.json").write_text(json.dumps(pod_body()))
    engine_cluster.kubectl("create", "-f", "pod.json")
    stored = json.loads(engine_cluster.kubectl("get", "pod", "p", "-o", "json").stdout)
    owners = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name, "uid": name, "controller": True}
        for name in ("a", "b")
    ]
    stored["metadata"]["ownerReferences"] = owners
    (engine_cluster.workdir / "changed.json").write_text(json.dumps(stored))
    result = engine_cluster.kubectl("replace", "-f", "changed.json", ok=False)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'The Pod "p" is invalid: metadata.ownerReferences: Invalid value: '
        '[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"a","uid":"a","controller":true},'
        '{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"b","uid":"b","controller":true}]: '
        'Only one reference can have Controller set to true. Found "true" in references for '
        "ReplicaSet/a and ReplicaSet/b"
    )
