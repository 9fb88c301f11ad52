"""Bodies whose known fields have the wrong JSON type are rejected at decoding with a 400 and the
decoder's message, before hooks or the store see them (even with no admission/validation hooks)."""

from __future__ import annotations

import random
import warnings

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from kubetaint.apiserver.app import create_app
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {"containers": [{"name": "c", "image": "x"}]},
}


@pytest.fixture
def client() -> TestClient:
    store = MemoryStore(VirtualClock())
    app = create_app(store, VirtualClock(), rng=random.Random(0))
    test_client = TestClient(app)
    test_client.post("/api/v1/namespaces", json={"metadata": {"name": "default"}})
    return test_client


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param(
            {**POD, "spec": 5},
            "cannot unmarshal number into Go struct field Pod.spec",
            id="a number for the pod spec",
        ),
        pytest.param(
            {
                **POD,
                "spec": {
                    "containers": [{"name": "c", "image": "x"}],
                    "tolerations": [{"tolerationSeconds": "300"}],
                },
            },
            "cannot unmarshal string into Go struct field",
            id="a string for tolerationSeconds",
        ),
    ],
)
def test_put_and_post_with_wrong_types_are_400_and_store_nothing(
    client: TestClient, body: dict, fragment: str
) -> None:
    created = client.post("/api/v1/namespaces/default/pods", json=POD)
    assert created.status_code == 201
    put = client.put("/api/v1/namespaces/default/pods/p", json=body)
    assert put.status_code == 400, put.text
    status = put.json()
    assert status["reason"] == "BadRequest"
    assert status["message"].startswith('Pod in version "v1" cannot be handled as a Pod: json: ')
    assert fragment in status["message"]
    assert client.get("/api/v1/namespaces/default/pods/p").json()["spec"] == POD["spec"]
    client.delete("/api/v1/namespaces/default/pods/p")
    post = client.post("/api/v1/namespaces/default/pods", json=body)
    assert post.status_code == 400
    assert client.get("/api/v1/namespaces/default/pods/p").status_code == 404


def test_a_pod_created_with_limits_only_requests_its_limits_and_is_guaranteed(client: TestClient) -> None:
    resources = {"limits": {"cpu": "1", "memory": "1Gi"}}
    body = {**POD, "spec": {"containers": [{"name": "c", "image": "x", "resources": resources}]}}
    created = client.post("/api/v1/namespaces/default/pods", json=body)
    assert created.status_code == 201
    stored = created.json()
    assert stored["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert stored["status"]["qosClass"] == "Guaranteed"


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        pytest.param(
            "application/strategic-merge-patch+json", '{"spec": -415}', id="a strategic merge patch"
        ),
        pytest.param("application/merge-patch+json", '{"spec": "x"}', id="a JSON merge patch"),
        pytest.param(
            "application/json-patch+json",
            '[{"op": "replace", "path": "/spec", "value": 3}]',
            id="a JSON patch",
        ),
    ],
)
def test_a_patch_whose_result_cannot_be_decoded_is_400_and_stores_nothing(
    client: TestClient, content_type: str, body: str
) -> None:
    client.post("/api/v1/namespaces/default/pods", json=POD)
    before = client.get("/api/v1/namespaces/default/pods/p").json()
    response = client.patch(
        "/api/v1/namespaces/default/pods/p", content=body, headers={"Content-Type": content_type}
    )
    assert response.status_code == 400
    assert "cannot be handled as a Pod: json: cannot unmarshal" in response.json()["message"]
    assert client.get("/api/v1/namespaces/default/pods/p").json() == before
