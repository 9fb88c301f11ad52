"""CustomResourceDefinitions and their custom resources over HTTP, with the engine's admission
and validation and the apiextensions controllers (apiextensions-apiserver's
customresource_handler.go and registry/customresource): a CRD is established, its resources
served at /apis/<group>/<version>/..., pruned, defaulted and validated by its schema, listed
with selectors, patched (JSON and merge patches; a strategic merge patch is 415), applied,
dry-run, through the status and scale subresources, printed with its columns, listed by
discovery; deleting the CRD deletes its custom resources."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.apiserver.app import create_app
from kubetaint.controllers.crd import CRDController
from kubetaint.controlplane import ControlPlane

from .builders import DISCOVERY_ACCEPT, TABLE_ACCEPT

JSON = dict[str, Any]
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CT = "/apis/stable.example.com/v1/namespaces/default/crontabs"


def crontab_crd() -> JSON:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "kind": "CronTab", "shortNames": ["ct"]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                        },
                    },
                    "additionalPrinterColumns": [
                        {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
                        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    ],
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "required": ["cronSpec"],
                                    "properties": {
                                        "cronSpec": {"type": "string"},
                                        "image": {"type": "string"},
                                        "replicas": {"type": "integer", "minimum": 1, "default": 1},
                                    },
                                },
                                "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
                            },
                        }
                    },
                }
            ],
        },
    }


def crontab(name: str = "c1", **spec: Any) -> JSON:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"cronSpec": "* * * * */5", **spec},
    }


@pytest.fixture
def crd_client(plane: ControlPlane) -> Iterator[TestClient]:
    controller = CRDController(plane.registry, plane.clock)
    controller.start()
    app = create_app(plane.store, plane.clock, plane.registry)
    with TestClient(app, raise_server_exceptions=True) as client:
        response = client.post(CRDS, json=crontab_crd())
        assert response.status_code == 201, response.text
        plane.clock.run_pending()
        yield client
    controller.stop()


def test_a_created_crd_is_named_and_established(crd_client: TestClient) -> None:
    crd = crd_client.get(f"{CRDS}/crontabs.stable.example.com").json()
    assert crd["spec"]["names"]["singular"] == "crontab" and crd["spec"]["names"]["listKind"] == "CronTabList"
    status = crd["status"]
    assert status["storedVersions"] == ["v1"]
    assert status["acceptedNames"]["plural"] == "crontabs"
    conditions = {c["type"]: (c["status"], c["reason"], c["message"]) for c in status["conditions"]}
    assert conditions == {
        "NamesAccepted": ("True", "NoConflicts", "no conflicts found"),
        "Established": ("True", "InitialNamesAccepted", "the initial names have been accepted"),
    }


def test_an_invalid_crd_is_refused_with_upstreams_message(crd_client: TestClient) -> None:
    crd = crontab_crd()
    crd["metadata"]["name"] = "crons.stable.example.com"
    response = crd_client.post(CRDS, json=crd)
    assert response.status_code == 422
    assert response.json()["message"] == (
        'CustomResourceDefinition.apiextensions.k8s.io "crons.stable.example.com" is invalid: '
        'metadata.name: Invalid value: "crons.stable.example.com": must be spec.names.plural+"."+spec.group'
    )


def test_custom_resources_are_created_defaulted_pruned_and_read(crd_client: TestClient) -> None:
    response = crd_client.post(CT, json={**crontab(), "extra": 1})
    assert response.status_code == 201, response.text
    assert response.headers.get_list("warning") == ['299 - "unknown field \\"extra\\""']
    created = response.json()
    assert created["spec"] == {"cronSpec": "* * * * */5", "replicas": 1}
    assert "extra" not in created and created["metadata"]["generation"] == 1
    assert crd_client.get(f"{CT}/c1").json() == created


def test_strict_field_validation_refuses_unknown_fields(crd_client: TestClient) -> None:
    response = crd_client.post(f"{CT}?fieldValidation=Strict", json=crontab(extra=1))
    assert response.status_code == 400
    assert response.json()["message"] == (
        'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.extra"'
    )


def test_schema_violations_are_422_with_kube_openapis_messages(crd_client: TestClient) -> None:
    response = crd_client.post(CT, json={**crontab(replicas=0), "spec": {"replicas": 0}})
    assert response.status_code == 422
    assert response.json()["message"] == (
        'CronTab.stable.example.com "c1" is invalid: [spec.cronSpec: Required value, '
        "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1]"
    )


def test_lists_take_label_and_field_selectors(crd_client: TestClient) -> None:
    for name in ("a", "b", "c"):
        assert crd_client.post(CT, json=crontab(name)).status_code == 201
    listed = crd_client.get(CT, params={"labelSelector": "app in (a,b)"}).json()
    assert listed["kind"] == "CronTabList" and [o["metadata"]["name"] for o in listed["items"]] == ["a", "b"]
    by_name = crd_client.get(CT, params={"fieldSelector": "metadata.name=c"}).json()
    assert [o["metadata"]["name"] for o in by_name["items"]] == ["c"]
    page = crd_client.get(CT, params={"limit": 2}).json()
    assert len(page["items"]) == 2 and page["metadata"]["continue"]
    rest = crd_client.get(CT, params={"limit": 2, "continue": page["metadata"]["continue"]}).json()
    assert [o["metadata"]["name"] for o in rest["items"]] == ["c"]
    everywhere = crd_client.get("/apis/stable.example.com/v1/crontabs").json()
    assert len(everywhere["items"]) == 3


def test_json_and_merge_patches_apply_and_strategic_merge_is_415(crd_client: TestClient) -> None:
    crd_client.post(CT, json=crontab())
    merged = crd_client.patch(
        f"{CT}/c1",
        content=json.dumps({"spec": {"image": "x"}}),
        headers={"content-type": "application/merge-patch+json"},
    )
    assert merged.status_code == 200 and merged.json()["spec"]["image"] == "x"
    patched = crd_client.patch(
        f"{CT}/c1",
        content=json.dumps([{"op": "replace", "path": "/spec/replicas", "value": 3}]),
        headers={"content-type": "application/json-patch+json"},
    )
    assert patched.status_code == 200 and patched.json()["spec"]["replicas"] == 3
    assert patched.json()["metadata"]["generation"] == 3
    strategic = crd_client.patch(
        f"{CT}/c1", content="{}", headers={"content-type": "application/strategic-merge-patch+json"}
    )
    assert strategic.status_code == 415
    assert strategic.json()["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )


def test_server_side_apply_creates_and_records_its_manager(crd_client: TestClient) -> None:
    applied = crd_client.patch(
        f"{CT}/c1?fieldManager=tool",
        content=json.dumps(crontab()),
        headers={"content-type": "application/apply-patch+yaml"},
    )
    assert applied.status_code == 201, applied.text
    managers = [(m["manager"], m["operation"]) for m in applied.json()["metadata"]["managedFields"]]
    assert managers == [("tool", "Apply")]


def test_dry_run_stores_nothing(crd_client: TestClient) -> None:
    response = crd_client.post(f"{CT}?dryRun=All", json=crontab())
    assert response.status_code == 201
    assert crd_client.get(f"{CT}/c1").status_code == 404


def test_the_status_subresource_splits_spec_and_status(crd_client: TestClient) -> None:
    created = crd_client.post(CT, json={**crontab(), "status": {"replicas": 5}}).json()
    assert "status" not in created  # a main-resource write keeps the (absent) status
    status = crd_client.put(f"{CT}/c1/status", json={**created, "status": {"replicas": 2}, "spec": {}})
    assert status.status_code == 200, status.text
    assert status.json()["status"] == {"replicas": 2} and status.json()["spec"]["cronSpec"] == "* * * * */5"


def test_the_scale_subresource_reads_and_writes_the_replicas_paths(crd_client: TestClient) -> None:
    crd_client.post(CT, json=crontab(replicas=2))
    scale = crd_client.get(f"{CT}/c1/scale").json()
    assert scale["kind"] == "Scale" and scale["spec"] == {"replicas": 2}
    scaled = crd_client.put(f"{CT}/c1/scale", json={**scale, "spec": {"replicas": 4}})
    assert scaled.status_code == 200 and scaled.json()["spec"] == {"replicas": 4}
    assert crd_client.get(f"{CT}/c1").json()["spec"]["replicas"] == 4


def test_tables_have_the_crds_printer_columns(crd_client: TestClient) -> None:
    crd_client.post(CT, json=crontab(replicas=2))
    table = crd_client.get(CT, headers={"accept": TABLE_ACCEPT}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Spec", "Replicas"]
    assert table["rows"][0]["cells"] == ["c1", "* * * * */5", 2]


def test_discovery_lists_the_custom_resources(crd_client: TestClient) -> None:
    group = crd_client.get("/apis/stable.example.com").json()
    assert group["preferredVersion"] == {"groupVersion": "stable.example.com/v1", "version": "v1"}
    resources = crd_client.get("/apis/stable.example.com/v1").json()["resources"]
    assert [(r["name"], r["kind"]) for r in resources] == [
        ("crontabs", "CronTab"),
        ("crontabs/scale", "Scale"),
        ("crontabs/status", "CronTab"),
    ]
    assert resources[0]["shortNames"] == ["ct"] and resources[0]["singularName"] == "crontab"
    aggregated = crd_client.get("/apis", headers={"accept": DISCOVERY_ACCEPT}).json()
    groups = {g["metadata"]["name"]: g for g in aggregated["items"]}
    entry = groups["stable.example.com"]["versions"][0]["resources"][0]
    assert entry["resource"] == "crontabs" and entry["scope"] == "Namespaced"


def test_deleting_the_crd_deletes_its_custom_resources(crd_client: TestClient, plane: ControlPlane) -> None:
    crd_client.post(CT, json=crontab())
    first = crd_client.delete(f"{CRDS}/crontabs.stable.example.com")
    assert first.status_code == 200
    marked = first.json()
    assert marked["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    terminating = next(c for c in marked["status"]["conditions"] if c["type"] == "Terminating")
    assert terminating["reason"] == "InstanceDeletionPending"
    plane.clock.run_pending()
    assert crd_client.get(f"{CRDS}/crontabs.stable.example.com").status_code == 404
    assert plane.store.list("crontabs.stable.example.com").items == []
    assert crd_client.get(CT).status_code == 404
    assert crd_client.get("/apis/stable.example.com").status_code == 404


def test_a_crd_using_what_kubetaint_does_not_check_is_answered_with_warnings(crd_client: TestClient) -> None:
    crd = crontab_crd()
    crd["metadata"]["name"] = "widgets.stable.example.com"
    crd["spec"]["names"] = {"plural": "widgets", "kind": "Widget"}
    version = crd["spec"]["versions"][0]
    version["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = [{"rule": "has(self.spec)"}]
    version["selectableFields"] = [{"jsonPath": ".spec.image"}]
    response = crd_client.post(CRDS, json=crd)
    assert response.status_code == 201, response.text
    assert response.headers.get_list("warning") == [
        '299 - "kubetaint does not check x-kubernetes-validations of widgets.stable.example.com: '
        'values are accepted unchecked"',
        '299 - "kubetaint does not serve the selectableFields of widgets.stable.example.com: '
        'field selectors take metadata.name and metadata.namespace only"',
    ]


def test_every_served_version_reads_the_stored_objects(crd_client: TestClient, plane: ControlPlane) -> None:
    crd = crd_client.get(f"{CRDS}/crontabs.stable.example.com").json()
    v1 = crd["spec"]["versions"][0]
    crd["spec"]["versions"] = [{**v1, "name": "v1beta1", "storage": False}, v1]
    assert crd_client.put(f"{CRDS}/crontabs.stable.example.com", json=crd).status_code == 200
    plane.clock.run_pending()
    crd_client.post(CT, json=crontab())
    beta = crd_client.get("/apis/stable.example.com/v1beta1/namespaces/default/crontabs/c1").json()
    assert beta["apiVersion"] == "stable.example.com/v1beta1" and beta["spec"]["cronSpec"] == "* * * * */5"
    created = crd_client.post(
        "/apis/stable.example.com/v1beta1/namespaces/default/crontabs",
        json={**crontab("c2"), "apiVersion": "stable.example.com/v1beta1"},
    )
    assert created.status_code == 201, created.text
    stored = plane.store.get("crontabs.stable.example.com", "default", "c2")
    assert stored["apiVersion"] == "stable.example.com/v1"
    group = crd_client.get("/apis/stable.example.com").json()
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]


def test_openapi_v3_describes_the_custom_resources(crd_client: TestClient) -> None:
    index = crd_client.get("/openapi/v3").json()["paths"]
    url = index["apis/stable.example.com/v1"]["serverRelativeURL"]
    doc = crd_client.get(url).json()
    schemas = doc["components"]["schemas"]
    kind = schemas["com.example.stable.v1.CronTab"]
    assert kind["x-kubernetes-group-version-kind"] == [
        {"group": "stable.example.com", "kind": "CronTab", "version": "v1"}
    ]
    assert kind["properties"]["spec"]["properties"]["replicas"] == {
        "type": "integer",
        "minimum": 1,
        "default": 1,
    }
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
    assert "com.example.stable.v1.CronTabList" in schemas
    patch = doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"]["patch"]
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]


def test_server_side_apply_merges_by_the_schemas_list_map_keys(
    crd_client: TestClient, plane: ControlPlane
) -> None:
    crd = crontab_crd()
    crd["metadata"]["name"] = "gateways.stable.example.com"
    crd["spec"]["names"] = {"plural": "gateways", "kind": "Gateway"}
    version = crd["spec"]["versions"][0]
    version["schema"]["openAPIV3Schema"]["properties"]["spec"] = {
        "type": "object",
        "properties": {
            "listeners": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                },
            }
        },
    }
    assert crd_client.post(CRDS, json=crd).status_code == 201
    plane.clock.run_pending()
    url = "/apis/stable.example.com/v1/namespaces/default/gateways/gw"

    def apply(manager: str, listener: JSON) -> Any:
        body = {
            "apiVersion": "stable.example.com/v1",
            "kind": "Gateway",
            "metadata": {"name": "gw"},
            "spec": {"listeners": [listener]},
        }
        return crd_client.patch(
            f"{url}?fieldManager={manager}",
            content=json.dumps(body),
            headers={"content-type": "application/apply-patch+yaml"},
        )

    assert apply("a", {"name": "http", "port": 80}).status_code == 201
    second = apply("b", {"name": "https", "port": 443})
    assert second.status_code == 200, second.text
    assert second.json()["spec"]["listeners"] == [
        {"name": "http", "port": 80},
        {"name": "https", "port": 443},
    ]
    clash = apply("b", {"name": "http", "port": 8080})
    assert clash.status_code == 409
    assert clash.json()["message"] == (
        'Apply failed with 1 conflict: conflict with "a": .spec.listeners[name="http"].port'
    )


def test_a_crd_schema_of_the_wrong_json_type_is_a_400(crd_client: TestClient) -> None:
    crd = crontab_crd()
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["required"] = "spec"
    response = crd_client.post(CRDS, json=crd)
    assert response.status_code == 400
    assert response.json()["message"] == (
        'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: '
        "json: cannot unmarshal string into Go struct field "
        "JSONSchemaProps.spec.versions.schema.openAPIV3Schema.required of type []string"
    )


def test_a_terminating_crd_waits_for_finalized_objects_and_refuses_creates(
    crd_client: TestClient, plane: ControlPlane
) -> None:
    held = crontab("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    crd_client.post(CT, json=held)
    crd_client.delete(f"{CRDS}/crontabs.stable.example.com")
    plane.clock.run_pending()
    crd = crd_client.get(f"{CRDS}/crontabs.stable.example.com").json()
    terminating = next(c for c in crd["status"]["conditions"] if c["type"] == "Terminating")
    assert (terminating["reason"], terminating["message"]) == (
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
    )
    refused = crd_client.post(CT, json=crontab("late"))
    assert refused.status_code == 405
    assert refused.json()["message"] == "create not allowed while custom resource definition is terminating"
    assert crd_client.get(f"{CT}/held").json()["metadata"]["deletionTimestamp"]
    released = crd_client.patch(
        f"{CT}/held",
        content=json.dumps({"metadata": {"finalizers": None}}),
        headers={"content-type": "application/merge-patch+json"},
    )
    assert released.status_code == 200, released.text
    plane.clock.advance(2)
    plane.clock.run_pending()
    assert crd_client.get(f"{CRDS}/crontabs.stable.example.com").status_code == 404


def test_cluster_scoped_custom_resources_have_no_namespace(
    crd_client: TestClient, plane: ControlPlane
) -> None:
    crd = crontab_crd()
    crd["metadata"]["name"] = "clusterthings.stable.example.com"
    crd["spec"]["names"] = {"plural": "clusterthings", "kind": "ClusterThing"}
    crd["spec"]["scope"] = "Cluster"
    assert crd_client.post(CRDS, json=crd).status_code == 201
    plane.clock.run_pending()
    url = "/apis/stable.example.com/v1/clusterthings"
    body = {**crontab("one"), "kind": "ClusterThing"}
    body["metadata"]["namespace"] = "ignored"
    created = crd_client.post(url, json=body)
    assert created.status_code == 201, created.text
    assert "namespace" not in created.json()["metadata"]
    assert crd_client.get(f"{url}/one").status_code == 200
    assert (
        crd_client.get("/apis/stable.example.com/v1/namespaces/default/clusterthings/one").status_code == 404
    )
    resources = crd_client.get("/apis/stable.example.com/v1").json()["resources"]
    assert {r["name"]: r["namespaced"] for r in resources}["clusterthings"] is False
