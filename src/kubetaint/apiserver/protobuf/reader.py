"""The protobuf wire format, read: varints, fixed32/64 and length-delimited fields, with the
errors of gogo-protobuf's generated Unmarshal code (k8s.io/api's generated.pb.go:
`unexpected EOF`, `proto: integer overflow`, `proto: negative length found during
unmarshaling`, illegal tags and wire types). Unknown fields are skipped as skipGenerated does,
groups included.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

VARINT, FIXED64, BYTES, START_GROUP, END_GROUP, FIXED32 = 0, 1, 2, 3, 4, 5
_MAX_VARINT_BYTES = 10
_MAX_FIELD = (1 << 29) - 1


class ProtobufError(ValueError):
    """A body that is not valid protobuf for the schema; the message is gogo-protobuf's."""


def unexpected_eof() -> ProtobufError:
    return ProtobufError("unexpected EOF")


def read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """The unsigned varint at `pos` and the position after it."""
    value = 0
    shift = 0
    for i in range(_MAX_VARINT_BYTES):
        if pos + i >= end:
            raise unexpected_eof()
        byte = buf[pos + i]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & 0xFFFF_FFFF_FFFF_FFFF, pos + i + 1
        shift += 7
    raise ProtobufError("proto: integer overflow")


def as_int64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def as_int32(value: int) -> int:
    """Go's int32(uint64) conversion: the low 32 bits, two's complement."""
    value &= 0xFFFF_FFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def as_uint32(value: int) -> int:
    return value & 0xFFFF_FFFF


Value = int | bytes


def iter_fields(
    buf: bytes, message: str, start: int = 0, end: int | None = None
) -> Iterator[tuple[int, int, Value]]:
    """(field number, wire type, value) of each field in buf[start:end]: ints for varints and
    fixed32/64 (raw bits), bytes for length-delimited fields. Groups are skipped."""
    stop = len(buf) if end is None else end
    pos = start
    while pos < stop:
        key, pos = read_varint(buf, pos, stop)
        number, wire = key >> 3, key & 7
        if wire == END_GROUP:
            raise ProtobufError(f"proto: {message}: wiretype end group for non-group")
        if number <= 0 or number > _MAX_FIELD:
            raise ProtobufError(f"proto: {message}: illegal tag {number} (wire type {wire})")
        if wire == START_GROUP:
            pos = _skip_group(buf, pos, stop, number)
            continue
        value, pos = read_value(buf, pos, stop, wire)
        yield number, wire, value


def read_value(buf: bytes, pos: int, end: int, wire: int) -> tuple[Value, int]:
    if wire == VARINT:
        return read_varint(buf, pos, end)
    if wire == FIXED64:
        if pos + 8 > end:
            raise unexpected_eof()
        return int(struct.unpack_from("<Q", buf, pos)[0]), pos + 8
    if wire == FIXED32:
        if pos + 4 > end:
            raise unexpected_eof()
        return int(struct.unpack_from("<I", buf, pos)[0]), pos + 4
    if wire == BYTES:
        length, pos = read_varint(buf, pos, end)
        if length >= 1 << 63:
            raise ProtobufError("proto: negative length found during unmarshaling")
        if pos + length > end:
            raise unexpected_eof()
        return buf[pos : pos + length], pos + length
    raise ProtobufError(f"proto: illegal wireType {wire}")


def _skip_group(buf: bytes, pos: int, end: int, number: int) -> int:
    depth = 1
    while depth:
        key, pos = read_varint(buf, pos, end)
        wire = key & 7
        if wire == START_GROUP:
            depth += 1
        elif wire == END_GROUP:
            depth -= 1
        else:
            _, pos = read_value(buf, pos, end, wire)
    return pos


def packed_values(data: bytes, wire: int) -> list[int]:
    """The elements of a packed repeated scalar field (varints or fixed-size words)."""
    out: list[int] = []
    pos = 0
    while pos < len(data):
        value, pos = read_value(data, pos, len(data), wire)
        assert isinstance(value, int)
        out.append(value)
    return out
