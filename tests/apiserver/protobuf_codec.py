"""A tiny protobuf encoder for tests, driven by the same schema as the server's decoder: it
writes what gogo-protobuf's generated Marshal writes for a Go value (every non-pointer field,
zero or not; pointers, slices and maps only when set), so that encode(JSON) then decode gives
the JSON back. Also hypothesis strategies for canonical JSON objects of each message."""

from __future__ import annotations

import base64
import json
import struct
from datetime import UTC, datetime
from typing import Any

from hypothesis import strategies as st

from kubetaint.apiserver.protobuf.decode import MAGIC, ZERO_TIME_SECONDS
from kubetaint.apiserver.protobuf.schema import Field, Message, load

SCHEMA = load()
JSON = dict[str, Any]
_ZERO: dict[str, Any] = {"string": "", "bool": False, "int32": 0, "int64": 0, "uint32": 0, "uint64": 0}


def varint(value: int) -> bytes:
    value &= 0xFFFF_FFFF_FFFF_FFFF  # negative ints are 10-byte two's complement varints
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def key(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def length_delimited(number: int, payload: bytes) -> bytes:
    return key(number, 2) + varint(len(payload)) + payload


def text(number: int, value: str) -> bytes:
    return length_delimited(number, value.encode())


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = text(1, api_version) + text(2, kind)
    return MAGIC + length_delimited(1, type_meta) + length_delimited(2, raw) + text(3, "") + text(4, "")


def encode_kind(obj: JSON, *, packed: bool = False) -> bytes:
    """The enveloped protobuf body of a JSON object with apiVersion and kind."""
    message = SCHEMA.kind(obj["apiVersion"], obj["kind"])
    assert message is not None, obj["kind"]
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    return envelope(obj["apiVersion"], obj["kind"], encode(message, body, packed=packed))


def encode(message: Message, obj: JSON, *, packed: bool = False) -> bytes:
    out = bytearray()
    for field in message.fields:
        if field.inline:
            out += length_delimited(field.number, encode(SCHEMA.messages[field.type], obj, packed=packed))
            continue
        value = obj.get(field.json_name)
        if field.map_key is not None:
            for k, v in (value or {}).items():
                entry = _single(Field(1, "k", field.map_key, False, False, False, None, False), k, packed)
                entry += _single(Field(2, "v", field.type, False, False, False, None, False), v, packed)
                out += length_delimited(field.number, entry)
        elif field.repeated:
            if packed and field.type in ("int32", "int64", "bool") and value:
                out += length_delimited(field.number, b"".join(varint(int(v)) for v in value))
            else:
                for item in value or []:
                    out += _single(field, item, packed)
        elif field.pointer:
            if value is not None:
                out += _single(field, value, packed)
        else:
            out += _single(
                field, _zero(field) if value is None and field.json_name not in obj else value, packed
            )
    return bytes(out)


def _zero(field: Field) -> Any:
    if field.type in _ZERO:
        return _ZERO[field.type]
    return {"quantity": "0", "intstr": 0, "double": 0.0}.get(field.type)


def _single(field: Field, value: Any, packed: bool) -> bytes:
    kind, number = field.type, field.number
    if kind == "string":
        return text(number, value)
    if kind in ("bool", "int32", "int64", "uint32", "uint64"):
        return key(number, 0) + varint(int(value))
    if kind == "double":
        return key(number, 1) + struct.pack("<d", value)
    if kind == "bytes":
        return length_delimited(number, base64.b64decode(value or ""))
    if kind in ("time", "microtime"):
        return length_delimited(number, _timestamp(value))
    if kind == "quantity":
        return length_delimited(number, text(1, value))
    if kind == "intstr":
        if isinstance(value, str):
            inner = key(1, 0) + varint(1) + key(2, 0) + varint(0) + text(3, value)
        else:
            inner = key(1, 0) + varint(0) + key(2, 0) + varint(value) + text(3, "")
        return length_delimited(number, inner)
    if kind in ("fieldsv1", "rawext"):
        return length_delimited(number, text(1, json.dumps(value)) if value is not None else b"")
    return length_delimited(number, encode(SCHEMA.messages[kind], value or {}, packed=packed))


def _timestamp(value: str | None) -> bytes:
    if value is None:
        return key(1, 0) + varint(ZERO_TIME_SECONDS) + key(2, 0) + varint(0)
    moment = datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    micros = int(value[20:26]) if len(value) > 20 else 0
    return key(1, 0) + varint(int(moment.timestamp())) + key(2, 0) + varint(micros * 1000)


# Canonical JSON (what encoding/json prints for a Go value) ---------------------------------

QUANTITIES = ["0", "1", "100m", "250m", "2", "1Gi", "512Mi", "10k", "1500m"]
_MAX_DEPTH = 4


def minimal(message: Message) -> JSON:
    """encoding/json of the Go zero value of a message."""
    out: JSON = {}
    for field in message.fields:
        if field.inline:
            out.update(minimal(SCHEMA.messages[field.type]))
        elif (
            field.map_key is not None
            or field.repeated
            or field.pointer
            or field.type in ("bytes", "fieldsv1")
        ):
            if not field.omitempty:
                out[field.json_name] = None
        elif field.is_message:
            out[field.json_name] = minimal(SCHEMA.messages[field.type])
        elif field.type in ("time", "microtime", "rawext"):
            out[field.json_name] = None
        elif field.type in ("quantity", "intstr"):
            out[field.json_name] = _zero(field)
        elif not field.omitempty:
            out[field.json_name] = _ZERO.get(field.type, 0.0)
    return out


def _value(field: Field, depth: int, nonzero: bool) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind == "string":
        return st.text(min_size=1 if nonzero else 0, max_size=8)
    if kind == "bool":
        return st.just(True) if nonzero else st.booleans()
    bounds = {"int32": 31, "int64": 63}
    if kind in bounds:
        ints = st.integers(-(2 ** bounds[kind]), 2 ** bounds[kind] - 1)
        return ints.filter(bool) if nonzero else ints
    if kind in ("uint32", "uint64"):
        ints = st.integers(0, 2 ** (32 if kind == "uint32" else 64) - 1)
        return ints.filter(bool) if nonzero else ints
    if kind == "double":
        floats = st.floats(allow_nan=False, allow_infinity=False)
        return floats.filter(bool) if nonzero else floats
    if kind == "bytes":
        return st.binary(min_size=1, max_size=6).map(lambda b: base64.b64encode(b).decode())
    if kind == "time":
        return st.integers(0, 4_000_000_000).map(
            lambda s: datetime.fromtimestamp(s, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        )
    if kind == "microtime":
        return st.integers(0, 4_000_000_000_000_000).map(
            lambda us: (
                datetime.fromtimestamp(us // 1_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%S")
                + f".{us % 1_000_000:06d}Z"
            )
        )
    if kind == "quantity":
        return st.sampled_from(QUANTITIES)
    if kind == "intstr":
        return st.integers(-(2**31), 2**31 - 1) | st.text(max_size=5)
    if kind in ("fieldsv1", "rawext"):
        return st.dictionaries(st.sampled_from(["f:metadata", "f:spec", "."]), st.just({}), max_size=2)
    return objects(SCHEMA.messages[kind], depth + 1)


@st.composite
def _object(draw: st.DrawFn, message: Message, depth: int) -> JSON:
    out: JSON = {}
    for field in message.fields:
        if field.inline:
            out.update(draw(_object(SCHEMA.messages[field.type], depth)))
            continue
        name = field.json_name
        always = not (field.pointer or field.repeated or field.map_key is not None)
        if field.is_message and always:
            out[name] = (
                draw(_value(field, depth, False))
                if depth < _MAX_DEPTH
                else minimal(SCHEMA.messages[field.type])
            )
            continue
        if depth >= _MAX_DEPTH or not draw(st.booleans()):
            out.update({k: v for k, v in minimal(Message("", (field,), {})).items()})
            continue
        if field.map_key is not None:
            out[name] = draw(
                st.dictionaries(st.text(max_size=6), _value(field, depth, False), min_size=1, max_size=2)
            )
        elif field.repeated:
            out[name] = draw(st.lists(_value(field, depth, False), min_size=1, max_size=2))
        else:
            zero_omitted = always and field.omitempty and field.type in _ZERO | {"double": 0, "bytes": 0}
            out[name] = draw(_value(field, depth, nonzero=zero_omitted))
    return out


def objects(message: Message, depth: int = 1) -> st.SearchStrategy[JSON]:
    return _object(message, depth)


def kind_objects(kind_key: str) -> st.SearchStrategy[JSON]:
    """Canonical JSON objects of one schema kind (`apps/v1/Deployment`), with apiVersion and kind."""
    api_version, _, kind = kind_key.rpartition("/")
    message = SCHEMA.messages[SCHEMA.kinds[kind_key]]
    return objects(message).map(lambda obj: {"kind": kind, "apiVersion": api_version or "v1", **obj})
