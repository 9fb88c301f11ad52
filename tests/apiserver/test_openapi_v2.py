"""/openapi/v2 as gnostic's protobuf openapi_v2.Document (what kubectl 1.27/1.28 need before
`create/apply -f` and `explain`), read back with a minimal protobuf wire reader; and the real
kubectl of every bundled minor (1.27-1.33) explaining, applying and validating against the server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.apiserver import discovery
from kubetaint.apiserver.openapi_v2 import PROTOBUF_TYPE, RETURNED_TYPE
from kubetaint.clock import VirtualClock

from .builders import make_app, make_store
from .test_kubectl import KUBECTL, Cluster, cluster
from .test_kubectl_openapi import TOLERATING_POD

__all__ = ["cluster"]

Fields = dict[int, list[Any]]


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def fields(data: bytes) -> Fields:
    """Protobuf wire fields: number -> values (ints for varints, bytes for length-delimited)."""
    out: Fields = {}
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            out.setdefault(number, []).append(value)
        else:
            assert wire == 2, f"unexpected wire type {wire}"
            size, pos = _varint(data, pos)
            out.setdefault(number, []).append(data[pos : pos + size])
            pos += size
    return out


def text(data: Fields, number: int) -> str:
    return bytes(data[number][0]).decode() if number in data else ""


def named(data: bytes) -> dict[str, Fields]:
    """A repeated Named* message (name = 1, value = 2) as a dict."""
    return {text(item, 1): fields(item[2][0]) for item in map(fields, fields(data).get(1, []))}


@pytest.fixture
def client() -> Iterator[TestClient]:
    clock = VirtualClock()
    with TestClient(make_app(make_store(clock), clock)) as test_client:
        yield test_client


def document(client: TestClient) -> Fields:
    response = client.get("/openapi/v2", headers={"Accept": f"{PROTOBUF_TYPE}, application/json"})
    assert response.status_code == 200
    assert response.headers["content-type"] == RETURNED_TYPE
    return fields(response.content)


def test_plain_json_requests_get_404(client: TestClient) -> None:
    assert client.get("/openapi/v2", headers={"Accept": "application/json"}).status_code == 404


def test_document_header_carries_swagger_and_reported_version(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = document(client)
    assert text(doc, 1) == "2.0"
    assert text(fields(doc[2][0]), 2) == "v1.35.0"
    monkeypatch.setitem(discovery.VERSION_INFO, "gitVersion", "v1.28.0")
    assert text(fields(document(client)[2][0]), 2) == "v1.28.0"


def test_definitions_are_the_served_schemas_in_swagger_form(client: TestClient) -> None:
    definitions = named(document(client)[9][0])
    pod = definitions["io.k8s.api.core.v1.Pod"]
    assert text(pod, 4).startswith("Pod is a collection of containers")
    extensions = {text(f, 1): fields(f[2][0]) for f in map(fields, pod[31])}
    gvk = json.loads(text(extensions["x-kubernetes-group-version-kind"], 2))
    assert gvk == [{"group": "", "kind": "Pod", "version": "v1"}]
    spec = named(pod[25][0])["spec"]
    assert text(spec, 1) == "#/definitions/io.k8s.api.core.v1.PodSpec"
    containers = named(definitions["io.k8s.api.core.v1.PodSpec"][25][0])["containers"]
    container_exts = {text(f, 1): text(fields(f[2][0]), 2) for f in map(fields, containers[31])}
    assert container_exts["x-kubernetes-patch-merge-key"] == '"name"'
    assert text(fields(containers[22][0]), 1) == "array"
    taint = definitions["io.k8s.api.core.v1.Taint"]
    assert [bytes(v).decode() for v in taint[19]] == ["key", "effect"]
    effect = named(taint[25][0])["effect"]
    assert [text(fields(v), 2) for v in effect[20]] == ['"NoExecute"', '"NoSchedule"', '"PreferNoSchedule"']


KUBECTL_MINORS = ["27", "28", "29", "30", "31", "32", "33"]


@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine")
@pytest.mark.parametrize("minor", KUBECTL_MINORS, ids=[f"kubectl 1.{m}" for m in KUBECTL_MINORS])
def test_every_bundled_kubectl_explains_applies_and_validates(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch, minor: str
) -> None:
    monkeypatch.setitem(discovery.VERSION_INFO, "minor", minor)
    monkeypatch.setitem(discovery.VERSION_INFO, "gitVersion", f"v1.{minor}.0")
    assert f"v1.{minor}." in cluster.kubectl("version", "-o", "json").stdout
    assert "FIELD: tolerations <[]Toleration>" in cluster.kubectl("explain", "pod.spec.tolerations").stdout
    manifest = cluster.workdir / "tol.yaml"
    manifest.write_text(TOLERATING_POD)
    assert cluster.kubectl("apply", "-f", "tol.yaml").stdout.strip() == "pod/tol created"
    assert cluster.kubectl("apply", "-f", "tol.yaml").stdout.strip() == "pod/tol unchanged"
    manifest.write_text(TOLERATING_POD.replace("nginx:1.25", "nginx:1.26"))
    assert cluster.kubectl("apply", "-f", "tol.yaml").stdout.strip() == "pod/tol configured"
    pod = cluster.store.get("pods", "default", "tol")
    assert [c["image"] for c in pod["spec"]["containers"]] == ["nginx:1.26", "busybox"]
    manifest.write_text(
        TOLERATING_POD.replace("name: tol,", "name: bad,").replace("{name: side,", "{bar: 1, name: side,")
    )
    failed = cluster.kubectl("create", "-f", "tol.yaml", ok=False)
    assert failed.returncode == 1
    assert 'strict decoding error: unknown field "spec.containers[1].bar"' in failed.stderr
