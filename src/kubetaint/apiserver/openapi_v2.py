"""`/openapi/v2` as the protobuf `openapi_v2.Document` (gnostic's OpenAPIv2.proto) that kubectl
1.27 and 1.28 fetch before `create/apply -f` and `explain` (kube-openapi's handler serves it as
`application/com.github.proto-openapi.spec.v2.v1.0+protobuf`; a 404 there is fatal to those
versions). The definitions are the served v3 schemas written in swagger 2.0 form (`#/definitions/`
references, `allOf` wrappers unwrapped, `x-kubernetes-*` as vendor extensions); there are no paths,
which those kubectl versions read only for `kubectl explain --api-version` and the v2 validator's
fallbacks [kube-apiserver lists every operation].
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from kubetaint.api.openapi_schemas import REF, schemas
from kubetaint.apiserver.discovery import VERSION_INFO

#: What kubectl asks for, and what kube-openapi answers with (Go's mime parser rejects the `@`).
PROTOBUF_TYPE = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
RETURNED_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
V2_REF = "#/definitions/"


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _bytes_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _str(number: int, text: str) -> bytes:
    return _bytes_field(number, text.encode()) if text else b""


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _any(value: Any) -> bytes:
    """openapi_v2.Any: the value as YAML text (JSON is YAML), field 2."""
    return _str(2, json.dumps(value, separators=(",", ":"), sort_keys=True))


def _named_any(name: str, value: Any) -> bytes:
    return _str(1, name) + _bytes_field(2, _any(value))


def _schema(node: dict[str, Any]) -> bytes:
    """openapi_v2.Schema (field numbers of gnostic's OpenAPIv2.proto)."""
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        node = {**{k: v for k, v in node.items() if k != "allOf"}, "$ref": all_of[0]["$ref"]}
    out = bytearray()
    ref = node.get("$ref")
    if isinstance(ref, str):
        out += _str(1, V2_REF + ref.removeprefix(REF))
    out += _str(2, str(node.get("format", "")))
    out += _str(4, str(node.get("description", "")))
    for name in node.get("required", []):
        out += _str(19, name)
    for value in node.get("enum", []):
        out += _bytes_field(20, _any(value))
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out += _bytes_field(21, _bytes_field(1, _schema(extra)))
    elif isinstance(extra, bool):
        out += _bytes_field(21, _varint_field(2, int(extra)))
    kind = node.get("type")
    if isinstance(kind, str):
        out += _bytes_field(22, _str(1, kind))
    items = node.get("items")
    if isinstance(items, dict):
        out += _bytes_field(23, _bytes_field(1, _schema(items)))
    props = node.get("properties")
    if isinstance(props, dict):
        named = b"".join(_bytes_field(1, _str(1, k) + _bytes_field(2, _schema(v))) for k, v in props.items())
        out += _bytes_field(25, named)
    for key, value in node.items():
        if key.startswith("x-"):
            out += _bytes_field(31, _named_any(key, value))
    return bytes(out)


@cache
def _document(git_version: str) -> bytes:
    definitions = b"".join(
        _bytes_field(1, _str(1, name) + _bytes_field(2, _schema(schema)))
        for name, schema in sorted(schemas().items())
    )
    info = _str(1, "Kubernetes") + _str(2, git_version)
    return _str(1, "2.0") + _bytes_field(2, info) + _bytes_field(8, b"") + _bytes_field(9, definitions)


def document() -> bytes:
    """The serialized openapi_v2.Document for the reported server version."""
    return _document(str(VERSION_INFO["gitVersion"]))
