"""get/list/create/update/delete, status subresource, binding, deletecollection, dryRun and the
Status errors of bad requests (kubectl-wire.md §4, §5.2-5.4, §11)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.admission import AdmissionChain, AdmissionSettings, Attributes, ObjectLookup
from kubetaint.admission.plugin import AdmissionPlugin
from kubetaint.admission.settings import IMPLEMENTED_PLUGINS
from kubetaint.apiserver.rest import invalid
from kubetaint.clock import VirtualClock
from kubetaint.core.defaults import default_pod_requests
from kubetaint.core.qos import pod_qos_class
from kubetaint.registry import Registry
from kubetaint.store.memory import MemoryStore

from .builders import make_app, node, pod

PODS = "/api/v1/namespaces/default/pods"


def create_pod(client: TestClient, name: str = "web", **kwargs: Any) -> dict[str, Any]:
    response = client.post(PODS, json=pod(name, **kwargs))
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_create_returns_201_with_uid_timestamp_resource_version_and_pending_status(
    client: TestClient,
) -> None:
    created = create_pod(client)
    meta = created["metadata"]
    assert meta["uid"] and meta["resourceVersion"] and meta["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert created["kind"] == "Pod" and created["apiVersion"] == "v1"


def test_create_without_content_type_is_json_as_python_client_37_sends(client: TestClient) -> None:
    response = client.post(PODS, content=b'{"metadata":{"name":"a"},"spec":{"containers":[]}}')
    assert response.status_code == 201
    assert response.json()["metadata"]["namespace"] == "default"


def test_create_accepts_yaml(client: TestClient) -> None:
    body = b"metadata:\n  name: y\nspec:\n  containers: []\n"
    response = client.post(PODS, content=body, headers={"Content-Type": "application/yaml"})
    assert response.status_code == 201


def test_generate_name_appends_five_characters(client: TestClient) -> None:
    response = client.post(PODS, json={"metadata": {"generateName": "web-"}, "spec": {"containers": []}})
    name = response.json()["metadata"]["name"]
    assert name.startswith("web-") and len(name) == 9


def test_get_and_list_return_objects_and_typed_lists(client: TestClient) -> None:
    create_pod(client, "a")
    create_pod(client, "b")
    got = client.get(f"{PODS}/a").json()
    assert got["metadata"]["name"] == "a"
    listed = client.get(PODS).json()
    assert listed["kind"] == "PodList" and listed["apiVersion"] == "v1"
    assert [p["metadata"]["name"] for p in listed["items"]] == ["a", "b"]
    assert listed["metadata"]["resourceVersion"]


def test_empty_list_has_items_array_never_null(client: TestClient) -> None:
    body = client.get("/apis/policy/v1/poddisruptionbudgets").json()
    assert body == {
        "kind": "PodDisruptionBudgetList",
        "apiVersion": "policy/v1",
        "metadata": {"resourceVersion": body["metadata"]["resourceVersion"]},
        "items": [],
    }


def test_list_all_namespaces_with_label_and_field_selectors(client: TestClient, store: MemoryStore) -> None:
    store.create("pods", pod("x", "other", node_name="n1", labels={"app": "web"}))
    create_pod(client, "y", labels={"app": "db"})
    create_pod(client, "z", node_name="n1", labels={"app": "web"})
    names = lambda q: [p["metadata"]["name"] for p in client.get(f"/api/v1/pods?{q}").json()["items"]]  # noqa: E731
    assert names("labelSelector=app%3Dweb") == ["z", "x"] or names("labelSelector=app%3Dweb") == ["x", "z"]
    assert sorted(names("fieldSelector=spec.nodeName%3Dn1")) == ["x", "z"]
    assert names("fieldSelector=spec.nodeName%3D") == ["y"]
    assert sorted(names("fieldSelector=metadata.namespace!%3Ddefault")) == ["x"]


def test_limit_and_continue_page_through_a_list(client: TestClient) -> None:
    for name in "abc":
        create_pod(client, name)
    first = client.get(f"{PODS}?limit=2").json()
    assert [p["metadata"]["name"] for p in first["items"]] == ["a", "b"]
    token = first["metadata"]["continue"]
    second = client.get(PODS, params={"limit": 2, "continue": token}).json()
    assert [p["metadata"]["name"] for p in second["items"]] == ["c"]
    assert "continue" not in second["metadata"]


def test_cluster_scoped_create_get_and_delete_returns_success_status(client: TestClient) -> None:
    assert client.post("/api/v1/nodes", json=node("n1")).status_code == 201
    assert client.get("/api/v1/nodes/n1").json()["metadata"]["name"] == "n1"
    deleted = client.delete("/api/v1/nodes/n1")
    assert deleted.status_code == 200
    body = deleted.json()
    assert body["kind"] == "Status" and body["status"] == "Success"
    assert body["details"]["name"] == "n1" and body["details"]["kind"] == "nodes"
    assert client.get("/api/v1/nodes/n1").status_code == 404


def test_pod_delete_returns_the_pod_and_is_immediate(client: TestClient) -> None:
    create_pod(client)
    deleted = client.request(
        "DELETE",
        f"{PODS}/web",
        json={"propagationPolicy": "Background"},
        headers={"Content-Type": "application/json"},
    )
    assert deleted.status_code == 200 and deleted.json()["kind"] == "Pod"
    assert client.get(f"{PODS}/web").json()["reason"] == "NotFound"


def test_delete_with_an_empty_protobuf_delete_options_body(client: TestClient) -> None:
    create_pod(client)
    response = client.request(
        "DELETE",
        f"{PODS}/web",
        content=b"k8s\x00\x0a\x13\x0a\x02v1\x12\x0dDeleteOptions\x12\x00\x1a\x00\x22\x00",
        headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
    )
    assert response.status_code == 200


def test_delete_preconditions_conflict(client: TestClient) -> None:
    create_pod(client)
    response = client.request("DELETE", f"{PODS}/web", json={"preconditions": {"uid": "other"}})
    assert response.status_code == 409 and response.json()["reason"] == "Conflict"


def test_deletecollection_deletes_matching_objects(client: TestClient) -> None:
    create_pod(client, "a", labels={"app": "web"})
    create_pod(client, "b", labels={"app": "db"})
    response = client.delete(f"{PODS}?labelSelector=app%3Dweb")
    assert [p["metadata"]["name"] for p in response.json()["items"]] == ["a"]
    assert [p["metadata"]["name"] for p in client.get(PODS).json()["items"]] == ["b"]


def test_put_replaces_but_keeps_status_and_checks_resource_version(client: TestClient) -> None:
    created = create_pod(client)
    changed = {
        **created,
        "metadata": {**created["metadata"], "labels": {"v": "2"}},
        "status": {"phase": "Running"},
    }
    updated = client.put(f"{PODS}/web", json=changed)
    assert updated.status_code == 200
    assert updated.json()["metadata"]["labels"] == {"v": "2"}
    assert updated.json()["status"]["phase"] == "Pending"
    stale = client.put(f"{PODS}/web", json=changed)
    assert stale.status_code == 409
    assert stale.json()["message"] == (
        'Operation cannot be fulfilled on pods "web": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


def test_status_subresource_changes_only_status(client: TestClient) -> None:
    created = create_pod(client)
    body = {
        **created,
        "metadata": {**created["metadata"], "labels": {"x": "y"}},
        "status": {"phase": "Running"},
    }
    response = client.put(f"{PODS}/web/status", json=body)
    assert response.json()["status"] == {"phase": "Running"}
    assert "labels" not in response.json()["metadata"]  # the old (empty) labels, omitted as omitempty
    assert client.get(f"{PODS}/web/status").json()["status"]["phase"] == "Running"


def test_dry_run_create_and_delete_change_nothing(client: TestClient) -> None:
    response = client.post(f"{PODS}?dryRun=All", json=pod("dry"))
    assert response.status_code == 201 and "resourceVersion" not in response.json()["metadata"]
    assert client.get(f"{PODS}/dry").status_code == 404
    create_pod(client, "kept")
    assert client.delete(f"{PODS}/kept?dryRun=All").status_code == 200
    assert client.get(f"{PODS}/kept").status_code == 200


def test_bad_dry_run_value_is_400(client: TestClient) -> None:
    response = client.post(f"{PODS}?dryRun=Some", json=pod("dry"))
    assert response.status_code == 400
    assert response.json()["message"] == 'dryRun: Unsupported value: "Some": supported values: "All"'


def test_pod_binding_sets_node_and_scheduled_condition_then_conflicts(client: TestClient) -> None:
    create_pod(client)
    binding = {"metadata": {"name": "web"}, "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
    response = client.post(f"{PODS}/web/binding", json=binding)
    assert response.status_code == 201
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }
    bound = client.get(f"{PODS}/web").json()
    assert bound["spec"]["nodeName"] == "n1"
    assert {"type": "PodScheduled", "status": "True"} in bound["status"]["conditions"]
    again = client.post(f"{PODS}/web/binding", json=binding)
    assert again.status_code == 409
    assert again.json()["message"] == (
        'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n1"'
    )


def test_bindings_collection_binds_the_named_pod(client: TestClient) -> None:
    create_pod(client)
    response = client.post(
        "/api/v1/namespaces/default/bindings", json={"metadata": {"name": "web"}, "target": {"name": "n2"}}
    )
    assert response.status_code == 201
    assert client.get(f"{PODS}/web").json()["spec"]["nodeName"] == "n2"


@pytest.mark.parametrize(
    ("binding", "message"),
    [
        pytest.param(
            {"metadata": {"name": "web"}, "target": {}},
            'Binding "web" is invalid: target.name: Required value',
            id="binding without a target node is invalid",
        ),
        pytest.param(
            {"metadata": {"name": "web"}, "target": {"kind": "Pod", "name": "x"}},
            'Binding "web" is invalid: target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
            id="binding to something other than a node is invalid",
        ),
    ],
)
def test_invalid_bindings_are_422(client: TestClient, binding: dict[str, Any], message: str) -> None:
    create_pod(client)
    response = client.post(f"{PODS}/web/binding", json=binding)
    assert response.status_code == 422 and response.json()["message"] == message


def test_binding_a_missing_pod_is_404(client: TestClient) -> None:
    response = client.post(
        f"{PODS}/ghost/binding", json={"metadata": {"name": "ghost"}, "target": {"name": "n1"}}
    )
    assert response.status_code == 404 and response.json()["message"] == 'pods "ghost" not found'


def test_eviction_deletes_the_pod_with_201_status(client: TestClient) -> None:
    create_pod(client)
    body = {
        "kind": "Eviction",
        "apiVersion": "policy/v1",
        "metadata": {"name": "web", "namespace": "default"},
        "deleteOptions": {},
    }
    response = client.post(f"{PODS}/web/eviction", json=body)
    assert response.status_code == 201 and response.json()["status"] == "Success"
    assert client.get(f"{PODS}/web").status_code == 404


def test_non_core_resources_use_group_qualified_messages(client: TestClient) -> None:
    lease = {"metadata": {"name": "n1"}, "spec": {"holderIdentity": "n1"}}
    url = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
    assert client.post(url, json=lease).status_code == 201
    again = client.post(url, json=lease).json()
    assert again["message"] == 'leases.coordination.k8s.io "n1" already exists'
    assert again["details"] == {"name": "n1", "group": "coordination.k8s.io", "kind": "leases"}
    missing = client.get("/apis/scheduling.k8s.io/v1/priorityclasses/high").json()
    assert missing["message"] == 'priorityclasses.scheduling.k8s.io "high" not found'


# bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "code", "reason"),
    [
        pytest.param("POST", PODS, {"content": b"{not json"}, 400, "BadRequest", id="malformed JSON is 400"),
        pytest.param("POST", PODS, {"content": b"[1, 2]"}, 400, "BadRequest", id="a JSON array body is 400"),
        pytest.param(
            "POST",
            PODS,
            {"content": b"a: [", "headers": {"Content-Type": "application/yaml"}},
            400,
            "BadRequest",
            id="malformed YAML is 400",
        ),
        pytest.param(
            "POST",
            PODS,
            {"content": b"x", "headers": {"Content-Type": "text/plain"}},
            415,
            "UnsupportedMediaType",
            id="text/plain body is 415",
        ),
        pytest.param(
            "POST",
            PODS,
            {"content": b"k8s\x00", "headers": {"Content-Type": "application/vnd.kubernetes.protobuf"}},
            400,
            "BadRequest",
            id="a protobuf envelope without a kind is 400",
        ),
        pytest.param(
            "POST", PODS, {"json": {"metadata": {}}}, 422, "Invalid", id="no name nor generateName is 422"
        ),
        pytest.param(
            "POST",
            PODS,
            {"json": {"metadata": {"name": "a", "namespace": "other"}}},
            400,
            "BadRequest",
            id="namespace mismatch is 400",
        ),
        pytest.param(
            "POST",
            PODS,
            {"json": {"apiVersion": "apps/v1", "metadata": {"name": "a"}}},
            400,
            "BadRequest",
            id="another group version in the body is 400",
        ),
        pytest.param(
            "POST",
            PODS,
            {"json": {"kind": "Node", "metadata": {"name": "a"}}},
            400,
            "BadRequest",
            id="another kind in the body is 400",
        ),
        pytest.param(
            "POST",
            PODS,
            {"json": {"metadata": "x"}},
            400,
            "BadRequest",
            id="metadata that is not an object is 400",
        ),
        pytest.param(
            "POST",
            "/api/v1/pods",
            {"json": pod("a")},
            405,
            "MethodNotAllowed",
            id="create across all namespaces is 405",
        ),
        pytest.param("GET", "/api/v1/foos", {}, 404, "NotFound", id="unknown resource is 404"),
        pytest.param(
            "GET",
            "/api/v1/namespaces/default/nodes",
            {},
            404,
            "NotFound",
            id="cluster-scoped resource under a namespace is 404",
        ),
        pytest.param(
            "GET", "/api/v1/pods/x", {}, 404, "NotFound", id="namespaced object without namespace is 404"
        ),
        pytest.param("GET", f"{PODS}/a/logs", {}, 404, "NotFound", id="unknown subresource is 404"),
        pytest.param(
            "GET", f"{PODS}?labelSelector=a%20in%20(", {}, 400, "BadRequest", id="bad label selector is 400"
        ),
        pytest.param(
            "GET",
            f"{PODS}?fieldSelector=spec.foo%3Dx",
            {},
            400,
            "BadRequest",
            id="unsupported field label is 400",
        ),
        pytest.param("GET", f"{PODS}?limit=abc", {}, 400, "BadRequest", id="non-numeric limit is 400"),
        pytest.param(
            "GET", f"{PODS}?continue=%25%25%25", {}, 400, "BadRequest", id="bad continue token is 400"
        ),
        pytest.param(
            "GET",
            f"{PODS}?watch=maybe&timeoutSeconds=abc",
            {},
            400,
            "BadRequest",
            id="any watch value but false or 0 is a watch, whose non-numeric timeoutSeconds is 400",
        ),
        pytest.param(
            "GET",
            f"{PODS}?includeObject=All",
            {"headers": {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}},
            400,
            "BadRequest",
            id="unknown includeObject is 400",
        ),
        pytest.param(
            "PUT", f"{PODS}/a", {"json": pod("b")}, 400, "BadRequest", id="PUT with another name is 400"
        ),
        pytest.param(
            "PUT", f"{PODS}/a", {"json": pod("a")}, 404, "NotFound", id="PUT of a missing object is 404"
        ),
        pytest.param(
            "POST",
            f"{PODS}/a/status",
            {"json": {}},
            405,
            "MethodNotAllowed",
            id="POST to a status subresource is 405",
        ),
        pytest.param(
            "POST",
            f"{PODS}?fieldValidation=Loose",
            {"json": pod("a")},
            422,
            "Invalid",
            id="unknown fieldValidation is invalid CreateOptions",
        ),
    ],
)
def test_bad_requests_get_kube_status_errors(
    client: TestClient, method: str, path: str, kwargs: dict[str, Any], code: int, reason: str
) -> None:
    response = client.request(method, path, **kwargs)
    assert response.status_code == code, response.text
    body = response.json()
    assert (body["kind"], body["status"], body["reason"], body["code"]) == ("Status", "Failure", reason, code)


def test_missing_name_message_is_upstreams(client: TestClient) -> None:
    body = client.post(PODS, json={"metadata": {}}).json()
    assert (
        body["message"]
        == 'Pod "" is invalid: metadata.name: Required value: name or generateName is required'
    )


# admission and validation ------------------------------------------------------------------


class RecordingPlugin(AdmissionPlugin):
    """Labels every created object and records the requests it sees."""

    name = "Recording"
    operations = frozenset({"CREATE", "UPDATE", "DELETE"})
    mutating = True

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
        self.calls.append((attrs.operation, attrs.resource, attrs.subresource))
        obj = attrs.object
        if attrs.operation == "CREATE" and not attrs.subresource and obj is not None:
            meta = {**obj["metadata"], "labels": {**(obj["metadata"].get("labels") or {}), "admitted": "yes"}}
            return {**obj, "metadata": meta}
        return obj


def images_required(resource: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    """A validator refusing containers without an image."""
    containers = (obj.get("spec") or {}).get("containers") or []
    causes = [
        (f"spec.containers[{i}].image", "FieldValueRequired", "Required value")
        for i, c in enumerate(containers)
        if not c.get("image")
    ]
    if causes:
        raise invalid("Pod", obj["metadata"]["name"], causes)


def test_admission_and_validation_see_every_write(store: MemoryStore, clock: VirtualClock) -> None:
    plugin = RecordingPlugin()
    chain = AdmissionChain(AdmissionSettings(disable_admission_plugins=sorted(IMPLEMENTED_PLUGINS)))
    chain.add(plugin)
    registry = Registry(
        store, admission=chain, validator=images_required, clock=clock, graceful_pod_deletion=True
    )
    with TestClient(make_app(store, clock, registry)) as client:
        created = client.post(PODS, json=pod("a")).json()
        assert created["metadata"]["labels"] == {"admitted": "yes"}
        bad = pod("b")
        bad["spec"]["containers"] = [{"name": "main"}, {"name": "side"}]
        response = client.post(PODS, json=bad)
        assert response.status_code == 422
        assert response.json()["message"] == (
            'Pod "b" is invalid: [spec.containers[0].image: Required value, spec.containers[1].image: Required value]'
        )
        assert response.json()["details"]["causes"][0] == {
            "reason": "FieldValueRequired",
            "message": "Required value",
            "field": "spec.containers[0].image",
        }
        client.patch(
            f"{PODS}/a",
            json={"metadata": {"labels": {"x": "y"}}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        client.post(f"{PODS}/a/binding", json={"metadata": {"name": "a"}, "target": {"name": "n1"}})
        client.delete(f"{PODS}/a")
    assert plugin.calls == [
        ("CREATE", "pods", ""),
        ("CREATE", "pods", ""),
        ("UPDATE", "pods", ""),
        ("CREATE", "pods", "binding"),
        ("DELETE", "pods", ""),
    ]


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        pytest.param([{}], "BestEffort", id="no requests or limits is BestEffort"),
        pytest.param(
            [{"limits": {"cpu": "1", "memory": "1Gi"}}],
            "Guaranteed",
            id="limits only for cpu and memory is Guaranteed",
        ),
        pytest.param([{"requests": {"cpu": "1"}}], "Burstable", id="a cpu request alone is Burstable"),
        pytest.param(
            [{"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}}],
            "Burstable",
            id="requests below limits is Burstable",
        ),
    ],
)
def test_qos_class(resources: list[dict[str, Any]], expected: str) -> None:
    spec = {"containers": [{"name": f"c{i}", "resources": r} for i, r in enumerate(resources)]}
    # As the server classifies a created pod: SetDefaults_Pod first, then GetPodQOS.
    assert pod_qos_class(default_pod_requests({"spec": spec})) == expected


def test_new_namespace_is_active_with_the_kubernetes_finalizer(client: TestClient) -> None:
    created = client.post("/api/v1/namespaces", json={"metadata": {"name": "team"}}).json()
    assert created["status"] == {"phase": "Active"}
    assert created["spec"] == {"finalizers": ["kubernetes"]}


def test_unsupported_media_type_message_lists_what_is_accepted(client: TestClient) -> None:
    response = client.post(PODS, content=b"k8s\x00", headers={"Content-Type": "application/cbor"})
    assert response.json()["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )
