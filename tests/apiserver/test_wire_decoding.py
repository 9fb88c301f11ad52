"""Request bodies Go decodes leniently: lone UTF-16 surrogate escapes become U+FFFD."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from kubetaint.apiserver.wire import load_json_any


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(b'{"a": "x\\ud800y"}', {"a": "x\ufffdy"}, id="a lone high surrogate becomes U+FFFD"),
        pytest.param(b'{"\\udfff": 1}', {"\ufffd": 1}, id="a lone low surrogate in a key becomes U+FFFD"),
        pytest.param(
            b'{"a": "\\ud83d\\ude00"}', {"a": "\U0001f600"}, id="a surrogate pair stays one character"
        ),
        pytest.param(b'{"a": "plain"}', {"a": "plain"}, id="text without escapes is untouched"),
    ],
)
def test_surrogate_escapes_decode_as_go_does(raw: bytes, expected: object) -> None:
    assert load_json_any(raw) == expected


def test_a_label_with_a_lone_surrogate_is_stored_and_served(client: TestClient) -> None:
    body = b'{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","annotations":{"note":"a\\ud800"}}}'
    created = client.post("/api/v1/nodes", content=body, headers={"Content-Type": "application/json"})
    assert created.status_code == 201
    assert client.get("/api/v1/nodes/n1").json()["metadata"]["annotations"] == {"note": "a\ufffd"}


def test_yaml_surrogate_escapes_become_replacement_characters(client: TestClient) -> None:
    body = b'{"kind": "\\ud800\\udc00"}'
    response = client.post("/api/v1/nodes", content=body, headers={"Content-Type": "application/yaml"})
    assert response.status_code == 400
    assert response.json()["message"] == (
        "the kind in the data (\ufffd\ufffd) does not match the expected kind (Node)"
    )
