"""Indented JSON text, byte for byte what `json.dumps(doc, indent=N, ensure_ascii=False)` writes,
in about a third of its time (a timeline's `final` holds every pod: 150,000 at 5,000 nodes).

CPython's C encoder only writes compact text; with an indent, json falls back to a generator per
container and per value. This writer appends to one list instead, and writes a container whose
values are all strings, numbers, booleans or nulls (most of a pod) with one join. Anything it does
not know (a non-string key, a subclass, a value json would reject) hands the whole document to
json, so the text and the errors are always json's own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from math import isfinite
from typing import Any

_SCALARS = (str, int, float, bool, type(None))


class _LeftToJsonError(Exception):
    """A value this writer leaves to json."""


def _refuse(value: Any) -> Any:
    raise _LeftToJsonError


#: line break and indent -> CPython's C encoder writing a flat container's items separated by
#: a comma and that line break (NaN and infinities refused: json's own spelling then)
_FLAT: dict[str, Callable[[Any, int], Any]] = {}


def _flat_encoder(inner: str) -> Callable[[Any, int], Any]:
    encoder = _FLAT.get(inner)
    if encoder is None:
        if c_make_encoder is None:  # (a Python without the C accelerator)
            raise _LeftToJsonError
        encoder = c_make_encoder(
            None, _refuse, encode_basestring, None, ": ", "," + inner, False, False, False
        )
        _FLAT[inner] = encoder
    return encoder


def dumps_indented(doc: Any, indent: int = 2) -> str:
    """`json.dumps(doc, indent=indent, ensure_ascii=False)` (default separators for an indent)."""
    parts: list[str] = []
    try:
        _write(doc, parts.append, "\n", " " * indent)
    except (_LeftToJsonError, RecursionError, ValueError):
        return json.dumps(doc, indent=indent, ensure_ascii=False)
    return "".join(parts)


def _scalar(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if not isfinite(value):
            raise _LeftToJsonError  # NaN and infinities: json's own spelling
        return float.__repr__(value)
    if value is None:
        return "null"
    raise _LeftToJsonError


def _write(value: Any, out: Callable[[str], None], newline: str, step: str) -> None:
    """Append `value`'s text to `out`; `newline` is a line break plus the current indent."""
    kind = type(value)
    if kind is dict:
        _write_dict(value, out, newline, step)
    elif kind is list:
        _write_list(value, out, newline, step)
    else:
        out(_scalar(value))


def _write_dict(value: dict[Any, Any], out: Callable[[str], None], newline: str, step: str) -> None:
    if not value:
        out("{}")
        return
    inner = newline + step
    for key in value:
        if type(key) is not str:
            raise _LeftToJsonError
    if all(type(v) in _SCALARS for v in value.values()):
        text = "".join(_flat_encoder(inner)(value, 0))
        out("{" + inner + text[1:-1] + newline + "}")
        return
    out("{")
    first = True
    for key, item in value.items():
        out((inner if first else "," + inner) + encode_basestring(key) + ": ")
        first = False
        _write(item, out, inner, step)
    out(newline + "}")


def _write_list(value: list[Any], out: Callable[[str], None], newline: str, step: str) -> None:
    if not value:
        out("[]")
        return
    inner = newline + step
    if all(type(v) in _SCALARS for v in value):
        text = "".join(_flat_encoder(inner)(value, 0))
        out("[" + inner + text[1:-1] + newline + "]")
        return
    out("[")
    first = True
    for item in value:
        out(inner if first else "," + inner)
        first = False
        _write(item, out, inner, step)
    out(newline + "]")
