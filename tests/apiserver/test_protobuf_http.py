"""Protobuf request bodies over HTTP take the JSON write path: create, update, binding,
eviction and DELETE's DeleteOptions (preconditions, dryRun); bad bodies are 400s, never 5xx
(issue 8)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

from .builders import make_app, make_store, namespace, node, pod
from .protobuf_codec import encode_kind, envelope, key, length_delimited, text, varint

PROTOBUF = {"Content-Type": "application/vnd.kubernetes.protobuf"}
PODS = "/api/v1/namespaces/default/pods"
PCS = "/apis/scheduling.k8s.io/v1/priorityclasses"


def post(client: TestClient, path: str, obj: dict[str, Any], query: str = "") -> Any:
    return client.post(path + query, content=encode_kind(obj), headers=PROTOBUF)


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {
        "kind": "PriorityClass",
        "apiVersion": "scheduling.k8s.io/v1",
        "metadata": {"name": name, "creationTimestamp": None},
        "value": value,
    }


def delete_options(**fields: Any) -> bytes:
    return encode_kind({"kind": "DeleteOptions", "apiVersion": "v1", **fields})


def test_create_namespace_as_kubectl_does(client: TestClient, store: MemoryStore) -> None:
    body = {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "foo", "creationTimestamp": None}}
    response = post(
        client, "/api/v1/namespaces", {**body, "spec": {}, "status": {}}, "?fieldManager=kubectl-create"
    )
    assert response.status_code == 201, response.text
    assert response.headers["content-type"] == "application/json"
    created = store.get("namespaces", "", "foo")
    assert created["status"] == {"phase": "Active"} and created["metadata"]["creationTimestamp"]


def test_protobuf_and_json_bodies_store_the_same_object(client: TestClient) -> None:
    via_json = client.post(PCS, json=priority_class("a", 0)).json()
    via_protobuf = post(client, PCS, priority_class("b", 0)).json()
    for obj in (via_json, via_protobuf):
        obj["metadata"] = {
            k: v for k, v in obj["metadata"].items() if k not in ("name", "uid", "resourceVersion")
        }
    assert via_json == via_protobuf
    assert via_protobuf["value"] == 0


def test_dry_run_create_stores_nothing(client: TestClient, store: MemoryStore) -> None:
    response = post(client, PCS, priority_class("high", 1000), "?dryRun=All")
    assert response.status_code == 201 and response.json()["value"] == 1000
    assert client.get(f"{PCS}/high").status_code == 404


def test_admission_and_validation_apply_to_protobuf_bodies() -> None:
    """On the engine's hooks: a Deployment without containers is 422 as with JSON, and a
    PriorityClass gets its admission defaults."""
    from kubetaint.apiserver.app import create_app
    from kubetaint.controlplane import ControlPlane

    clock = VirtualClock()
    plane = ControlPlane(MemoryStore(clock), clock, seed=3)
    plane.ensure_system_namespaces()
    with TestClient(create_app(plane.store, plane.clock, plane.registry)) as client:
        huge = post(client, PCS, priority_class("huge", 2_000_000_000))
        assert huge.status_code == 422, huge.text
        assert huge.json()["reason"] == "Invalid"
        deployment = {
            "kind": "Deployment",
            "apiVersion": "apps/v1",
            "metadata": {"name": "web", "creationTimestamp": None},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}, "creationTimestamp": None},
                    "spec": {"containers": None},
                },
                "strategy": {},
            },
            "status": {},
        }
        response = post(client, "/apis/apps/v1/namespaces/default/deployments", deployment)
        assert response.status_code == 422, response.text
        json_response = client.post("/apis/apps/v1/namespaces/default/deployments", json=deployment)
        assert json_response.json() == response.json()


def test_update_with_a_protobuf_body(client: TestClient) -> None:
    created = post(client, PCS, priority_class("p", 1)).json()
    updated = {**priority_class("p", 1), "description": "d"}
    updated["metadata"] = {**updated["metadata"], "resourceVersion": created["metadata"]["resourceVersion"]}
    response = client.put(f"{PCS}/p", content=encode_kind(updated), headers=PROTOBUF)
    assert response.status_code == 200, response.text
    assert response.json()["description"] == "d"


def test_wrong_kind_for_the_url_is_400(client: TestClient) -> None:
    ns = {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "x"}}
    response = post(client, PCS, ns)
    assert response.status_code == 400
    assert response.json()["message"] == (
        "the API version in the data (v1) does not match the expected API version (scheduling.k8s.io/v1)"
    )


def test_unknown_kind_is_400(client: TestClient) -> None:
    response = client.post(PODS, content=envelope("v1", "PersistentVolumeClaim", b""), headers=PROTOBUF)
    assert response.status_code == 400
    assert response.json()["message"] == 'no kind "PersistentVolumeClaim" is registered for version "v1"'


def test_truncated_body_is_400(client: TestClient) -> None:
    raw = envelope("v1", "Pod", length_delimited(1, text(1, "web")))[:-3]
    response = client.post(PODS, content=raw, headers=PROTOBUF)
    assert response.status_code == 400 and response.json()["reason"] == "BadRequest"
    assert response.json()["message"] == "unexpected EOF"


def test_binding_and_eviction_bodies(client: TestClient, store: MemoryStore) -> None:
    store.create("nodes", node("n1"))
    store.create("pods", pod("web"))
    binding = {
        "kind": "Binding",
        "apiVersion": "v1",
        "metadata": {"name": "web", "creationTimestamp": None},
        "target": {"kind": "Node", "name": "n1"},
    }
    assert post(client, f"{PODS}/web/binding", binding).status_code == 201
    assert store.get("pods", "default", "web")["spec"]["nodeName"] == "n1"
    eviction = {
        "kind": "Eviction",
        "apiVersion": "policy/v1",
        "metadata": {"name": "web", "namespace": "default", "creationTimestamp": None},
        "deleteOptions": {"dryRun": ["All"]},
    }
    assert post(client, f"{PODS}/web/eviction", eviction).status_code == 201
    assert store.get("pods", "default", "web")  # a dry run
    eviction["deleteOptions"] = {}
    assert post(client, f"{PODS}/web/eviction", eviction).status_code == 201
    # bound, with no kubelet to finish it: graceful deletion leaves it Terminating
    assert client.get(f"{PODS}/web").json()["metadata"]["deletionGracePeriodSeconds"] == 30
    eviction["deleteOptions"] = {"gracePeriodSeconds": 0}
    assert post(client, f"{PODS}/web/eviction", eviction).status_code == 201
    assert client.get(f"{PODS}/web").status_code == 404


def test_delete_options_dry_run_keeps_the_pod(client: TestClient, store: MemoryStore) -> None:
    store.create("pods", pod("web"))
    body = delete_options(gracePeriodSeconds=5, dryRun=["All"])
    assert client.request("DELETE", f"{PODS}/web", content=body, headers=PROTOBUF).status_code == 200
    assert client.get(f"{PODS}/web").status_code == 200
    body = delete_options(gracePeriodSeconds=0, propagationPolicy="Background")
    assert client.request("DELETE", f"{PODS}/web", content=body, headers=PROTOBUF).status_code == 200
    assert client.get(f"{PODS}/web").status_code == 404


def test_delete_options_preconditions_are_honoured(client: TestClient, store: MemoryStore) -> None:
    uid = store.create("pods", pod("web"))["metadata"]["uid"]
    stale = delete_options(preconditions={"uid": "other"})
    response = client.request("DELETE", f"{PODS}/web", content=stale, headers=PROTOBUF)
    assert response.status_code == 409 and response.json()["reason"] == "Conflict"
    fresh = delete_options(preconditions={"uid": uid})
    assert client.request("DELETE", f"{PODS}/web", content=fresh, headers=PROTOBUF).status_code == 200


def test_delete_with_a_body_of_another_kind_is_400(client: TestClient, store: MemoryStore) -> None:
    store.create("pods", pod("web"))
    body = encode_kind(priority_class("x", 1))
    response = client.request("DELETE", f"{PODS}/web", content=body, headers=PROTOBUF)
    assert response.status_code == 400
    assert response.json()["message"] == "the kind in the data (PriorityClass) must be DeleteOptions"
    assert client.get(f"{PODS}/web").status_code == 200


def test_invalid_dry_run_value_in_delete_options_is_400(client: TestClient, store: MemoryStore) -> None:
    store.create("pods", pod("web"))
    body = envelope("v1", "DeleteOptions", text(5, "Some"))
    response = client.request("DELETE", f"{PODS}/web", content=body, headers=PROTOBUF)
    assert response.status_code == 400
    assert response.json()["message"] == 'dryRun: Unsupported value: "Some": supported values: "All"'


# fuzzing: random bytes after the magic never produce a 5xx -----------------------------------

_CLOCK = VirtualClock()
_STORE = make_store(_CLOCK)
_STORE.create("namespaces", namespace("default"))
_STORE.create("nodes", node("n1"))
_STORE.create("pods", pod("p"))
_CLIENT = TestClient(make_app(_STORE, _CLOCK), raise_server_exceptions=False)
_TARGETS = [
    ("POST", PODS),
    ("PUT", f"{PODS}/p"),
    ("POST", f"{PODS}/p/binding"),
    ("POST", f"{PODS}/p/eviction"),
    ("DELETE", f"{PODS}/missing"),
    ("POST", "/api/v1/namespaces"),
    ("POST", "/apis/apps/v1/namespaces/default/deployments"),
    ("POST", PCS),
]
_KINDS = [
    ("v1", "Pod"),
    ("v1", "Namespace"),
    ("apps/v1", "Deployment"),
    ("v1", "DeleteOptions"),
    ("v1", "Binding"),
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=st.sampled_from(_TARGETS), tail=st.binary(max_size=64))
def test_random_bytes_after_the_magic_are_never_5xx(target: tuple[str, str], tail: bytes) -> None:
    method, path = target
    response = _CLIENT.request(method, path, content=b"k8s\x00" + tail, headers=PROTOBUF)
    assert response.status_code < 500, response.text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=st.sampled_from(_TARGETS), kind=st.sampled_from(_KINDS), raw=st.binary(max_size=64))
def test_random_objects_in_a_valid_envelope_are_never_5xx(
    target: tuple[str, str], kind: tuple[str, str], raw: bytes
) -> None:
    method, path = target
    body = envelope(kind[0], kind[1], raw)
    response = _CLIENT.request(method, path, content=body, headers=PROTOBUF)
    assert response.status_code < 500, response.text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fields=st.lists(
        st.tuples(st.integers(1, 20), st.sampled_from([0, 1, 2, 5]), st.binary(max_size=12)), max_size=8
    )
)
def test_well_formed_random_fields_in_a_pod_are_never_5xx(fields: list[tuple[int, int, bytes]]) -> None:
    """Structurally valid protobuf with arbitrary field numbers and wire types."""
    raw = bytearray()
    for number, wire, payload in fields:
        if wire == 0:
            raw += key(number, 0) + varint(int.from_bytes(payload[:8] or b"\x00", "little"))
        elif wire == 1:
            raw += key(number, 1) + payload[:8].ljust(8, b"\x00")
        elif wire == 5:
            raw += key(number, 5) + payload[:4].ljust(4, b"\x00")
        else:
            raw += length_delimited(number, payload)
    spec = length_delimited(2, bytes(raw))
    response = _CLIENT.post(
        PODS, content=envelope("v1", "Pod", length_delimited(1, text(2, "f-")) + spec), headers=PROTOBUF
    )
    assert response.status_code < 500, response.text
