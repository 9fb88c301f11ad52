"""The custom resource strategy over HTTP (apiextensions-apiserver
pkg/registry/customresource/strategy.go and validator.go, run by the generic store between the
mutating and the validating admission chain): metadata.generation moves on any change outside
metadata (outside status too when status is a subresource; never on a /status write), a request
cannot set it, the scale subresource's replicas paths are validated, and the strategy's
validation answers before a validating admission plugin (ported from the apiextensions
integration tests' TestGeneration, TestStatusSubresource and TestScaleSubresource)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import pytest
from starlette.testclient import TestClient

from kubetaint.admission import Attributes, ObjectLookup
from kubetaint.admission.errors import forbidden
from kubetaint.admission.plugin import AdmissionPlugin
from kubetaint.apiserver.app import create_app
from kubetaint.controllers.crd import CRDController
from kubetaint.controlplane import ControlPlane

from .test_custom_resources_http import CRDS, CT, crontab, crontab_crd

JSON = dict[str, Any]
CRONTABS = "crontabs.stable.example.com"


def _without_status_subresource(crd: JSON) -> JSON:
    crd["spec"]["versions"][0]["subresources"] = {}
    return crd


def _with_top_level_data(crd: JSON) -> JSON:
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["data"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return crd


@pytest.fixture
def plane_client(plane: ControlPlane) -> Iterator[tuple[TestClient, ControlPlane]]:
    controller = CRDController(plane.registry, plane.clock)
    controller.start()
    app = create_app(plane.store, plane.clock, plane.registry)
    with TestClient(app, raise_server_exceptions=True) as client:
        yield client, plane
    controller.stop()


def _install(client: TestClient, plane: ControlPlane, crd: JSON) -> None:
    response = client.post(CRDS, json=crd)
    assert response.status_code == 201, response.text
    plane.clock.run_pending()


def _merge(client: TestClient, url: str, patch: JSON) -> Any:
    return client.patch(
        url, content=json.dumps(patch), headers={"content-type": "application/merge-patch+json"}
    )


@pytest.mark.parametrize(
    ("crd", "url", "patch", "generation"),
    [
        pytest.param(crontab_crd(), f"{CT}/c1", {"spec": {"image": "nginx"}}, 2, id="a spec change bumps it"),
        pytest.param(
            crontab_crd(), f"{CT}/c1", {"metadata": {"labels": {"x": "y"}}}, 1, id="a label change keeps it"
        ),
        pytest.param(
            crontab_crd(),
            f"{CT}/c1",
            {"metadata": {"annotations": {"a": "b"}, "finalizers": ["example.com/f"]}},
            1,
            id="annotations and finalizers keep it",
        ),
        pytest.param(
            _with_top_level_data(crontab_crd()),
            f"{CT}/c1",
            {"data": {"key": "value"}},
            2,
            id="a change to a top-level field outside spec bumps it",
        ),
        pytest.param(
            crontab_crd(),
            f"{CT}/c1",
            {"status": {"replicas": 3}},
            1,
            id="status written to the main resource is dropped when status is a subresource",
        ),
        pytest.param(
            crontab_crd(),
            f"{CT}/c1/status",
            {"status": {"replicas": 3}, "spec": {"image": "ignored"}},
            1,
            id="a status subresource write keeps it",
        ),
        pytest.param(
            _without_status_subresource(crontab_crd()),
            f"{CT}/c1",
            {"status": {"replicas": 3}},
            2,
            id="a status change bumps it when status is no subresource",
        ),
        pytest.param(
            crontab_crd(), f"{CT}/c1", {"metadata": {"generation": 42}}, 1, id="a request cannot set it"
        ),
    ],
)
def test_generation_moves_as_the_custom_resource_strategy_says(
    plane_client: tuple[TestClient, ControlPlane], crd: JSON, url: str, patch: JSON, generation: int
) -> None:
    client, plane = plane_client
    _install(client, plane, crd)
    created = client.post(CT, json=crontab())
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["generation"] == 1
    patched = _merge(client, url, patch)
    assert patched.status_code == 200, patched.text
    assert patched.json()["metadata"]["generation"] == generation
    assert client.get(f"{CT}/c1").json()["metadata"]["generation"] == generation


def test_a_put_of_the_object_read_back_keeps_generation_and_an_edit_bumps_it_once(
    plane_client: tuple[TestClient, ControlPlane],
) -> None:
    client, plane = plane_client
    _install(client, plane, crontab_crd())
    client.post(CT, json=crontab())
    read = client.get(f"{CT}/c1").json()
    same = client.put(f"{CT}/c1", json={**read, "metadata": {**read["metadata"], "generation": 7}})
    assert same.status_code == 200 and same.json()["metadata"]["generation"] == 1
    assert same.json()["metadata"]["resourceVersion"] == read["metadata"]["resourceVersion"]
    edited = client.put(f"{CT}/c1", json={**same.json(), "spec": {**read["spec"], "replicas": 4}})
    assert edited.status_code == 200 and edited.json()["metadata"]["generation"] == 2


def test_scaling_bumps_generation(plane_client: tuple[TestClient, ControlPlane]) -> None:
    client, plane = plane_client
    _install(client, plane, crontab_crd())
    client.post(CT, json=crontab(replicas=2))
    scale = client.get(f"{CT}/c1/scale").json()
    assert client.put(f"{CT}/c1/scale", json={**scale, "spec": {"replicas": 5}}).status_code == 200
    assert client.get(f"{CT}/c1").json()["metadata"]["generation"] == 2


@pytest.mark.parametrize(
    ("url", "patch", "message"),
    [
        pytest.param(
            f"{CT}/c1",
            {"spec": {"replicas": 2**63 - 1}},
            ".spec.replicas: Invalid value: 9223372036854775807: should be less than or equal to 2147483647",
            id="spec replicas above int32",
        ),
        pytest.param(
            f"{CT}/c1/status",
            {"status": {"replicas": -1}},
            ".status.replicas: Invalid value: -1: should be a non-negative integer",
            id="negative status replicas",
        ),
        pytest.param(
            f"{CT}/c1/status",
            {"status": {"selector": 5}},
            '.status.selector: Invalid value: "": .status.selector accessor error: 5 is of the type int64, '
            "expected string",
            id="a label selector that is no string",
        ),
        pytest.param(
            f"{CT}/c1",
            {"spec": {"replicas": None, "size": {"replicas": 1.5}}},
            None,
            id="an absent spec replicas is no error",
        ),
    ],
)
def test_the_scale_subresources_replicas_paths_are_validated(
    plane_client: tuple[TestClient, ControlPlane], url: str, patch: JSON, message: str | None
) -> None:
    client, plane = plane_client
    crd = crontab_crd()
    version = crd["spec"]["versions"][0]
    version["subresources"]["scale"]["labelSelectorPath"] = ".status.selector"
    schema = version["schema"]["openAPIV3Schema"]
    schema["properties"]["status"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    schema["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"] = True
    schema["properties"]["spec"]["properties"]["replicas"] = {"type": "integer"}
    _install(client, plane, crd)
    assert client.post(CT, json=crontab(replicas=1)).status_code == 201
    response = _merge(client, url, patch)
    if message is None:
        assert response.status_code == 200, response.text
        return
    assert response.status_code == 422, response.text
    assert response.json()["message"] == f'CronTab.stable.example.com "c1" is invalid: {message}'


class _SetsReplicas(AdmissionPlugin):
    """A mutating plugin giving every CronTab `spec.replicas: 0` (below the schema's minimum)."""

    name: ClassVar[str] = "MutatingAdmissionWebhook"
    operations: ClassVar[frozenset[str]] = frozenset({"CREATE", "UPDATE"})
    mutating: ClassVar[bool] = True
    resources: ClassVar[frozenset[str] | None] = frozenset({CRONTABS})

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
        obj = dict(attrs.object or {})
        if (obj.get("metadata") or {}).get("labels", {}).get("mutate") == "yes":
            obj["spec"] = {**obj["spec"], "replicas": 0}
        return obj


class _RefusesEverything(AdmissionPlugin):
    """A validating plugin refusing every CronTab write."""

    name: ClassVar[str] = "ValidatingAdmissionWebhook"
    operations: ClassVar[frozenset[str]] = frozenset({"CREATE", "UPDATE"})
    validating: ClassVar[bool] = True
    resources: ClassVar[frozenset[str] | None] = frozenset({CRONTABS})

    def validate(self, attrs: Attributes, lookup: ObjectLookup) -> None:
        raise forbidden(attrs, "refused by policy")


@pytest.fixture
def guarded(plane_client: tuple[TestClient, ControlPlane]) -> TestClient:
    client, plane = plane_client
    _install(client, plane, crontab_crd())
    assert plane.registry.admission is not None
    plane.registry.admission.add(_SetsReplicas())
    plane.registry.admission.add(_RefusesEverything())
    return client


def test_a_schema_error_answers_before_a_validating_admission_refusal(guarded: TestClient) -> None:
    refused = guarded.post(CT, json=crontab())
    assert refused.status_code == 403
    assert refused.json()["message"] == ('crontabs.stable.example.com "c1" is forbidden: refused by policy')
    invalid = guarded.post(CT, json={**crontab(), "spec": {"replicas": 2}})
    assert invalid.status_code == 422
    assert (
        invalid.json()["message"]
        == 'CronTab.stable.example.com "c1" is invalid: spec.cronSpec: Required value'
    )


def test_the_schema_validates_what_mutating_admission_made(guarded: TestClient) -> None:
    body = crontab()
    body["metadata"]["labels"] = {"mutate": "yes"}
    response = guarded.post(CT, json=body)
    assert response.status_code == 422
    assert response.json()["message"] == (
        'CronTab.stable.example.com "c1" is invalid: spec.replicas: Invalid value: 0: '
        "spec.replicas in body should be greater than or equal to 1"
    )


def test_without_a_validating_refusal_the_mutated_object_is_stored_with_its_generation(
    plane_client: tuple[TestClient, ControlPlane],
) -> None:
    client, plane = plane_client
    _install(client, plane, crontab_crd())
    assert plane.registry.admission is not None

    class _AddsImage(_SetsReplicas):
        def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
            obj = dict(attrs.object or {})
            if attrs.operation == "UPDATE":
                obj["spec"] = {**obj["spec"], "image": "from-admission"}
            return obj

    plane.registry.admission.add(_AddsImage())
    client.post(CT, json=crontab())
    labelled = _merge(client, f"{CT}/c1", {"metadata": {"labels": {"a": "b"}}})
    assert labelled.status_code == 200, labelled.text
    # PrepareForUpdate runs after mutating admission: the plugin's spec change bumps generation
    assert labelled.json()["spec"]["image"] == "from-admission"
    assert labelled.json()["metadata"]["generation"] == 2
