"""fieldValidation=Strict|Warn|Ignore against the served schemas: unknown-field paths, upstream's
400 messages for create/update and for patches, `Warning: 299` headers, and the real kubectl's
output for a manifest with unknown fields (kubectl-wire.md §4.9, §5.3), and duplicate fields of JSON and
YAML bodies."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.api.openapi_schemas import strict_errors
from kubetaint.clock import VirtualClock

from .builders import make_app, make_store, namespace
from .test_kubectl import KUBECTL, Cluster, cluster

__all__ = ["cluster"]


def unknown_fields(obj: Any, schema: str, *, patch: bool = False) -> list[str]:
    """The paths of `strict_errors`' unknown fields."""
    prefix = 'unknown field "'
    return [e[len(prefix) : -1] for e in strict_errors(obj, schema, patch=patch) if e.startswith(prefix)]


POD = "io.k8s.api.core.v1.Pod"
PODS = "/api/v1/namespaces/default/pods"
STRICT_POD_MESSAGE = (
    'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
    'unknown field "spec.containers[0].bar", unknown field "spec.foo"'
)


def pod_body(**spec_extra: Any) -> dict[str, Any]:
    containers: list[dict[str, Any]] = [{"name": "main", "image": "nginx", **spec_extra.pop("container", {})}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": containers, **spec_extra},
    }


@pytest.fixture
def client() -> Iterator[TestClient]:
    clock = VirtualClock()
    store = make_store(clock)
    store.create("namespaces", namespace("default"))
    with TestClient(make_app(store, clock)) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("obj", "paths"),
    [
        pytest.param(pod_body(), [], id="a valid pod has no unknown field"),
        pytest.param(pod_body(foo=1), ["spec.foo"], id="an unknown spec field"),
        pytest.param(pod_body(container={"bar": "x"}), ["spec.containers[0].bar"], id="inside a list item"),
        pytest.param(
            {**pod_body(), "extra": True, "metadata": {"name": "p", "nam": "typo"}},
            ["metadata.nam", "extra"],
            id="metadata and top level, in the body's order",
        ),
        pytest.param(
            pod_body(tolerations=[{"key": "k", "operator": "Exists", "effects": "NoSchedule"}]),
            ["spec.tolerations[0].effects"],
            id="a misspelt toleration field",
        ),
        pytest.param(
            pod_body(nodeSelector={"any-key": "v"}, container={"resources": {"limits": {"cpu": "1"}}}),
            [],
            id="map keys are free",
        ),
        pytest.param(
            {
                **pod_body(),
                "metadata": {
                    "name": "p",
                    "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {"f:anything": {}}}}],
                },
            },
            [],
            id="free-form objects such as fieldsV1 accept anything",
        ),
    ],
)
def test_unknown_fields(obj: dict[str, Any], paths: list[str]) -> None:
    assert unknown_fields(obj, POD) == paths


def test_patch_bodies_skip_directives_and_deletions() -> None:
    body = {
        "spec": {
            "$setElementOrder/containers": [{"name": "main"}],
            "containers": [{"name": "main", "$patch": "delete"}],
            "nodeName": None,
            "oops": None,
            "nope": 1,
        }
    }
    assert unknown_fields(body, POD, patch=True) == ["spec.nope"]


@pytest.mark.parametrize(
    ("validation", "status", "warnings"),
    [
        pytest.param("Strict", 400, [], id="Strict rejects"),
        pytest.param(
            "Warn",
            201,
            ['299 - "unknown field \\"spec.containers[0].bar\\""', '299 - "unknown field \\"spec.foo\\""'],
            id="Warn creates and warns once per field",
        ),
        pytest.param(
            None, 201, ['299 - "unknown field \\"spec.containers[0].bar\\""'], id="absent means Warn"
        ),
        pytest.param("Ignore", 201, [], id="Ignore is silent"),
    ],
)
def test_create_with_unknown_fields(
    client: TestClient, validation: str | None, status: int, warnings: list[str]
) -> None:
    params = {"fieldValidation": validation} if validation else {}
    body = pod_body(container={"bar": "x"}, foo=1) if validation else pod_body(container={"bar": "x"})
    response = client.post(PODS, params=params, json=body)
    assert response.status_code == status
    assert response.headers.get_list("warning") == warnings
    if status == 400:
        assert response.json()["reason"] == "BadRequest"
        assert response.json()["message"] == STRICT_POD_MESSAGE


def test_strict_update_names_the_kind_and_version(client: TestClient) -> None:
    created = client.post(PODS, json=pod_body()).json()
    created["spec"]["foo"] = 1
    response = client.put(f"{PODS}/p", params={"fieldValidation": "Strict"}, json=created)
    assert response.status_code == 400
    assert response.json()["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"'
    )


@pytest.mark.parametrize(
    "content_type",
    ["application/strategic-merge-patch+json", "application/merge-patch+json"],
)
def test_strict_patch_has_no_kind_prefix(client: TestClient, content_type: str) -> None:
    assert client.post(PODS, json=pod_body()).status_code == 201
    response = client.patch(
        f"{PODS}/p",
        params={"fieldValidation": "Strict"},
        content=b'{"spec":{"foo":1}}',
        headers={"Content-Type": content_type},
    )
    assert response.status_code == 400
    assert response.json()["message"] == 'strict decoding error: unknown field "spec.foo"'


def test_warned_patch_is_applied(client: TestClient) -> None:
    assert client.post(PODS, json=pod_body()).status_code == 201
    response = client.patch(
        f"{PODS}/p",
        params={"fieldValidation": "Warn"},
        content=b'{"metadata":{"labels":{"a":"b"}},"spec":{"foo":1}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200
    assert response.headers.get_list("warning") == ['299 - "unknown field \\"spec.foo\\""']
    assert response.json()["metadata"]["labels"] == {"a": "b"}


def test_json_patches_are_not_checked(client: TestClient) -> None:
    assert client.post(PODS, json=pod_body()).status_code == 201
    response = client.patch(
        f"{PODS}/p",
        params={"fieldValidation": "Strict"},
        content=b'[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]',
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "headers", "kind"),
    [
        pytest.param("POST", PODS, {}, "CreateOptions", id="a create"),
        pytest.param("PUT", f"{PODS}/p", {}, "UpdateOptions", id="an update"),
        pytest.param(
            "PATCH",
            f"{PODS}/p",
            {"Content-Type": "application/merge-patch+json"},
            "PatchOptions",
            id="a patch",
        ),
    ],
)
def test_an_unsupported_directive_is_invalid_options_before_the_body_is_read(
    client: TestClient, method: str, path: str, headers: dict[str, str], kind: str
) -> None:
    """ValidateCreateOptions / ValidateUpdateOptions / ValidatePatchOptions: a 422 naming the
    options kind, with field.NotSupported's sorted, Go-quoted values."""
    response = client.request(
        method, path, params={"fieldValidation": "Loose"}, content=b"not json", headers=headers
    )
    assert response.status_code == 422
    status = response.json()
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        f'{kind}.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"',
            "field": "fieldValidation",
        }
    ]


@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine")
def test_kubectl_create_with_unknown_fields_fails_as_on_a_real_cluster(cluster: Cluster) -> None:
    (cluster.workdir / "bad.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  foo: 1\n"
        '  containers:\n  - {name: main, image: "nginx:1.25", bar: x}\n'
    )
    result = cluster.kubectl("create", "-f", "bad.yaml", ok=False)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f'Error from server (BadRequest): error when creating "bad.yaml": {STRICT_POD_MESSAGE}'
    )
    warned = cluster.kubectl("create", "-f", "bad.yaml", "--validate=warn")
    assert warned.stdout.strip() == "pod/bad created"
    assert warned.stderr.splitlines() == [
        'Warning: unknown field "spec.containers[0].bar"',
        'Warning: unknown field "spec.foo"',
    ]


DUPLICATE_POD = (
    b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"p"},'
    b'"spec":{"containers":[{"name":"main","image":"nginx"}]}}'
)
STRICT_DUPLICATE_MESSAGE = (
    'Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field "metadata.name"'
)


@pytest.mark.parametrize(
    ("validation", "status", "warnings"),
    [
        pytest.param("Strict", 400, [], id="Strict rejects with the kind prefix"),
        pytest.param(
            "Warn", 201, ['299 - "duplicate field \\"metadata.name\\""'], id="Warn creates and warns"
        ),
        pytest.param(None, 201, ['299 - "duplicate field \\"metadata.name\\""'], id="absent means Warn"),
        pytest.param("Ignore", 201, [], id="Ignore is silent"),
    ],
)
def test_create_with_a_duplicate_field(
    client: TestClient, validation: str | None, status: int, warnings: list[str]
) -> None:
    params = {"fieldValidation": validation} if validation else {}
    response = client.post(
        PODS, params=params, content=DUPLICATE_POD, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == status
    assert response.headers.get_list("warning") == warnings
    if status == 400:
        assert response.json()["message"] == STRICT_DUPLICATE_MESSAGE
    else:
        assert response.json()["metadata"]["name"] == "p", "the last value wins, as in Go"


def test_duplicates_and_unknown_fields_are_reported_together(client: TestClient) -> None:
    body = (
        b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"1","a":"2"}},'
        b'"spec":{"foo":1,"containers":[{"name":"main","image":"x","image":"nginx"}]}}'
    )
    response = client.post(PODS, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 201
    assert response.headers.get_list("warning") == [
        '299 - "duplicate field \\"metadata.labels.a\\""',
        '299 - "unknown field \\"spec.foo\\""',
        '299 - "duplicate field \\"spec.containers[0].image\\""',
    ]
    assert response.json()["metadata"]["labels"] == {"a": "2"}
    assert response.json()["spec"]["containers"][0]["image"] == "nginx"


def test_strict_update_with_a_duplicate_field(client: TestClient) -> None:
    assert client.post(PODS, json=pod_body()).status_code == 201
    response = client.put(
        f"{PODS}/p",
        params={"fieldValidation": "Strict"},
        content=DUPLICATE_POD,
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["message"] == STRICT_DUPLICATE_MESSAGE


@pytest.mark.parametrize(
    "content_type",
    ["application/strategic-merge-patch+json", "application/merge-patch+json"],
)
def test_patch_with_a_duplicate_field(client: TestClient, content_type: str) -> None:
    assert client.post(PODS, json=pod_body()).status_code == 201
    body = b'{"metadata":{"labels":{"a":"1","a":"2"}}}'
    strict = client.patch(
        f"{PODS}/p",
        params={"fieldValidation": "Strict"},
        content=body,
        headers={"Content-Type": content_type},
    )
    assert strict.status_code == 400
    assert strict.json()["message"] == 'strict decoding error: duplicate field "metadata.labels.a"'
    warned = client.patch(f"{PODS}/p", content=body, headers={"Content-Type": content_type})
    assert warned.status_code == 200
    assert warned.headers.get_list("warning") == ['299 - "duplicate field \\"metadata.labels.a\\""']
    assert warned.json()["metadata"]["labels"] == {"a": "2"}


def test_duplicate_keys_that_differ_only_in_lone_surrogates(client: TestClient) -> None:
    body = (
        b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"\\ud800":"1","\\udc00":"2"}},'
        b'"spec":{"containers":[{"name":"main","image":"nginx"}]}}'
    )
    response = client.post(
        PODS, params={"fieldValidation": "Strict"}, content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["message"].endswith('duplicate field "metadata.labels.\ufffd"')


@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine")
def test_kubectl_raw_create_with_a_duplicate_field_fails_as_on_a_real_cluster(cluster: Cluster) -> None:
    (cluster.workdir / "dup.json").write_bytes(DUPLICATE_POD)
    path = "/api/v1/namespaces/default/pods?fieldValidation=Strict"
    result = cluster.kubectl("create", "--raw", path, "-f", "dup.json", ok=False)
    assert result.returncode == 1
    assert result.stderr.strip() == f"Error from server (BadRequest): {STRICT_DUPLICATE_MESSAGE}"
    # `kubectl create -f` decodes the manifest itself (the last value wins) and sends it re-encoded
    created = cluster.kubectl("create", "-f", "dup.json")
    assert (created.stdout.strip(), created.stderr) == ("pod/p created", "")


DUPLICATE_POD_YAML = b"""apiVersion: v1
kind: Pod
metadata:
  name: a
  name: p
spec:
  containers:
  - {name: main, image: nginx, image: nginx}
"""
YAML_DUPLICATES = (
    "yaml: unmarshal errors:\n"
    '  line 5: key "name" already set in map\n'
    '  line 8: key "image" already set in map'
)


@pytest.mark.parametrize(
    ("validation", "status"),
    [
        pytest.param("Strict", 400, id="Strict rejects with go-yaml's strict error"),
        pytest.param("Warn", 201, id="Warn creates; the multi-line warning is no valid header"),
        pytest.param("Ignore", 201, id="Ignore is silent"),
    ],
)
def test_create_from_yaml_with_duplicate_keys(client: TestClient, validation: str, status: int) -> None:
    response = client.post(
        PODS,
        params={"fieldValidation": validation},
        content=DUPLICATE_POD_YAML,
        headers={"Content-Type": "application/yaml"},
    )
    assert response.status_code == status
    assert response.headers.get_list("warning") == []
    if status == 400:
        assert response.json()["message"] == (
            f'Pod in version "v1" cannot be handled as a Pod: strict decoding error: {YAML_DUPLICATES}'
        )
    else:
        assert response.json()["metadata"]["name"] == "p"


def test_strict_apply_with_duplicate_keys(client: TestClient) -> None:
    body = b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"1","a":"2"}}}'
    response = client.patch(
        f"{PODS}/p",
        params={"fieldValidation": "Strict", "fieldManager": "m"},
        content=body,
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert response.status_code == 400
    assert response.json()["message"] == (
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n"
        '  line 1: key "a" already set in map'
    )
