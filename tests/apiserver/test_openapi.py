"""HTTP contract of /openapi/v3: the index, one document per served group version with only the
served paths, upstream's schemas (descriptions, GVK extensions, patch metadata), stable hashes and
the reported version (kubectl-wire.md §4.9, §4.10, §4.15, §9)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.apiserver import discovery, openapi
from kubetaint.apiserver.resources import SERVED, subresources
from kubetaint.clock import VirtualClock

from .builders import make_app, make_store

CORE = "io.k8s.api.core.v1."
GV_PATHS = [
    "api/v1",
    "apis/apiextensions.k8s.io/v1",
    "apis/apps/v1",
    "apis/authentication.k8s.io/v1",
    "apis/authorization.k8s.io/v1",
    "apis/batch/v1",
    "apis/coordination.k8s.io/v1",
    "apis/discovery.k8s.io/v1",
    "apis/events.k8s.io/v1",
    "apis/node.k8s.io/v1",
    "apis/policy/v1",
    "apis/rbac.authorization.k8s.io/v1",
    "apis/scheduling.k8s.io/v1",
    "apis/storage.k8s.io/v1",
]


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(make_app(make_store(clock := VirtualClock()), clock)) as test_client:
        yield test_client


def document(client: TestClient, gv_path: str) -> dict[str, Any]:
    url = client.get("/openapi/v3").json()["paths"][gv_path]["serverRelativeURL"]
    response = client.get(url)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()
    return body


def test_the_index_lists_exactly_the_served_group_versions(client: TestClient) -> None:
    assert sorted(client.get("/openapi/v3").json()["paths"]) == GV_PATHS


def test_the_hash_is_a_stable_content_digest(client: TestClient) -> None:
    first = client.get("/openapi/v3").json()
    assert client.get("/openapi/v3").json() == first
    digest = first["paths"]["api/v1"]["serverRelativeURL"].split("hash=")[1]
    assert len(digest) == 128
    assert digest == digest.upper()


def test_info_version_is_the_reported_server_version(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert document(client, "api/v1")["info"] == {"title": "Kubernetes", "version": "v1.35.0"}
    before = client.get("/openapi/v3").json()["paths"]["api/v1"]
    monkeypatch.setitem(discovery.VERSION_INFO, "gitVersion", "v1.30.0")
    assert document(client, "api/v1")["info"]["version"] == "v1.30.0"
    assert client.get("/openapi/v3").json()["paths"]["api/v1"] != before


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/openapi/v3/apis/networking.k8s.io/v1", id="a group the server does not serve is 404"),
        pytest.param("/openapi/v3/api/v2", id="an unknown core version is 404"),
        pytest.param("/openapi/v3/apis", id="a path that names no group version is 404"),
        pytest.param("/openapi/v2", id="openapi v2 is 404"),
    ],
)
def test_unserved_documents_are_404(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 404


def _paths_of_served_resources() -> set[str]:
    expected: set[str] = set()
    for res in SERVED:
        prefix = f"/api/{res.version}" if not res.group else f"/apis/{res.group}/{res.version}"
        scope = f"{prefix}/namespaces/{{namespace}}" if res.namespaced else prefix
        expected.add(f"{scope}/{res.plural}")
        if "get" in res.verbs:
            expected.add(f"{scope}/{res.plural}/{{name}}")
        if res.namespaced and "list" in res.verbs:
            expected.add(f"{prefix}/{res.plural}")
        expected.update(
            f"{scope}/{res.plural}/{{name}}/{sub.name}"
            for sub in subresources(res)
            if openapi.schema_name(sub.group, sub.version, sub.kind)
            is not None  # no autoscaling/v1 Scale kept
        )
    return expected


def test_documents_list_only_the_served_paths(client: TestClient) -> None:
    listed: set[str] = set()
    for gv_path in GV_PATHS:
        listed |= set(document(client, gv_path)["paths"])
    assert listed == _paths_of_served_resources()


@pytest.mark.parametrize(
    ("gv_path", "path", "kind"),
    [
        pytest.param("api/v1", "/api/v1/namespaces/{namespace}/pods/{name}", "Pod", id="pods"),
        pytest.param("api/v1", "/api/v1/nodes/{name}", "Node", id="nodes"),
        pytest.param("api/v1", "/api/v1/namespaces/{name}", "Namespace", id="namespaces"),
        pytest.param("api/v1", "/api/v1/nodes/{name}/status", "Node", id="node status"),
        pytest.param(
            "apis/apps/v1", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}", "Deployment", id="apps"
        ),
        pytest.param(
            "apis/node.k8s.io/v1",
            "/apis/node.k8s.io/v1/runtimeclasses/{name}",
            "RuntimeClass",
            id="node.k8s.io",
        ),
    ],
)
def test_patch_operations_declare_field_validation_and_strategic_merge(
    client: TestClient, gv_path: str, path: str, kind: str
) -> None:
    patch = document(client, gv_path)["paths"][path]["patch"]
    assert patch["x-kubernetes-group-version-kind"]["kind"] == kind
    assert patch["x-kubernetes-action"] == "patch"
    assert {"dryRun", "fieldManager", "fieldValidation", "force"} <= {p["name"] for p in patch["parameters"]}
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]


def test_eviction_and_binding_subresources_answer_with_their_own_kinds(client: TestClient) -> None:
    paths = document(client, "api/v1")["paths"]
    eviction = paths["/api/v1/namespaces/{namespace}/pods/{name}/eviction"]["post"]
    assert eviction["x-kubernetes-group-version-kind"] == {
        "group": "policy",
        "kind": "Eviction",
        "version": "v1",
    }
    binding = paths["/api/v1/namespaces/{namespace}/pods/{name}/binding"]["post"]
    assert binding["x-kubernetes-group-version-kind"]["kind"] == "Binding"
    assert set(paths["/api/v1/namespaces/{namespace}/bindings"]) == {"post", "parameters"}


def test_every_reference_resolves_inside_its_document(client: TestClient) -> None:
    for gv_path in GV_PATHS:
        doc = document(client, gv_path)
        names = set(doc["components"]["schemas"])
        assert openapi._refs(doc) <= names, gv_path


def test_each_served_kind_has_its_schema_with_group_version_kind(client: TestClient) -> None:
    for res in SERVED:
        gv_path = "api/v1" if not res.group else f"apis/{res.group}/{res.version}"
        found = [
            schema
            for schema in document(client, gv_path)["components"]["schemas"].values()
            if {"group": res.group, "kind": res.kind, "version": res.version}
            in schema.get("x-kubernetes-group-version-kind", [])
        ]
        assert len(found) == 1, res.kind
        assert found[0]["description"]
        assert "metadata" in found[0]["properties"]


def test_pod_schema_carries_upstream_descriptions_and_patch_metadata() -> None:
    schemas = openapi.schemas()
    pod = schemas[CORE + "Pod"]
    assert pod["description"].startswith("Pod is a collection of containers that can run on a host.")
    assert pod["properties"]["spec"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}]
    spec = schemas[CORE + "PodSpec"]["properties"]
    assert spec["containers"]["x-kubernetes-patch-merge-key"] == "name"
    assert spec["containers"]["x-kubernetes-patch-strategy"] == "merge"
    assert spec["tolerations"]["description"] == "If specified, the pod's tolerations."
    assert "x-kubernetes-patch-strategy" not in spec["tolerations"]
    assert schemas[CORE + "Taint"]["required"] == ["key", "effect"]


@pytest.mark.parametrize(
    ("schema", "field", "values"),
    [
        pytest.param("Taint", "effect", ["NoExecute", "NoSchedule", "PreferNoSchedule"], id="taint effect"),
        pytest.param(
            "Toleration", "effect", ["NoExecute", "NoSchedule", "PreferNoSchedule"], id="toleration effect"
        ),
        pytest.param(
            "Toleration",
            "operator",
            ["Equal", "Exists", "Gt", "Lt"],
            id="toleration operator (Lt, Gt: v1.35)",
        ),
    ],
)
def test_taint_and_toleration_enums_are_upstreams(schema: str, field: str, values: list[str]) -> None:
    prop = openapi.schemas()[CORE + schema]["properties"][field]
    assert prop["enum"] == values
    assert '\n\nPossible enum values:\n - `"' + values[0] + '"`' in prop["description"]


def test_the_shipped_schemas_have_no_json_schema_leftovers() -> None:
    for name, schema in openapi.schemas().items():
        text = repr(schema)
        assert "'null'" not in text, name
        assert "#/$defs/" not in text, name
        for prop in ("apiVersion", "kind"):
            assert "enum" not in schema.get("properties", {}).get(prop, {}), name


@pytest.mark.parametrize(
    ("name", "schema"),
    [
        pytest.param(
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
            {"format": "int-or-string", "type": "string"},
            id="IntOrString is upstream's string schema",
        ),
        pytest.param("io.k8s.apimachinery.pkg.api.resource.Quantity", {"type": "string"}, id="Quantity"),
    ],
)
def test_scalar_wrappers_are_upstreams(name: str, schema: dict[str, str]) -> None:
    shipped = dict(openapi.schemas()[name])
    assert shipped.pop("description")
    assert shipped == schema
