"""What apiextensions-apiserver's customresource handler and strategy answer besides the schema:
an update naming no resourceVersion is refused (AllowUnconditionalUpdate is false for custom
resources and CRDs), finalizer names without a domain are warned about, a namespaced resource's
write without a namespace is the server's 404, and a cluster-scoped resource has no
`metadata.namespace` field label."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from .test_custom_resources_http import CRDS, CT, crd_client, crontab, crontab_crd

__all__ = ["crd_client"]

JSON = dict[str, Any]
PREFER = "prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"


def _without_resource_version(obj: JSON) -> JSON:
    return {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}}


@pytest.mark.parametrize(
    ("url", "qualified", "name"),
    [
        pytest.param(f"{CT}/c1", "crontabs.stable.example.com", "c1", id="a custom resource"),
        pytest.param(f"{CT}/c1/status", "crontabs.stable.example.com", "c1", id="a custom resource's status"),
        pytest.param(
            f"{CRDS}/crontabs.stable.example.com",
            "customresourcedefinitions.apiextensions.k8s.io",
            "crontabs.stable.example.com",
            id="a CustomResourceDefinition",
        ),
    ],
)
def test_an_update_without_a_resource_version_is_refused(
    crd_client: TestClient, url: str, qualified: str, name: str
) -> None:
    assert crd_client.post(CT, json=crontab()).status_code == 201
    current = crd_client.get(url).json()
    response = crd_client.put(url, json=_without_resource_version(current))
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["message"] == (
        f'{qualified} "{name}" is invalid: metadata.resourceVersion: Invalid value: 0x0: '
        "must be specified for an update"
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 0x0: must be specified for an update",
            "field": "metadata.resourceVersion",
        }
    ]
    assert crd_client.put(url, json=current).status_code == 200


def test_patches_and_scale_writes_need_no_resource_version(crd_client: TestClient) -> None:
    crd_client.post(CT, json=crontab(replicas=2))
    patched = crd_client.patch(
        f"{CT}/c1",
        content=json.dumps({"spec": {"image": "x"}}),
        headers={"content-type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    scale = crd_client.get(f"{CT}/c1/scale").json()
    scaled = crd_client.put(
        f"{CT}/c1/scale", json=_without_resource_version({**scale, "spec": {"replicas": 3}})
    )
    assert scaled.status_code == 200, scaled.text


def test_added_finalizers_without_a_domain_are_warned_about(crd_client: TestClient) -> None:
    body = crontab()
    body["metadata"]["finalizers"] = ["example.com/ok", "orphan", "zeta", "alpha"]
    created = crd_client.post(CT, json=body)
    assert created.status_code == 201
    assert created.headers.get_list("warning") == [
        f'299 - "metadata.finalizers: \\"alpha\\": {PREFER}"',
        f'299 - "metadata.finalizers: \\"zeta\\": {PREFER}"',
    ]
    patched = crd_client.patch(
        f"{CT}/c1",
        content=json.dumps({"metadata": {"finalizers": ["zeta", "alpha", "beta"]}}),
        headers={"content-type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200
    assert patched.headers.get_list("warning") == [f'299 - "metadata.finalizers: \\"beta\\": {PREFER}"']


@pytest.mark.parametrize("method", ["POST", "DELETE"])
def test_a_namespaced_resources_write_without_a_namespace_is_not_found(
    crd_client: TestClient, method: str
) -> None:
    response = crd_client.request(
        method, "/apis/stable.example.com/v1/crontabs", content=json.dumps(crontab())
    )
    assert response.status_code == 404
    assert response.json()["message"] == "the server could not find the requested resource"


def test_a_cluster_scoped_resource_has_no_namespace_field_label(crd_client: TestClient, plane: Any) -> None:
    crd = crontab_crd()
    crd["metadata"]["name"] = "clusterthings.stable.example.com"
    crd["spec"]["names"] = {"plural": "clusterthings", "kind": "ClusterThing"}
    crd["spec"]["scope"] = "Cluster"
    assert crd_client.post(CRDS, json=crd).status_code == 201
    plane.clock.run_pending()
    url = "/apis/stable.example.com/v1/clusterthings"
    for params in (
        {"fieldSelector": "metadata.namespace=x"},
        {"fieldSelector": "metadata.namespace=x", "watch": "1"},
    ):
        refused = crd_client.get(url, params=params)
        assert refused.status_code == 400
        assert refused.json()["message"] == "field label not supported: metadata.namespace"
    assert crd_client.get(url, params={"fieldSelector": "metadata.name=x"}).status_code == 200
    assert crd_client.get(CT, params={"fieldSelector": "metadata.namespace=default"}).status_code == 200


@pytest.mark.parametrize(
    ("method", "url", "code", "message"),
    [
        pytest.param(
            "GET",
            f"{CT}/c1/foo",
            404,
            'crontabs.stable.example.com "c1" not found',
            id="an undeclared subresource",
        ),
        pytest.param(
            "DELETE",
            f"{CT}/c1/status",
            405,
            'delete is not supported on resources of kind "crontabs.stable.example.com"',
            id="deleting the status",
        ),
        pytest.param(
            "POST",
            f"{CT}/c1/scale",
            405,
            'create is not supported on resources of kind "crontabs.stable.example.com"',
            id="posting to the scale",
        ),
    ],
)
def test_subresource_requests_the_handler_does_not_serve(
    crd_client: TestClient, method: str, url: str, code: int, message: str
) -> None:
    crd_client.post(CT, json=crontab())
    response = crd_client.request(method, url, content="{}")
    assert response.status_code == code
    assert response.json()["message"] == message


def _crd_with_formats(name: str, formats: dict[str, JSON]) -> JSON:
    crd = crontab_crd()
    crd["metadata"]["name"] = f"{name}s.stable.example.com"
    crd["spec"]["names"] = {"plural": f"{name}s", "kind": name.capitalize()}
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"] = {**spec["properties"], **formats}
    return crd


def test_a_crd_naming_unrecognized_formats_is_warned_about_as_upstream(crd_client: TestClient) -> None:
    crd = _crd_with_formats(
        "gadget",
        {
            "typo": {"type": "string", "format": "emial"},
            "count": {"type": "integer", "format": "int32"},
            "label": {"type": "string", "format": "k8s-short-name"},
            "when": {"type": "string", "format": "date-time"},
            "size": {"type": "string", "format": "int64"},
            "ratio": {"type": "number", "format": "int32"},
        },
    )
    created = crd_client.post(CRDS, json=crd)
    assert created.status_code == 201, created.text
    assert created.headers.get_list("warning") == [
        '299 - "unrecognized format \\"emial\\""',
        '299 - "unrecognized format \\"int64\\""',
        '299 - "unrecognized format \\"int32\\""',
        '299 - "kubetaint does not check format k8s-short-name of gadgets.stable.example.com: '
        'values are accepted unchecked"',
    ]
    stored = crd_client.get(f"{CRDS}/gadgets.stable.example.com").json()
    spec = stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["other"] = {"type": "boolean", "format": "flag"}
    updated = crd_client.put(f"{CRDS}/gadgets.stable.example.com", json=stored)
    assert updated.status_code == 200, updated.text
    # an update warns about the formats the old CRD did not use, then what kubetaint does not check
    assert updated.headers.get_list("warning") == [
        '299 - "unrecognized format \\"flag\\""',
        '299 - "kubetaint does not check format k8s-short-name of gadgets.stable.example.com: '
        'values are accepted unchecked"',
    ]
