"""Requests a bad client sends, over real HTTP (a uvicorn BackgroundServer): repeated query
parameters read once, as upstream reads them; amplifying patches bounded; slow and idle
connections closed; client mistakes answered with a 4xx Status, never a 500."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.fieldvalidation import warning_headers
from kubetaint.apiserver.limits import Limits
from kubetaint.apiserver.query import parse
from kubetaint.apiserver.security import SecurityConfig
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.controlplane import ControlPlane
from kubetaint.store.memory import MemoryStore

from .test_auth import TOKENS, bearer

PODS = "/api/v1/namespaces/default/pods"
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
#: Generous bounds for a client waiting on a bounded answer (they bound a failure, never decide a pass).
CLIENT_TIMEOUT = 30.0


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
    }


def serve(tmp_path: Path, **config: Any) -> BackgroundServer:
    clock = VirtualClock()
    plane = ControlPlane(MemoryStore(clock), clock, seed=3, graceful_deletion=True)
    plane.ensure_system_namespaces()
    for name in ("n1", "n2"):
        plane.store.create("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    app = create_app(plane.store, clock, plane.registry, security=SecurityConfig(**config))
    return BackgroundServer(app).start()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[BackgroundServer]:
    running = serve(tmp_path)
    yield running
    running.stop()


@pytest.fixture
def client(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=CLIENT_TIMEOUT) as http:
        yield http


# one reading of the query -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "name", "first", "every"),
    [
        pytest.param(
            b"watch=0&watch=1", "watch", "0", ["0", "1"], id="a repeated parameter reads its first value"
        ),
        pytest.param(
            b"fieldSelector=spec.nodeName%3Dn1&fieldSelector=",
            "fieldSelector",
            "spec.nodeName=n1",
            ["spec.nodeName=n1", ""],
            id="an empty second value does not replace the first",
        ),
        pytest.param(b"a=1;b=2&a=3", "a", "3", ["3"], id="a pair with a semicolon is dropped as Go drops it"),
        pytest.param(b"a=%zz&a=2", "a", "2", ["2"], id="a pair with a malformed escape is dropped"),
        pytest.param(b"a=x+y%2B", "a", "x y+", ["x y+"], id="plus is a space and escapes decode"),
        pytest.param(b"watch&x=1", "watch", "", [""], id="a bare name has the empty value"),
        pytest.param(b"", "a", None, [], id="an absent parameter"),
    ],
)
def test_query_reads_like_go_url_values(raw: bytes, name: str, first: str | None, every: list[str]) -> None:
    query = parse(raw)
    assert query.get(name) == first
    assert query.getlist(name) == every


@pytest.mark.parametrize(
    ("value", "watch"),
    [
        pytest.param(None, False, id="absent is no watch"),
        pytest.param("0", False, id="0 is no watch"),
        pytest.param("FALSE", False, id="false in any case is no watch"),
        pytest.param("", True, id="the empty value is a watch"),
        pytest.param("1", True, id="1 is a watch"),
        pytest.param("maybe", True, id="any other value is a watch"),
    ],
)
def test_watch_flag_is_convert_slice_string_to_bool(value: str | None, watch: bool) -> None:
    raw = b"" if value is None else f"watch={value}".encode()
    assert parse(raw).flag("watch") is watch


@pytest.fixture
def secure(tmp_path: Path) -> Iterator[BackgroundServer]:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(TOKENS)
    running = serve(tmp_path, token_auth_file=str(tokens), limits=Limits(max_watches_per_client=1))
    with httpx.Client(base_url=running.url, headers=bearer("admin-token"), timeout=CLIENT_TIMEOUT) as admin:
        for name, node in (("on-n1", "n1"), ("on-n2", "n2")):
            assert admin.post(PODS, json=pod(name, nodeName=node)).status_code == 201
        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "pod-lister"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}],
        }
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "viewer-lists-pods"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-lister"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "viewer"}],
        }
        rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/default"
        assert admin.post(f"{rbac}/roles", json=role).status_code == 201, "RBAC objects are served"
        assert admin.post(f"{rbac}/rolebindings", json=binding).status_code == 201
    yield running
    running.stop()


def _names(response: httpx.Response) -> list[str]:
    return sorted(item["metadata"]["name"] for item in response.json()["items"])


def test_a_second_empty_field_selector_does_not_widen_a_node_list(secure: BackgroundServer) -> None:
    with httpx.Client(base_url=secure.url, headers=bearer("n1-token"), timeout=CLIENT_TIMEOUT) as node:
        response = node.get(f"{PODS}?fieldSelector=spec.nodeName%3Dn1&fieldSelector=")
        assert response.status_code == 200, response.text
        assert _names(response) == ["on-n1"]
        refused = node.get(f"{PODS}?fieldSelector=&fieldSelector=spec.nodeName%3Dn1")
        assert refused.status_code == 403, refused.text


def test_watch_0_then_1_is_a_list_for_authorization_and_handler_alike(secure: BackgroundServer) -> None:
    with httpx.Client(base_url=secure.url, headers=bearer("viewer-token"), timeout=CLIENT_TIMEOUT) as viewer:
        listed = viewer.get(f"{PODS}?watch=0&watch=1")
        assert listed.status_code == 200, listed.text
        assert listed.json()["kind"] == "PodList"
        refused = viewer.get(f"{PODS}?watch=1&watch=0")
        assert refused.status_code == 403
        assert 'cannot watch resource "pods"' in refused.json()["message"]


def test_the_watch_cap_counts_the_watches_served(secure: BackgroundServer) -> None:
    admin = httpx.Client(base_url=secure.url, headers=bearer("admin-token"), timeout=CLIENT_TIMEOUT)
    with admin, admin.stream("GET", PODS, params={"watch": "1", "timeoutSeconds": "30"}) as open_watch:
        assert open_watch.status_code == 200
        second = admin.get(f"{PODS}?watch=&timeoutSeconds=30")  # the empty value is a watch too
        assert second.status_code == 429, second.text
        assert admin.get(f"{PODS}?watch=0&watch=1").json()["kind"] == "PodList"


# bounded work per request -----------------------------------------------------------------

#: The reproducer: a ~1.2 KB body that adds a list and copies it into itself twenty times.
AMPLIFYING = [{"op": "add", "path": "/spec/x", "value": ["a" * 30] * 10}] + [
    {"op": "copy", "from": "/spec/x", "path": "/spec/x/-"}
] * 20


@pytest.mark.parametrize(
    "params",
    [pytest.param({}, id="stored"), pytest.param({"dryRun": "All"}, id="dry run")],
)
def test_a_self_copying_json_patch_stops_at_the_copy_limit(
    client: httpx.Client, params: dict[str, str]
) -> None:
    assert client.post(PODS, json=pod("p")).status_code == 201
    body = json.dumps(AMPLIFYING, separators=(",", ":")).encode()
    assert len(body) < 1400
    response = client.patch(f"{PODS}/p", params=params, content=body, headers=JSON_PATCH)
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["reason"] == "Invalid"
    # patch.go wraps json-patch's AccumulatedCopySizeError in NewGenericServerResponse(422)
    assert status["message"] == "the server rejected our request due to an error in our request"
    assert client.get("/healthz").text == "ok"
    # the same patch with five copies applies (and its unknown spec.x is dropped with a warning)
    fewer = json.dumps(AMPLIFYING[:6]).encode()
    applied = client.patch(f"{PODS}/p", params=params, content=fewer, headers=JSON_PATCH)
    assert applied.status_code == 200, applied.text
    assert applied.headers.get_list("warning") == ['299 - "unknown field \\"spec.x\\""']


def test_a_json_patch_over_10000_operations_is_413(client: httpx.Client) -> None:
    assert client.post(PODS, json=pod("p")).status_code == 201
    ops = [{"op": "test", "path": "/kind", "value": "Pod"}] * 10_001
    response = client.patch(f"{PODS}/p", content=json.dumps(ops).encode(), headers=JSON_PATCH)
    assert response.status_code == 413
    assert response.json()["message"] == (
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    )


@pytest.mark.parametrize(
    ("content_type", "patch"),
    [
        pytest.param("application/merge-patch+json", {"metadata": {"annotations": {}}}, id="merge patch"),
        pytest.param(
            "application/strategic-merge-patch+json", {"metadata": {"annotations": {}}}, id="strategic"
        ),
        pytest.param(
            "application/json-patch+json",
            [{"op": "add", "path": "/metadata/annotations", "value": {}}],
            id="json patch",
        ),
    ],
)
def test_a_patched_object_larger_than_a_request_is_413(tmp_path: Path, content_type: str, patch: Any) -> None:
    running = serve(tmp_path, limits=Limits(max_request_body_bytes=20_000))
    try:
        with httpx.Client(base_url=running.url, timeout=CLIENT_TIMEOUT) as http:
            big = pod("p")
            big["metadata"]["annotations"] = {"a": "x" * 12_000}
            assert http.post(PODS, json=big).status_code == 201
            annotations = {"b": "y" * 12_000}
            if isinstance(patch, dict):
                patch = {"metadata": {"annotations": annotations}}
            else:
                patch = [{"op": "add", "path": "/metadata/annotations/b", "value": annotations["b"]}]
            response = http.patch(
                f"{PODS}/p", content=json.dumps(patch), headers={"Content-Type": content_type}
            )
            assert response.status_code == 413, response.text
            assert response.json()["message"] == "Request entity too large: limit is 20000"
            stored = http.get(f"{PODS}/p").json()
            assert "b" not in stored["metadata"]["annotations"]
    finally:
        running.stop()


# slow and idle connections ------------------------------------------------------------------


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """True when the server closes `sock` (EOF) within `seconds`."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


@pytest.fixture
def impatient(tmp_path: Path) -> Iterator[BackgroundServer]:
    limits = Limits(read_header_timeout=0.5, request_timeout=0.5, idle_timeout=0.5, max_connections=300)
    running = serve(tmp_path, limits=limits)
    yield running
    running.stop()


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param(b"", id="a connection that sends nothing"),
        pytest.param(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n", id="half the headers"),
        pytest.param(
            b'POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"kind":',
            id="the headers and part of the body",
        ),
    ],
)
def test_an_incomplete_request_is_closed_after_the_timeout(impatient: BackgroundServer, sent: bytes) -> None:
    with socket.create_connection((impatient.host, impatient.port)) as slow:
        slow.sendall(sent)
        with httpx.Client(base_url=impatient.url, timeout=CLIENT_TIMEOUT) as http:
            assert http.get("/healthz").text == "ok"
        assert _closed_within(slow, 10.0)


def test_idle_connections_do_not_lock_out_a_new_client(impatient: BackgroundServer) -> None:
    idle = [socket.create_connection((impatient.host, impatient.port)) for _ in range(250)]
    try:
        with httpx.Client(base_url=impatient.url, timeout=CLIENT_TIMEOUT) as http:
            assert http.get("/api/v1/namespaces").status_code == 200
    finally:
        for sock in idle:
            sock.close()


def test_past_the_connection_cap_a_connection_gets_429_and_one_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    running = serve(tmp_path, limits=Limits(max_connections=3))
    held = [socket.create_connection((running.host, running.port)) for _ in range(3)]
    try:
        time.sleep(0.2)  # let the server accept the held ones
        with caplog.at_level("WARNING", logger="kubetaint.apiserver.serving"):
            for _ in range(5):
                with httpx.Client(base_url=running.url, timeout=CLIENT_TIMEOUT) as http:
                    response = http.get("/healthz")
                assert response.status_code == 429
                assert response.headers["Retry-After"] == "1"
                assert response.json()["reason"] == "TooManyRequests"
        lines = [r for r in caplog.records if "connection limit of 3 reached" in r.getMessage()]
        assert len(lines) == 1
    finally:
        for sock in held:
            sock.close()
        running.stop()


# client mistakes are 4xx, never 500 ---------------------------------------------------------


def test_an_unknown_field_outside_latin_1_is_warned_in_utf_8_and_not_stored(client: httpx.Client) -> None:
    body = json.dumps({**pod("p"), "x€": 1}, ensure_ascii=False).encode()
    response = client.post(PODS, content=body)
    assert response.status_code == 201, response.text
    warnings = [value for key, value in response.headers.raw if key.lower() == b"warning"]
    assert warnings == ['299 - "unknown field \\"x€\\""'.encode()]
    assert "x€" not in client.get(f"{PODS}/p").json()


@pytest.mark.parametrize(
    ("validation", "code", "warned"),
    [
        pytest.param(None, 201, True, id="Warn by default: stored without the field, with a Warning"),
        pytest.param("Warn", 201, True, id="Warn"),
        pytest.param("Ignore", 201, False, id="Ignore: stored without the field, silently"),
        pytest.param("Strict", 400, False, id="Strict: refused"),
    ],
)
def test_unknown_fields_are_never_stored(
    client: httpx.Client, validation: str | None, code: int, warned: bool
) -> None:
    body = pod("p")
    body["spec"]["x"] = "z" * 2_900_000
    params = {"fieldValidation": validation} if validation else {}
    response = client.post(PODS, json=body, params=params)
    assert response.status_code == code
    assert ('299 - "unknown field \\"spec.x\\""' in response.headers.get_list("warning")) is warned
    if code == 400:
        assert response.json()["message"] == (
            'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.x"'
        )
        return
    assert "x" not in response.json()["spec"]
    fetched = client.get(f"{PODS}/p")
    assert "x" not in fetched.json()["spec"]
    assert len(fetched.content) < 10_000


def test_a_json_patch_adding_an_unknown_field_is_warned_and_dropped(client: httpx.Client) -> None:
    assert client.post(PODS, json=pod("p")).status_code == 201
    patch = json.dumps([{"op": "add", "path": "/spec/x", "value": 1}])
    response = client.patch(f"{PODS}/p", content=patch, headers=JSON_PATCH)
    assert response.status_code == 200
    assert response.headers.get_list("warning") == ['299 - "unknown field \\"spec.x\\""']
    assert "x" not in client.get(f"{PODS}/p").json()["spec"]
    strict = client.patch(
        f"{PODS}/p", params={"fieldValidation": "Strict"}, content=patch, headers=JSON_PATCH
    )
    assert strict.status_code == 422
    assert strict.json()["message"].endswith('strict decoding error: unknown field "spec.x"')


def test_a_yaml_body_with_a_4301_digit_integer_is_400(client: httpx.Client) -> None:
    body = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  priority: {'9' * 4301}\n"
    response = client.post(PODS, content=body, headers={"Content-Type": "application/yaml"})
    assert response.status_code == 400
    assert response.json()["message"].startswith("error decoding YAML body: ")


@pytest.mark.parametrize(
    "version",
    [
        pytest.param("9223372036854775808", id="2^63"),
        pytest.param("18446744073709551615", id="the largest uint64"),
    ],
)
def test_a_watch_from_a_resource_version_past_int64_waits_for_it(client: httpx.Client, version: str) -> None:
    params = {"watch": "1", "resourceVersion": version, "timeoutSeconds": "1"}
    with client.stream("GET", PODS, params=params) as response:
        assert response.status_code == 200
        assert b"".join(response.iter_bytes()) == b""


@pytest.mark.parametrize(
    ("version", "code"),
    [
        pytest.param("18446744073709551616", 400, id="past uint64"),
        pytest.param("+5", 400, id="a sign"),
        pytest.param("1_0", 400, id="an underscore"),
    ],
)
def test_a_watch_from_a_malformed_resource_version_is_400(
    client: httpx.Client, version: str, code: int
) -> None:
    response = client.get(PODS, params={"watch": "1", "resourceVersion": version, "timeoutSeconds": "1"})
    assert response.status_code == code
    assert response.json()["message"] == f'invalid resource version "{version}"'


@pytest.mark.parametrize(
    ("name", "value"),
    [
        pytest.param("limit", "9223372036854775808", id="limit past int64"),
        pytest.param("timeoutSeconds", "99999999999999999999", id="timeoutSeconds past int64"),
    ],
)
def test_integer_parameters_past_int64_are_400(client: httpx.Client, name: str, value: str) -> None:
    params = {name: value, **({"watch": "1"} if name == "timeoutSeconds" else {})}
    response = client.get(PODS, params=params)
    assert response.status_code == 400
    assert response.json()["message"] == f'strconv.ParseInt: parsing "{value}": value out of range for {name}'


def test_a_pod_with_the_largest_grace_period_is_deleted_as_go_wraps_the_duration(
    client: httpx.Client,
) -> None:
    created = client.post(PODS, json=pod("p", nodeName="n1", terminationGracePeriodSeconds=2**63 - 1))
    assert created.status_code == 201, created.text
    created_at = created.json()["metadata"]["creationTimestamp"]
    response = client.delete(f"{PODS}/p")
    assert response.status_code == 200, response.text
    meta = response.json()["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 2**63 - 1
    # time.Second * time.Duration(2^63-1) wraps to -1s: the deletion is due at once
    assert meta["deletionTimestamp"] < created_at


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"gracePeriodSeconds": 2**63}, id="a grace period past int64 in DeleteOptions"),
    ],
)
def test_delete_options_past_int64_are_400(client: httpx.Client, body: dict[str, Any]) -> None:
    assert client.post(PODS, json=pod("p")).status_code == 201
    response = client.request("DELETE", f"{PODS}/p", content=json.dumps(body))
    assert response.status_code == 400
    assert response.json()["message"] == (
        f"json: cannot unmarshal number {2**63} into Go struct field DeleteOptions.gracePeriodSeconds of type int64"
    )
    assert client.get(f"{PODS}/p").status_code == 200


@pytest.mark.parametrize(
    "quantity",
    [
        pytest.param("1e999999999", id="an exponent past the bound"),
        pytest.param("1e-999999999", id="a negative exponent past the bound"),
        pytest.param("9" * 5000, id="five thousand digits"),
    ],
)
def test_extreme_quantities_are_422_at_once(client: httpx.Client, quantity: str) -> None:
    body = pod("p")
    body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": quantity}}
    response = client.post(PODS, json=body)
    assert response.status_code == 422, response.text


# the warning recorder (apiserver/pkg/endpoints/filters/warning_test.go TestTruncation) -------


def test_warnings_are_truncated_as_the_recorder_truncates() -> None:
    added = ["aaaaaaaaaa", "aaaaaaaaaa", "bb", "ccc", "Iñtërnâtiô"]
    assert warning_headers(added, total=25, item=5) == [
        b'299 - "aaaaaaaaaa"',
        b'299 - "bb"',
        b'299 - "ccc"',
        '299 - "Iñtërnâtiô"'.encode(),
    ]
    added += ["e", "ffffffffff", "ffffffffff", "gggggggggg", "h"]
    assert warning_headers(added, total=25, item=5) == [
        b'299 - "aaaaa"',
        b'299 - "bb"',
        b'299 - "ccc"',
        '299 - "Iñtër"'.encode(),
        b'299 - "e"',
        b'299 - "fffff"',
        b'299 - "ggggg"',
    ]


@pytest.mark.parametrize(
    ("text", "header"),
    [
        pytest.param("mytext", b'299 - "mytext"', id="plain text"),
        pytest.param('a "quoted" \\ text', b'299 - "a \\"quoted\\" \\\\ text"', id="quotes and backslashes"),
        pytest.param("my\ntext", None, id="control characters: no header"),
        pytest.param("", None, id="empty: no header"),
    ],
)
def test_warning_header_text(text: str, header: bytes | None) -> None:
    assert warning_headers([text]) == ([header] if header else [])


_LOW_FD_SERVER = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.limits import Limits
from kubetaint.apiserver.security import SecurityConfig
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore
clock = VirtualClock()
app = create_app(MemoryStore(clock), clock, security=SecurityConfig(limits=Limits(max_connections=10_000)))
server = BackgroundServer(app).start()
print(server.port, flush=True)
time.sleep(60)
"""


def test_running_out_of_file_descriptors_logs_one_line_not_tracebacks(tmp_path: Path) -> None:
    """A server whose connection cap is above its open-file limit (64): accept() fails with
    EMFILE while 100 connections are held, and the loop reports it in one line."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _LOW_FD_SERVER], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        held = []
        for _ in range(100):
            with contextlib.suppress(OSError):
                held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        time.sleep(2.5)  # accept() retries every second meanwhile
        for sock in held:
            sock.close()
        time.sleep(1.5)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=CLIENT_TIMEOUT) as http:
            assert http.get("/healthz").text == "ok"  # serving again once connections close
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    lines = [line for line in err.splitlines() if "cannot accept connections" in line]
    assert len(lines) == 1, err
    assert "Too many open files" in lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "seconds",
    [
        pytest.param(str(2**63 - 1), id="the largest int64 wraps around to -1s"),
        pytest.param("-5", id="a negative timeout"),
    ],
)
def test_a_watch_whose_timeout_is_a_negative_go_duration_ends_at_once(
    client: httpx.Client, seconds: str
) -> None:
    assert client.post(PODS, json=pod("p")).status_code == 201
    with client.stream("GET", PODS, params={"watch": "1", "timeoutSeconds": seconds}) as response:
        assert response.status_code == 200
        events = [json.loads(line) for line in response.iter_lines() if line]
    assert [event["type"] for event in events] in ([], ["ADDED"])
