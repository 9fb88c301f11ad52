"""The namespace storage over HTTP (pkg/registry/core/namespace/storage/storage.go and
strategy.go): creates get the `kubernetes` finalizer and phase Active; the first DELETE marks the
namespace Terminating and returns it; updates keep spec.finalizers and status; the `finalize`
subresource changes spec.finalizers and removes a finalized namespace being deleted; the
NamespaceLifecycle admission of the engine refuses content in missing and terminating namespaces."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

JSON = dict[str, Any]
NS = "/api/v1/namespaces"


def create(client: TestClient, name: str, **spec: Any) -> JSON:
    body: JSON = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    if spec:
        body["spec"] = spec
    response = client.post(NS, json=body)
    assert response.status_code == 201, response.text
    created: JSON = response.json()
    return created


def test_a_created_namespace_is_active_with_the_kubernetes_finalizer(client: TestClient) -> None:
    created = create(client, "a", finalizers=["example.com/x"])
    assert created["spec"]["finalizers"] == ["example.com/x", "kubernetes"]
    assert created["status"] == {"phase": "Active"}
    assert created["metadata"]["labels"] == {"kubernetes.io/metadata.name": "a"}


def test_delete_marks_terminating_and_finalize_removes_it(client: TestClient) -> None:
    create(client, "a")
    first = client.delete(f"{NS}/a")
    assert first.status_code == 200
    marked = first.json()
    assert marked["kind"] == "Namespace" and marked["status"]["phase"] == "Terminating"
    assert marked["metadata"]["deletionTimestamp"] and marked["spec"]["finalizers"] == ["kubernetes"]
    again = client.delete(f"{NS}/a").json()
    assert again["metadata"]["resourceVersion"] == marked["metadata"]["resourceVersion"]

    # an ordinary update keeps spec.finalizers and the status
    updated = client.put(
        f"{NS}/a", json={**marked, "spec": {"finalizers": []}, "status": {"phase": "Active"}}
    )
    assert updated.status_code == 200, updated.text
    assert updated.json()["spec"]["finalizers"] == ["kubernetes"]
    assert updated.json()["status"]["phase"] == "Terminating"

    finalized = client.put(f"{NS}/a/finalize", json={**updated.json(), "spec": {"finalizers": []}})
    assert finalized.status_code == 200, finalized.text
    assert client.get(f"{NS}/a").status_code == 404


def test_finalize_of_a_live_namespace_keeps_it(client: TestClient) -> None:
    created = create(client, "a")
    finalized = client.put(f"{NS}/a/finalize", json={**created, "spec": {"finalizers": []}})
    assert finalized.status_code == 200
    assert finalized.json()["spec"]["finalizers"] == [] and finalized.json()["status"]["phase"] == "Active"
    # nothing holds it now: the first delete marks it, the next one removes it
    assert client.delete(f"{NS}/a").json()["status"]["phase"] == "Terminating"
    assert client.delete(f"{NS}/a").status_code == 200
    assert client.get(f"{NS}/a").status_code == 404


def test_a_uid_precondition_that_does_not_match_is_a_conflict(client: TestClient) -> None:
    create(client, "a")
    response = client.request("DELETE", f"{NS}/a", json={"preconditions": {"uid": "other"}})
    assert response.status_code == 409


def test_the_engine_refuses_content_in_missing_and_terminating_namespaces(engine_client: TestClient) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    missing = engine_client.post(f"{NS}/missing/configmaps", json=cm)
    assert missing.status_code == 404
    assert missing.json()["message"] == 'namespaces "missing" not found'
    assert engine_client.post(NS, json={"metadata": {"name": "t"}}).status_code == 201
    assert engine_client.delete(f"{NS}/t").status_code == 200
    refused = engine_client.post(f"{NS}/t/configmaps", json=cm)
    assert refused.status_code == 403
    body = refused.json()
    assert body["message"] == (
        'configmaps "c" is forbidden: unable to create new content in namespace t because it is being terminated'
    )
    assert body["details"]["causes"] == [
        {
            "reason": "NamespaceTerminating",
            "message": "namespace t is being terminated",
            "field": "metadata.namespace",
        }
    ]
    immortal = engine_client.delete(f"{NS}/kube-system")
    assert immortal.status_code == 403
    assert (
        immortal.json()["message"]
        == 'namespaces "kube-system" is forbidden: this namespace may not be deleted'
    )


def test_a_spec_finalizer_must_be_standard_or_fully_qualified(engine_client: TestClient) -> None:
    body = {"metadata": {"name": "f"}, "spec": {"finalizers": ["foo"]}}
    refused = engine_client.post(NS, json=body)
    assert refused.status_code == 422
    assert refused.json()["message"] == (
        'Namespace "f" is invalid: spec.finalizers: Invalid value: "foo": '
        "name is neither a standard finalizer name nor is it fully qualified"
    )
    body["spec"] = {"finalizers": ["example.com/hold"]}
    assert engine_client.post(NS, json=body).json()["spec"]["finalizers"] == [
        "example.com/hold",
        "kubernetes",
    ]


def test_a_status_update_keeps_the_phase_consistent_with_the_deletion(engine_client: TestClient) -> None:
    created = engine_client.post(NS, json={"metadata": {"name": "s"}}).json()
    refused = engine_client.put(f"{NS}/s/status", json={**created, "status": {"phase": "Terminating"}})
    assert refused.status_code == 422
    assert refused.json()["message"] == (
        'Namespace "s" is invalid: status.Phase: Invalid value: "Terminating": '
        "may only be 'Active' if `deletionTimestamp` is empty"
    )
    marked = engine_client.delete(f"{NS}/s").json()
    refused = engine_client.put(f"{NS}/s/status", json={**marked, "status": {"phase": "Active"}})
    assert refused.status_code == 422
    assert refused.json()["message"] == (
        'Namespace "s" is invalid: status.Phase: Invalid value: "Active": '
        "may only be 'Terminating' if `deletionTimestamp` is not empty"
    )
