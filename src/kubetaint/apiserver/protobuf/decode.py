"""Protobuf request bodies to the JSON object the same request would carry as JSON
(apimachinery/pkg/runtime/serializer/protobuf's envelope, then the generated Unmarshal code of
k8s.io/api, then encoding/json of the decoded Go value).

The envelope is the 4-byte magic `k8s\\x00` and a `runtime.Unknown` {1: typeMeta {1: apiVersion,
2: kind}, 2: raw (the object's own message), 3: contentEncoding, 4: contentType}.

Go semantics kept:
- gogo-protobuf writes every non-pointer field, so a zero scalar is dropped when its JSON tag has
  `omitempty`; a pointer field that is present keeps its value, zero included (`replicas: 0`,
  `tolerationSeconds: 0`). A field absent from the body gets what encoding/json prints for the
  Go zero value: nothing with omitempty, `null` for nil pointers, slices and maps, zero scalars,
  and an object for non-pointer structs (structs are never omitted).
- Repeated occurrences of a message field merge (their encodings concatenate), a scalar's last
  occurrence wins, repeated scalars may be packed, unknown fields are skipped.
- Time and MicroTime are {1: seconds, 2: nanos} printed as RFC 3339 in UTC (`null` for Go's zero
  time); Quantity is {1: string} printed canonically; IntOrString is {1: type, 2: intVal,
  3: strVal}; FieldsV1 and RawExtension carry raw JSON.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from datetime import UTC, datetime, timedelta
from typing import Any

from kubetaint.api.quantity import QuantityError, format_quantity
from kubetaint.apiserver.protobuf import reader
from kubetaint.apiserver.protobuf.reader import BYTES, FIXED64, VARINT, ProtobufError
from kubetaint.apiserver.protobuf.schema import Field, Message, Schema, load

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
#: Go's zero time.Time, as seconds since the Unix epoch.
ZERO_TIME_SECONDS = -62135596800
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_WIRE = {
    "bool": VARINT,
    "int32": VARINT,
    "int64": VARINT,
    "uint32": VARINT,
    "uint64": VARINT,
    "double": FIXED64,
}
MAX_DEPTH = 100

JSON = dict[str, Any]


class NotRegisteredError(ProtobufError):
    """The envelope names a kind the schema does not have."""


def unwrap(raw: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, the object's bytes) of an enveloped body."""
    if not raw.startswith(MAGIC):
        raise ProtobufError(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
        )
    api_version = kind = ""
    content = b""
    for number, wire, value in reader.iter_fields(raw, "Unknown", len(MAGIC)):
        if number == 1 and isinstance(value, bytes):
            for sub, sub_wire, text in reader.iter_fields(value, "TypeMeta"):
                if sub in (1, 2):
                    if not isinstance(text, bytes):
                        raise ProtobufError(f"proto: wrong wireType = {sub_wire} for field {_TYPE_META[sub]}")
                    if sub == 1:
                        api_version = _text(text)
                    else:
                        kind = _text(text)
        elif number == 2 and isinstance(value, bytes):
            content = value
        elif number in (1, 2, 3, 4) and not isinstance(value, bytes):
            raise ProtobufError(f"proto: wrong wireType = {wire} for field {_UNKNOWN[number]}")
    if not kind:
        raise ProtobufError("Object 'Kind' is missing in protobuf body")
    return api_version, kind, content


_TYPE_META = {1: "APIVersion", 2: "Kind"}
_UNKNOWN = {1: "TypeMeta", 2: "Raw", 3: "ContentEncoding", 4: "ContentType"}


def decode_body(raw: bytes, schema: Schema | None = None) -> JSON:
    """The JSON object of an enveloped protobuf body, with its apiVersion and kind."""
    schema = schema or load()
    api_version, kind, content = unwrap(raw)
    message = schema.kind(api_version, kind)
    if message is None:
        raise NotRegisteredError(f'no kind "{kind}" is registered for version "{api_version}"')
    decoder = _Decoder(schema, budget=len(raw) + 10_000)
    try:
        obj = decoder.message(message, content, 1)
    except ProtobufError as exc:
        raise ProtobufError(
            f'{kind} in version "{api_version}" cannot be handled as a {kind}: {exc}'
        ) from None
    return {"kind": kind, "apiVersion": api_version, **obj}


class _Decoder:
    def __init__(self, schema: Schema, budget: int) -> None:
        self.schema = schema
        self.budget = budget

    def _spend(self, count: int = 1) -> None:
        self.budget -= count
        if self.budget < 0:
            raise ProtobufError("the decoded object is too large")

    def message(self, message: Message, content: bytes, depth: int) -> JSON:
        if depth > MAX_DEPTH:
            raise ProtobufError(f"exceeded max depth of {MAX_DEPTH} nested objects")
        seen: dict[int, list[tuple[int, reader.Value]]] = {}
        for number, wire, value in reader.iter_fields(content, message.name.rpartition(".")[2]):
            if number in message.by_number:
                seen.setdefault(number, []).append((wire, value))
        out: JSON = {}
        for field in message.fields:
            items = seen.get(field.number)
            if field.inline:
                out.update(self.message(self._message(field), _joined(field, items), depth + 1))
            elif items is None:
                self._absent(field, out, depth)
            elif field.map_key is not None:
                out[field.json_name] = self._map(field, items, depth)
            elif field.repeated:
                out[field.json_name] = self._repeated(field, items, depth)
            else:
                self._singular(field, items, out, depth)
        self._spend(len(out) + 1)
        return out

    def _message(self, field: Field) -> Message:
        return self.schema.messages[field.type]

    def _absent(self, field: Field, out: JSON, depth: int) -> None:
        """encoding/json of the Go zero value of a field the body does not carry."""
        if (
            field.map_key is not None
            or field.repeated
            or field.pointer
            or field.type in ("bytes", "fieldsv1")
        ):
            if not field.omitempty:
                out[field.json_name] = None
            return
        if field.is_message:
            out[field.json_name] = self.message(self._message(field), b"", depth + 1)
        elif field.type in ("time", "microtime", "rawext"):
            out[field.json_name] = None
        elif field.type == "quantity":
            out[field.json_name] = "0"
        elif field.type == "intstr":
            out[field.json_name] = 0
        elif not field.omitempty:
            out[field.json_name] = _ZERO[field.type]

    def _singular(self, field: Field, items: list[tuple[int, reader.Value]], out: JSON, depth: int) -> None:
        if field.is_message or field.type in _SPECIAL:
            value = self._value(field, _joined(field, items), depth)
        else:
            wire, raw = items[-1]
            value = self._value(field, _checked(field, wire, raw), depth)
        if not field.pointer and field.omitempty and field.type in _ZERO and value == _ZERO[field.type]:
            return  # gogo wrote the zero value; encoding/json omits it
        out[field.json_name] = value

    def _repeated(self, field: Field, items: list[tuple[int, reader.Value]], depth: int) -> list[Any]:
        values: list[Any] = []
        for wire, raw in items:
            if field.type in _WIRE and wire == BYTES:
                assert isinstance(raw, bytes)
                values.extend(
                    self._value(field, v, depth) for v in reader.packed_values(raw, _WIRE[field.type])
                )
            else:
                values.append(self._value(field, _checked(field, wire, raw), depth))
        self._spend(len(values))
        return values

    def _map(self, field: Field, items: list[tuple[int, reader.Value]], depth: int) -> JSON:
        assert field.map_key is not None
        key_field = Field(1, "key", field.map_key, False, False, False, None, False)
        value_field = Field(2, "value", field.type, False, False, False, None, False)
        out: JSON = {}
        for wire, raw in items:
            entry = _checked(field, wire, raw)
            assert isinstance(entry, bytes)
            key: Any = _ZERO.get(field.map_key, "")
            value_items: list[tuple[int, reader.Value]] = []
            for number, entry_wire, value in reader.iter_fields(entry, "MapEntry"):
                if number == 1:
                    key = self._value(key_field, _checked(key_field, entry_wire, value), depth)
                elif number == 2:
                    value_items.append((entry_wire, value))
            if not value_items:
                holder: JSON = {}
                self._absent(value_field, holder, depth)
                out[str(key)] = holder.get("value", _ZERO.get(field.type))
            elif field.is_message or field.type in _SPECIAL:
                out[str(key)] = self._value(value_field, _joined(value_field, value_items), depth)
            else:
                wire_v, raw_v = value_items[-1]
                out[str(key)] = self._value(value_field, _checked(value_field, wire_v, raw_v), depth)
        self._spend(len(out))
        return out

    def _value(self, field: Field, raw: reader.Value, depth: int) -> Any:
        kind = field.type
        if isinstance(raw, int):
            return _scalar(kind, raw)
        if kind == "string":
            return _text(raw)
        if kind == "bytes":
            return base64.b64encode(raw).decode("ascii")
        if kind in _SPECIAL:
            return _SPECIAL[kind](self, raw, depth)
        if kind not in self.schema.messages:
            raise ProtobufError(f"unsupported protobuf type {kind}")  # e.g. a Duration, in no served kind
        return self.message(self._message(field), raw, depth + 1)

    # special types -----------------------------------------------------------------------

    def _time(self, raw: bytes, depth: int, micro: bool = False) -> str | None:
        seconds, nanos = 0, 0
        for number, wire, value in reader.iter_fields(raw, "Timestamp"):
            if number in (1, 2):
                if not isinstance(value, int) or wire != VARINT:
                    raise ProtobufError(f"proto: wrong wireType = {wire} for field {_TIMESTAMP[number]}")
                if number == 1:
                    seconds = reader.as_int64(value)
                else:
                    nanos = reader.as_int32(value)
        return format_time(seconds, nanos, micro)

    def _microtime(self, raw: bytes, depth: int) -> str | None:
        return self._time(raw, depth, micro=True)

    def _quantity(self, raw: bytes, depth: int) -> str:
        text = ""
        for number, wire, value in reader.iter_fields(raw, "Quantity"):
            if number == 1:
                if not isinstance(value, bytes):
                    raise ProtobufError(f"proto: wrong wireType = {wire} for field String_")
                text = _text(value)
        try:
            return format_quantity(text)
        except QuantityError as exc:
            raise ProtobufError(str(exc)) from None

    def _intstr(self, raw: bytes, depth: int) -> int | str:
        kind, int_val, str_val = 0, 0, ""
        for number, wire, value in reader.iter_fields(raw, "IntOrString"):
            if number in (1, 2) and isinstance(value, int) and wire == VARINT:
                if number == 1:
                    kind = reader.as_int64(value)
                else:
                    int_val = reader.as_int32(value)
            elif number == 3 and isinstance(value, bytes):
                str_val = _text(value)
            elif number in (1, 2, 3):
                raise ProtobufError(f"proto: wrong wireType = {wire} for field {_INTSTR[number]}")
        if kind == 0:
            return int_val
        if kind == 1:
            return str_val
        raise ProtobufError("impossible IntOrString.Type")

    def _raw_json(self, raw: bytes, depth: int) -> Any:
        content = b""
        for number, wire, value in reader.iter_fields(raw, "RawExtension"):
            if number == 1:
                if not isinstance(value, bytes):
                    raise ProtobufError(f"proto: wrong wireType = {wire} for field Raw")
                content = value
        if not content:
            return None
        try:
            return json.loads(content)
        except (ValueError, RecursionError) as exc:
            raise ProtobufError(f"invalid raw JSON: {exc}") from None


_TIMESTAMP = {1: "Seconds", 2: "Nanos"}
_INTSTR = {1: "Type", 2: "IntVal", 3: "StrVal"}
_SPECIAL = {
    "time": _Decoder._time,
    "microtime": _Decoder._microtime,
    "quantity": _Decoder._quantity,
    "intstr": _Decoder._intstr,
    "fieldsv1": _Decoder._raw_json,
    "rawext": _Decoder._raw_json,
}
_ZERO: dict[str, Any] = {
    "string": "",
    "bool": False,
    "int32": 0,
    "int64": 0,
    "uint32": 0,
    "uint64": 0,
    "double": 0.0,
}


def _text(raw: bytes) -> str:
    """Go strings hold any bytes; encoding/json prints invalid UTF-8 as U+FFFD."""
    return raw.decode("utf-8", errors="replace")


def _checked(field: Field, wire: int, raw: reader.Value) -> reader.Value:
    expected = _WIRE.get(field.type, BYTES)
    if wire != expected:
        raise ProtobufError(f"proto: wrong wireType = {wire} for field {field.json_name}")
    return raw


def _joined(field: Field, items: list[tuple[int, reader.Value]] | None) -> bytes:
    """Occurrences of a message field merge: their encodings concatenate."""
    parts = []
    for wire, raw in items or []:
        if not isinstance(raw, bytes):
            raise ProtobufError(f"proto: wrong wireType = {wire} for field {field.json_name or field.type}")
        parts.append(raw)
    return b"".join(parts)


def _scalar(kind: str, raw: int) -> Any:
    if kind == "bool":
        return raw != 0
    if kind == "int32":
        return reader.as_int32(raw)
    if kind == "int64":
        return reader.as_int64(raw)
    if kind == "uint32":
        return reader.as_uint32(raw)
    if kind == "uint64":
        return raw
    if kind == "double":
        value = struct.unpack("<d", struct.pack("<Q", raw))[0]
        if math.isnan(value) or math.isinf(value):
            raise ProtobufError(f"json: unsupported value: {value}")
        return value
    raise ProtobufError(f"proto: a varint cannot carry a {kind}")


def format_time(seconds: int, nanos: int, micro: bool = False) -> str | None:
    """metav1.Time / MicroTime MarshalJSON: RFC 3339 in UTC (to the second, or microsecond)."""
    seconds += nanos // 1_000_000_000  # time.Unix normalises nanos into [0, 1e9)
    nanos %= 1_000_000_000
    if seconds == ZERO_TIME_SECONDS and nanos == 0:
        return None
    try:
        moment = _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        raise ProtobufError(f"Time.MarshalJSON: year outside of range [0,9999]: {seconds}s") from None
    if not 1 <= moment.year <= 9999:
        raise ProtobufError(f"Time.MarshalJSON: year outside of range [0,9999]: {seconds}s")
    text = f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}"
    return f"{text}.{nanos // 1000:06d}Z" if micro else f"{text}Z"
