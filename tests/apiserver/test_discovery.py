"""Version, health, aggregated and legacy discovery, OpenAPI v3 (kubectl-wire.md §0, §3, §9)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.api.resources import RESOURCES

from .builders import DISCOVERY_ACCEPT

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def test_version_reports_kubernetes_v1_35_as_a_release_build_does(client: TestClient) -> None:
    body = client.get("/version?timeout=5s").json()
    assert (body["major"], body["minor"]) == ("1", "35")
    assert (body["emulationMajor"], body["emulationMinor"]) == ("1", "35")
    assert (body["minCompatibilityMajor"], body["minCompatibilityMinor"]) == ("1", "34")
    assert body["gitVersion"] == "v1.35.0" and body["gitTreeState"] == "clean"
    assert len(body["gitCommit"]) == 40 and body["goVersion"].startswith("go1.25")


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz"])
def test_health_endpoints_answer_ok(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert (response.status_code, response.text) == (200, "ok")


def test_aggregated_core_discovery_has_the_exact_content_type_and_only_the_core_group(
    client: TestClient,
) -> None:
    response = client.get("/api?timeout=32s", headers={"Accept": DISCOVERY_ACCEPT})
    assert response.headers["content-type"] == AGGREGATED
    body = response.json()
    assert body["kind"] == "APIGroupDiscoveryList" and body["apiVersion"] == "apidiscovery.k8s.io/v2"
    assert [item["metadata"]["name"] for item in body["items"]] == [""]
    version = body["items"][0]["versions"][0]
    assert version["version"] == "v1" and version["freshness"] == "Current"
    pods = next(r for r in version["resources"] if r["resource"] == "pods")
    assert pods["shortNames"] == ["po"] and pods["scope"] == "Namespaced" and pods["categories"] == ["all"]
    subs = {s["subresource"]: s for s in pods["subresources"]}
    assert subs["eviction"]["responseKind"] == {"group": "policy", "version": "v1", "kind": "Eviction"}
    assert subs["binding"]["verbs"] == ["create"]
    nodes = next(r for r in version["resources"] if r["resource"] == "nodes")
    assert nodes["scope"] == "Cluster" and "deletecollection" in nodes["verbs"]


def test_aggregated_group_discovery_lists_named_groups_without_core(client: TestClient) -> None:
    response = client.get("/apis", headers={"Accept": DISCOVERY_ACCEPT})
    assert response.headers["content-type"] == AGGREGATED
    groups = {item["metadata"]["name"]: item for item in response.json()["items"]}
    assert "" not in groups
    assert {"policy", "scheduling.k8s.io", "coordination.k8s.io", "apps", "node.k8s.io"} <= set(groups)
    pcs = groups["scheduling.k8s.io"]["versions"][0]["resources"][0]
    assert (pcs["resource"], pcs["scope"], pcs["shortNames"]) == ("priorityclasses", "Cluster", ["pc"])


def test_v2beta1_is_served_when_asked_first(client: TestClient) -> None:
    accept = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
    response = client.get("/api", headers={"Accept": accept})
    assert response.json()["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    assert "v=v2beta1" in response.headers["content-type"]


@pytest.mark.parametrize("accept", ["application/json", "application/json, */*", ""])
def test_plain_json_accept_gets_legacy_documents(client: TestClient, accept: str) -> None:
    api = client.get("/api", headers={"Accept": accept})
    assert api.headers["content-type"] == "application/json"
    assert api.json()["kind"] == "APIVersions" and api.json()["versions"] == ["v1"]
    groups = client.get("/apis", headers={"Accept": accept}).json()
    assert groups["kind"] == "APIGroupList"
    policy = next(g for g in groups["groups"] if g["name"] == "policy")
    assert policy["preferredVersion"] == {"groupVersion": "policy/v1", "version": "v1"}


def test_legacy_core_resource_list_advertises_eviction_in_policy_v1_for_drain(client: TestClient) -> None:
    body = client.get("/api/v1").json()
    assert body["kind"] == "APIResourceList" and body["groupVersion"] == "v1"
    entries = {r["name"]: r for r in body["resources"]}
    assert entries["pods/eviction"]["group"] == "policy" and entries["pods/eviction"]["version"] == "v1"
    assert entries["pods/eviction"]["kind"] == "Eviction"
    assert entries["nodes/status"]["verbs"] == ["get", "patch", "update"]
    assert entries["pods"]["namespaced"] is True and entries["nodes"]["namespaced"] is False


def test_legacy_group_version_and_group_documents(client: TestClient) -> None:
    body = client.get("/apis/policy/v1").json()
    assert body["groupVersion"] == "policy/v1"
    assert [r["name"] for r in body["resources"]] == ["poddisruptionbudgets", "poddisruptionbudgets/status"]
    group = client.get("/apis/coordination.k8s.io").json()
    assert group["kind"] == "APIGroup" and group["versions"][0]["groupVersion"] == "coordination.k8s.io/v1"


@pytest.mark.parametrize(
    "path", ["/apis/example.com/v1", "/apis/example.com", "/api/v2", "/nope", "/openapi/v2"]
)
def test_unknown_paths_are_404_status(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.json()["message"] == "the server could not find the requested resource"
    assert response.json()["kind"] == "Status"


def test_openapi_index_points_at_documents_declaring_field_validation_on_patch(client: TestClient) -> None:
    index = client.get("/openapi/v3").json()["paths"]
    assert {"api/v1", "apis/policy/v1", "apis/scheduling.k8s.io/v1", "apis/coordination.k8s.io/v1"} <= set(
        index
    )
    doc = client.get(index["api/v1"]["serverRelativeURL"]).json()
    pod_patch = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert pod_patch["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert any(p["name"] == "fieldValidation" for p in pod_patch["parameters"])
    assert "/api/v1/nodes/{name}" in doc["paths"]
    pcs = client.get(index["apis/scheduling.k8s.io/v1"]["serverRelativeURL"]).json()
    assert "/apis/scheduling.k8s.io/v1/priorityclasses/{name}" in pcs["paths"]


def _aggregated(client: TestClient) -> dict[tuple[str, str], Any]:
    """(group, resource) -> aggregated discovery entry, for /api and /apis together."""
    out: dict[tuple[str, str], Any] = {}
    for path in ("/api", "/apis"):
        for item in client.get(path, headers={"Accept": DISCOVERY_ACCEPT}).json()["items"]:
            for version in item["versions"]:
                for entry in version["resources"]:
                    out[(item["metadata"]["name"], entry["resource"])] = entry
    return out


def test_discovery_advertises_every_served_resource_of_the_shared_table(client: TestClient) -> None:
    advertised = _aggregated(client)
    served = {(r.group, r.plural) for r in RESOURCES if r.served}
    assert set(advertised) == served
    for res in RESOURCES:
        if res.served:
            entry = advertised[(res.group, res.plural)]
            assert entry["singularResource"] == res.singular and entry["verbs"] == sorted(res.verbs)


def test_events_k8s_io_is_discovered_with_the_core_events_short_name(client: TestClient) -> None:
    entry = _aggregated(client)[("events.k8s.io", "events")]
    assert entry["responseKind"] == {"group": "events.k8s.io", "version": "v1", "kind": "Event"}
    assert entry["shortNames"] == ["ev"]
    assert client.get("/apis/events.k8s.io/v1/events").json()["kind"] == "EventList"


@pytest.mark.parametrize(
    ("plural", "group", "subresources"),
    [
        pytest.param(
            "pods",
            "",
            ["attach", "binding", "eviction", "exec", "log", "portforward", "status"],
            id="pods serve attach binding eviction exec log portforward status",
        ),
        pytest.param("nodes", "", ["status"], id="nodes serve status but not proxy"),
        pytest.param("namespaces", "", ["finalize", "status"], id="namespaces serve finalize and status"),
        pytest.param("replicasets", "apps", ["scale", "status"], id="replicasets serve scale and status"),
        pytest.param("leases", "coordination.k8s.io", [], id="leases have no subresource"),
    ],
)
def test_only_implemented_subresources_are_advertised(
    client: TestClient, plural: str, group: str, subresources: list[str]
) -> None:
    entry = _aggregated(client)[(group, plural)]
    assert [s["subresource"] for s in entry.get("subresources", [])] == subresources


def test_an_unserved_subresource_is_not_found(client: TestClient) -> None:
    response = client.get("/api/v1/nodes/anything/proxy")
    assert response.status_code == 404


def test_core_resources_are_listed_by_plural_as_kube_apiserver_does(client: TestClient) -> None:
    body = client.get("/api/v1").json()
    names = [r["name"] for r in body["resources"] if "/" not in r["name"]]
    assert names == [
        "bindings",
        "configmaps",
        "endpoints",
        "events",
        "namespaces",
        "nodes",
        "persistentvolumeclaims",
        "persistentvolumes",
        "pods",
        "secrets",
        "serviceaccounts",
        "services",
    ]


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        pytest.param("/api/", "APIVersions", id="the core root with a trailing slash"),
        pytest.param("/apis/", "APIGroupList", id="the groups root with a trailing slash"),
    ],
)
@pytest.mark.parametrize("accept", ["application/json", DISCOVERY_ACCEPT], ids=["legacy", "aggregated"])
def test_a_discovery_root_with_a_trailing_slash_answers_as_without(
    client: TestClient, path: str, kind: str, accept: str
) -> None:
    """kube-apiserver serves /api/ and /apis/ as /api and /apis (kr8s' discovery asks there)."""
    slashed = client.get(path, headers={"Accept": accept})
    plain = client.get(path.rstrip("/"), headers={"Accept": accept})
    assert slashed.status_code == 200
    assert slashed.headers["content-type"] == plain.headers["content-type"]
    assert slashed.json() == plain.json()
    if accept == "application/json":
        assert slashed.json()["kind"] == kind
