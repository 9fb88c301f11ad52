"""Limits: request body size (413), nesting depth, alias bombs, values JSON cannot carry,
malformed bodies and wrong content types (4xx Status, never 500), the list page cap and open
watches per client (issue 10, item 3)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from kubetaint.api import errors
from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.limits import (
    MAX_BODY_DEPTH,
    MAX_REQUEST_BODY_BYTES,
    Limits,
    WatchCounter,
    cap_limit,
    check_decoded,
    load_yaml_json_recording,
)
from kubetaint.apiserver.query import parse as parse_query
from kubetaint.apiserver.security import SecurityConfig
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock

from .test_auth import cluster_store

PODS = "/api/v1/namespaces/default/pods"
SMP = "application/strategic-merge-patch+json"


@pytest.fixture
def client(clock: VirtualClock) -> TestClient:
    return TestClient(create_app(cluster_store(clock), clock), raise_server_exceptions=False)


def pod_body(name: str, **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "i"}]}, **extra}


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth - 1):
        value = {"a": value}
    return value


# body size ---------------------------------------------------------------------------------


def test_body_over_3_mib_is_413(client: TestClient) -> None:
    body = json.dumps(pod_body("big", padding="x" * MAX_REQUEST_BODY_BYTES)).encode()
    response = client.post(PODS, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Request entity too large: limit is 3145728",
        "reason": "RequestEntityTooLarge",
        "code": 413,
    }


def test_body_just_under_the_limit_is_decoded(client: TestClient) -> None:
    body = json.dumps(pod_body("almost")).encode()
    body = body[:-1] + b" " * (MAX_REQUEST_BODY_BYTES - len(body)) + b"}"
    assert len(body) == MAX_REQUEST_BODY_BYTES
    response = client.post(PODS, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 201, response.text


def test_chunked_body_without_content_length_is_counted(clock: VirtualClock) -> None:
    app = create_app(
        cluster_store(clock), clock, security=SecurityConfig(limits=Limits(max_request_body_bytes=100))
    )
    client = TestClient(app)

    def chunks() -> Iterator[bytes]:
        yield b'{"metadata": {"name": "p"}, "padding": "'
        yield b"x" * 200
        yield b'"}'

    response = client.post(PODS, content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.json()["message"] == "Request entity too large: limit is 100"


def test_body_limit_applies_to_every_writing_verb(clock: VirtualClock) -> None:
    app = create_app(
        cluster_store(clock), clock, security=SecurityConfig(limits=Limits(max_request_body_bytes=10))
    )
    client = TestClient(app)
    big = b"{" + b" " * 20 + b"}"
    for method, path, content_type in [
        ("POST", PODS, "application/json"),
        ("PUT", "/api/v1/nodes/n1", "application/json"),
        ("PATCH", "/api/v1/nodes/n1", SMP),
        ("DELETE", "/api/v1/nodes/n1", "application/json"),
    ]:
        response = client.request(method, path, content=big, headers={"Content-Type": content_type})
        assert response.status_code == 413, (method, response.text)
    assert client.get("/api/v1/nodes/n1").status_code == 200  # nothing was deleted


# decoded bodies ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content_type", "body", "message"),
    [
        pytest.param(
            "application/json", b"{", "error decoding JSON body: Expecting property name", id="truncated JSON"
        ),
        pytest.param(
            "application/json", b"\xff\xfe", "error decoding JSON body:", id="bytes that are not UTF-8"
        ),
        pytest.param(
            "application/json",
            b"[1,2]",
            "Object 'Kind' is missing",
            id="a JSON array where an object belongs",
        ),
        pytest.param(
            "application/json", b'{"metadata":{"name":"p"},"x":NaN}', "invalid character 'N'", id="NaN"
        ),
        pytest.param(
            "application/json",
            b'{"metadata":{"name":"p"},"x":-Infinity}',
            "invalid character '-'",
            id="-Infinity",
        ),
        pytest.param(
            "application/json",
            b"[" * 200_000 + b"]" * 200_000,
            "exceeded max depth of 100",
            id="JSON nested past Python's recursion limit",
        ),
        pytest.param(
            "application/json",
            json.dumps({"metadata": {"name": "p"}, "spec": nested(MAX_BODY_DEPTH + 5)}).encode(),
            "exceeded max depth of 100",
            id="JSON nested just past the depth limit",
        ),
        pytest.param(
            "application/yaml", b"metadata: {name: [}\n", "error decoding YAML body:", id="malformed YAML"
        ),
        pytest.param(
            "application/yaml", b"[" * 5_000 + b"]" * 5_000, "exceeded max depth of 100", id="deep YAML"
        ),
        pytest.param(
            "application/yaml",
            b"a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
            b"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
            "document contains excessive aliasing",
            id="a billion-laughs YAML alias bomb",
        ),
        pytest.param(
            "application/yaml", b"metadata: {name: p}\nx: .nan\n", "unsupported value: nan", id="YAML NaN"
        ),
        pytest.param(
            "application/yaml",
            b"metadata: {name: p}\n1: one\n",
            "object keys must be strings",
            id="YAML integer key",
        ),
        pytest.param(
            "application/yaml",
            b"metadata: {name: p}\nx: !!binary aGVsbG8=\n",
            "unsupported bytes value",
            id="YAML binary",
        ),
        pytest.param(
            "application/yaml", b"metadata: {name: p}\nx: !!set {a}\n", "unsupported set value", id="YAML set"
        ),
        pytest.param(
            "application/yaml",
            b"!!python/object:os.system {}\n",
            "error decoding YAML body:",
            id="a Python object tag",
        ),
    ],
)
def test_bad_bodies_are_400(client: TestClient, content_type: str, body: bytes, message: str) -> None:
    response = client.post(PODS, content=body, headers={"Content-Type": content_type})
    assert response.status_code == 400, response.text
    status = response.json()
    assert (status["kind"], status["reason"]) == ("Status", "BadRequest")
    assert message in status["message"]
    assert "\n" not in status["message"]


def test_deep_patch_bodies_are_400(client: TestClient) -> None:
    body = b'{"spec":' + b'{"a":' * 3_000 + b"1" + b"}" * 3_000 + b"}"
    for content_type in (SMP, "application/merge-patch+json", "application/apply-patch+yaml"):
        response = client.patch(
            "/api/v1/nodes/n1?fieldManager=m", content=body, headers={"Content-Type": content_type}
        )
        assert response.status_code == 400, (content_type, response.text)


def test_yaml_timestamps_stay_strings(client: TestClient) -> None:
    body = (
        b"metadata:\n  name: p\n  annotations: {when: 2024-01-01T00:00:00Z, day: 2024-01-01}\n"
        b"spec: {containers: [{name: c, image: i}]}\n"
    )
    response = client.post(PODS, content=body, headers={"Content-Type": "application/yaml"})
    assert response.status_code == 201, response.text
    assert response.json()["metadata"]["annotations"] == {"when": "2024-01-01T00:00:00Z", "day": "2024-01-01"}


def test_depth_limit_is_inclusive() -> None:
    assert check_decoded(nested(MAX_BODY_DEPTH), 10_000, "JSON") == nested(MAX_BODY_DEPTH)
    with pytest.raises(errors.StatusError, match="exceeded max depth"):
        check_decoded(nested(MAX_BODY_DEPTH + 1), 10_000, "JSON")
    assert load_yaml_json_recording(b"a: [1, {b: null}]") == ({"a": [1, {"b": None}]}, None)


@pytest.mark.parametrize(
    ("method", "path", "content_type", "code"),
    [
        pytest.param("POST", PODS, "application/cbor", 415, id="CBOR create"),
        pytest.param("POST", PODS, "text/plain", 415, id="text create"),
        pytest.param("PUT", "/api/v1/nodes/n1", "application/xml", 415, id="XML update"),
        pytest.param(
            "PATCH", "/api/v1/nodes/n1", "application/json", 415, id="a patch with a plain JSON type"
        ),
        pytest.param("PATCH", "/api/v1/nodes/n1", "", 415, id="a patch without a content type"),
    ],
)
def test_wrong_content_types_are_415(
    client: TestClient, method: str, path: str, content_type: str, code: int
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    response = client.request(method, path, content=b"{}", headers=headers)
    assert response.status_code == code
    assert response.json()["reason"] == "UnsupportedMediaType"


# list page cap -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(b"limit=5", "5", id="a limit under the cap stays"),
        pytest.param(b"limit=10", "10", id="a limit at the cap stays"),
        pytest.param(b"limit=20000", "10", id="a limit over the cap is lowered"),
        pytest.param(b"watch=1&limit=99999&continue=x", "10", id="among other parameters"),
        pytest.param(b"limit=20000&limit=5", "10", id="the first of repeated limits is the one capped"),
        pytest.param(b"limit=abc", "abc", id="a malformed limit is left for the handler's 400"),
        pytest.param(b"labelSelector=limit%3D5", None, id="limit= inside another value is not a limit"),
        pytest.param(b"", None, id="no query"),
    ],
)
def test_cap_limit(raw: bytes, expected: str | None) -> None:
    assert cap_limit(parse_query(raw), 10).get("limit") == expected


def test_large_page_requests_are_capped_and_continue(clock: VirtualClock) -> None:
    store = cluster_store(clock)
    for i in range(5):
        store.create("namespaces", {"metadata": {"name": f"ns-{i}"}})
    app = create_app(store, clock, security=SecurityConfig(limits=Limits(max_list_page=2)))
    client = TestClient(app)
    names: list[str] = []
    token = ""
    for _ in range(10):
        page = client.get("/api/v1/namespaces", params={"limit": "1000", "continue": token}).json()
        names += [ns["metadata"]["name"] for ns in page["items"]]
        assert len(page["items"]) <= 2
        token = page["metadata"].get("continue", "")
        if not token:
            break
    assert sorted(names) == sorted(["default", "kube-node-lease"] + [f"ns-{i}" for i in range(5)])
    assert len(client.get("/api/v1/namespaces").json()["items"]) == 7  # no limit: the whole list


# watches per client ------------------------------------------------------------------------


def test_watch_counter() -> None:
    counter = WatchCounter(2)
    assert counter.acquire("a") and counter.acquire("a")
    assert not counter.acquire("a")
    assert counter.acquire("b")
    counter.release("a")
    assert counter.count("a") == 1
    assert counter.acquire("a")


def test_too_many_watches_from_one_client_get_429(clock: VirtualClock) -> None:
    app = create_app(
        cluster_store(clock), clock, security=SecurityConfig(limits=Limits(max_watches_per_client=1))
    )
    opened = threading.Event()
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url, timeout=10) as client:
        with client.stream("GET", "/api/v1/nodes", params={"watch": "1", "timeoutSeconds": "30"}) as first:
            assert first.status_code == 200
            opened.set()
            second = client.get("/api/v1/pods", params={"watch": "true", "timeoutSeconds": "1"})
            assert second.status_code == 429
            assert second.headers["Retry-After"] == "1"
            assert second.json()["message"] == "Too many requests, please try again later."
            assert client.get("/api/v1/nodes").status_code == 200  # lists are not counted
        # the slot is released once the server notices the closed stream
        for _ in range(100):
            again = client.get("/api/v1/nodes", params={"watch": "1", "timeoutSeconds": "1"})
            if again.status_code == 200:
                break
            threading.Event().wait(0.05)
        assert again.status_code == 200
    assert opened.is_set()
