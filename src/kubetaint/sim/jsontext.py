"""Writes indented JSON in a third of json's time (json itself writes it when `KUBETAINT_REFERENCE=1`).

The text is byte for byte what `json.dumps(doc, indent=N, ensure_ascii=False)` writes,
streamed: `write_indented` hands the text to a stream in chunks of about a megabyte, so a
timeline's `final` (every pod: 150,000 at 5,000 nodes) never exists as one string.
`dumps_indented` is the same writer collecting the chunks.

CPython's C encoder only writes compact text; with an indent, json falls back to a generator per
container and per value. This writer appends to one buffer instead, and writes a container whose
values are all strings, numbers, booleans or nulls (most of a pod) with one join. A value it does
not know (a non-string key, a subclass, NaN, a value json would reject) is written by json's own
pure-Python encoder at the same indent level, so the text and the errors are always json's own.

An item of a list that holds containers (a pod of the timeline's `final`) is written from its
compact text (`_Skeletons`): without a backslash in that text every `"` opens or closes a string,
so splitting it at `"` leaves the text between strings (brackets, separators, numbers, literals) at
the even places. That sequence, the item's *skeleton*, is the same for every pod stamped from one
template; its indented form is worked out once per skeleton and indent level, and put back
between the item's own strings. An item with a backslash, a value the C encoder refuses, or a
compact text over ITEM_LIMIT characters is written as above.

With `KUBETAINT_REFERENCE=1` (kubetaint.speed.reference) `write_indented` hands json's own
`JSONEncoder(indent=...).iterencode` chunks to the stream instead: the same text, no shortcut.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from json.encoder import (  # type: ignore[attr-defined]
    INFINITY,
    _make_iterencode,
    c_make_encoder,
    encode_basestring,
)
from math import isfinite, isnan
from typing import Any

from kubetaint.sim.halves import TextSink, write_in_halves
from kubetaint.speed.memo import Memo
from kubetaint.speed.reference import reference_mode

_SCALARS = (str, int, float, bool, type(None))

#: Text parts gathered before they are handed to the stream (about a megabyte of a timeline).
CHUNK_PARTS = 20_000
#: Characters of whole list items gathered before they are handed to the stream.
CHUNK_CHARS = 1 << 20
#: A list item whose compact text is longer than this is written container by container (its
#: text is not held whole twice).
ITEM_LIMIT = 1 << 20
#: Skeletons remembered before the memo starts afresh.
SKELETONS = 1 << 12


class _LeftToJsonError(Exception):
    """A value this writer leaves to json."""


def _refuse(value: Any) -> Any:
    raise _LeftToJsonError


_COMPACT: list[Callable[[Any, int], Any]] = []


def _compact_encoder() -> Callable[[Any, int], Any]:
    """CPython's C encoder writing compact text with json's separators for an indent (`,` and
    `: `); NaN, infinities and values it does not know are refused."""
    if not _COMPACT:
        if c_make_encoder is None:  # (a Python without the C accelerator)
            raise _LeftToJsonError
        _COMPACT.append(
            c_make_encoder(None, _refuse, encode_basestring, None, ": ", ",", False, False, False)
        )
    return _COMPACT[0]


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


def write_indented(doc: Any, stream: TextSink, indent: int = 2) -> None:
    """Write `json.dumps(doc, indent=indent, ensure_ascii=False)` to `stream` in chunks: the
    gathered text is handed over between the items of a list once CHUNK_PARTS parts (or
    CHUNK_CHARS characters of whole items) have gathered; a long list's later part may be
    written by a second process (kubetaint.sim.halves). A value json rejects raises json's error
    after the text before it was written."""
    if reference_mode():
        _write_by_json(doc, stream, indent)
        return
    writer = _Streaming(stream, _Skeletons())
    try:
        _write(doc, writer.parts.append, "\n", " " * indent, writer)
    except RecursionError:
        json.dumps(doc, indent=indent, ensure_ascii=False)  # json's own error (a circular reference)
        raise
    writer.flush()


def _write_by_json(doc: Any, stream: TextSink, indent: int) -> None:
    """json's own indented text (its pure-Python encoder), handed over in chunks of CHUNK_PARTS."""
    parts: list[str] = []
    for chunk in json.JSONEncoder(ensure_ascii=False, indent=indent).iterencode(doc):
        parts.append(chunk)
        if len(parts) >= CHUNK_PARTS:
            stream.write("".join(parts))
            parts.clear()
    stream.write("".join(parts))


def dumps_indented(doc: Any, indent: int = 2) -> str:
    """`json.dumps(doc, indent=indent, ensure_ascii=False)` (default separators for an indent)."""
    if reference_mode():
        return json.dumps(doc, indent=indent, ensure_ascii=False)
    writer = _Streaming(None, _Skeletons())
    try:
        _write(doc, writer.parts.append, "\n", " " * indent, writer)
    except RecursionError:
        return json.dumps(doc, indent=indent, ensure_ascii=False)
    return "".join(writer.parts)


def compact_split(value: Any) -> list[str] | None:
    """`value`'s compact JSON text (with json's separators for an indent, `,` and `: `) split at
    its `"`: the text between strings (the skeleton) at the even places, the strings' own text at
    the odd ones. None when the text holds a backslash (then a `"` may be inside a string), is over
    ITEM_LIMIT characters, or the C encoder refuses a value (NaN, a type it does not know)."""
    try:
        compact = "".join(_compact_encoder()(value, 0))
    except (_LeftToJsonError, ValueError, TypeError, RecursionError):
        return None
    if "\\" in compact or len(compact) > ITEM_LIMIT:
        return None
    return compact.split('"')


class _Skeletons:
    """List items written from their compact text and the indented form of its skeleton (see the
    module docstring), remembered per (skeleton, indent level)."""

    __slots__ = ("_memo", "size")

    def __init__(self) -> None:
        self._memo: Memo[tuple[str, str], list[str]] = Memo("sim.jsontext.skeletons", limit=SKELETONS)
        #: characters of item text handed out since the last spill
        self.size = 0

    def text(self, value: Any, inner: str, step: str) -> str | None:
        """`value` (a dict or list) indented, its first line at the indent of `inner` (a line
        break and that indent); None to leave it to the container-by-container writer."""
        parts = compact_split(value)
        if parts is None:
            return None  # (the writer then meets the value and says what json says of it)
        between = parts[0::2]
        key = ("\0".join(between), inner)
        indented = self._memo.get(key)
        if indented is None:
            indented = self._memo.put(key, _indent_skeleton(between, inner, step))
        parts[0::2] = indented
        text = '"'.join(parts)
        self.size += len(text)
        return text


def _indent_skeleton(between: list[str], inner: str, step: str) -> list[str]:
    """The text between the strings of a compact JSON value, indented as json indents: a line
    break after an opening bracket (unless it closes at once) and after each comma, and before a
    closing bracket; `inner` is the line break and indent of the value's own level."""
    out: list[str] = []
    level = 0
    for part in between:
        pieces: list[str] = []
        i, end = 0, len(part)
        while i < end:
            char = part[i]
            if char in "{[":
                if i + 1 < end and part[i + 1] in "}]":  # {} or []
                    pieces.append(part[i : i + 2])
                    i += 2
                    continue
                level += 1
                pieces.append(char + inner + step * level)
            elif char in "}]":
                level -= 1
                pieces.append(inner + step * level + char)
            elif char == ",":
                pieces.append("," + inner + step * level)
            else:
                pieces.append(char)
            i += 1
        out.append("".join(pieces))
    return out


class _Streaming:
    """The text gathered (`parts`), the stream it is handed to (None: nothing streams, the text
    is joined at the end), what a list's items call between them (`spill`, None when nothing
    streams) and the skeleton memo its container items are written with."""

    __slots__ = ("parts", "skeletons", "spill", "stream")

    def __init__(self, stream: TextSink | None, skeletons: _Skeletons) -> None:
        self.parts: list[str] = []
        self.stream = stream
        self.skeletons = skeletons
        self.spill: Callable[[], None] | None = None if stream is None else self._spill

    def _spill(self) -> None:
        if len(self.parts) >= CHUNK_PARTS or self.skeletons.size >= CHUNK_CHARS:
            self.flush()

    def flush(self) -> None:
        """Hand the gathered text to the stream."""
        if self.stream is not None:
            self.stream.write("".join(self.parts))
            self.parts.clear()
            self.skeletons.size = 0


def _floatstr(value: float) -> str:
    """json's spelling of a float (its `allow_nan` default)."""
    if isnan(value):
        return "NaN"
    if value == INFINITY:
        return "Infinity"
    if value == -INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _by_json(value: Any, out: Callable[[str], None], newline: str, step: str) -> None:
    """`value` as json's pure-Python encoder writes it at the indent level of `newline`."""
    encoder = json.JSONEncoder(ensure_ascii=False, indent=step)
    chunks: Iterator[str] = _make_iterencode(
        {}, encoder.default, encode_basestring, step, _floatstr, ": ", ",", False, False, False
    )(value, (len(newline) - 1) // len(step))
    for chunk in chunks:
        out(chunk)


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


_Spill = _Streaming


def _write(value: Any, out: Callable[[str], None], newline: str, step: str, spill: _Spill) -> None:
    """Append `value`'s text to `out`; `newline` is a line break plus the current indent; `spill`
    says what is called between the items of a list and writes container items."""
    kind = type(value)
    if kind is dict:
        _write_dict(value, out, newline, step, spill)
    elif kind is list:
        _write_list(value, out, newline, step, spill)
    else:
        try:
            text = _scalar(value)
        except _LeftToJsonError:
            _by_json(value, out, newline, step)
            return
        out(text)


def _flat_text(value: Any, inner: str) -> str | None:
    """A container of plain scalars encoded by the C encoder, or None to leave it to json."""
    try:
        return "".join(_flat_encoder(inner)(value, 0))
    except (_LeftToJsonError, ValueError):
        return None


def _write_dict(
    value: dict[Any, Any],
    out: Callable[[str], None],
    newline: str,
    step: str,
    spill: _Spill,
    *,
    as_item: bool = False,
) -> None:
    """A dict's text; `as_item`: the dict is an item of a list, written from its skeleton when it can."""
    if not value:
        out("{}")
        return
    inner = newline + step
    for key in value:
        if type(key) is not str:
            _by_json(value, out, newline, step)
            return
    if all(type(v) in _SCALARS for v in value.values()):
        text = _flat_text(value, inner)
        if text is None:
            _by_json(value, out, newline, step)
        else:
            out("{" + inner + text[1:-1] + newline + "}")
        return
    if as_item:
        text = spill.skeletons.text(value, newline, step)
        if text is not None:
            out(text)
            return
    out("{")
    first = True
    for key, item in value.items():
        out((inner if first else "," + inner) + encode_basestring(key) + ": ")
        first = False
        _write(item, out, inner, step, spill)
    out(newline + "}")


def _write_list(
    value: list[Any],
    out: Callable[[str], None],
    newline: str,
    step: str,
    spill: _Spill,
    *,
    as_item: bool = False,
) -> None:
    """A list's text; `as_item`: the list is an item of a list, written from its skeleton when it can."""
    if not value:
        out("[]")
        return
    inner = newline + step
    if all(type(v) in _SCALARS for v in value):
        text = _flat_text(value, inner)
        if text is None:
            _by_json(value, out, newline, step)
        else:
            out("[" + inner + text[1:-1] + newline + "]")
        return
    if as_item:
        text = spill.skeletons.text(value, newline, step)
        if text is not None:
            out(text)
            return
    out("[")
    stream = spill.stream
    if stream is None:
        _write_items(value, 0, len(value), out, inner=inner, step=step, spill=spill)
    else:

        def write_items(start: int, stop: int, sink: TextSink | None) -> None:
            if sink is None:
                _write_items(value, start, stop, out, inner=inner, step=step, spill=spill)
                return
            own = _Streaming(sink, spill.skeletons)
            _write_items(value, start, stop, own.parts.append, inner=inner, step=step, spill=own)
            own.flush()

        write_in_halves(len(value), write_items, stream, spill.flush)
    out(newline + "]")


def _write_items(
    value: list[Any],
    start: int,
    stop: int,
    out: Callable[[str], None],
    *,
    inner: str,
    step: str,
    spill: _Spill,
) -> None:
    """Items [start, stop) of a list of containers, each after its separator (`inner`, a line
    break and the items' indent, and a comma before every item but the list's first)."""
    between = spill.spill
    if start == 0 and stop > 0:
        out(inner)
        _write_item(value[0], out, inner, step, spill)
        if between is not None:
            between()
        start = 1
    separator = "," + inner
    for index in range(start, stop):
        out(separator)
        _write_item(value[index], out, inner, step, spill)
        if between is not None:
            between()


def _write_item(entry: Any, out: Callable[[str], None], inner: str, step: str, spill: _Spill) -> None:
    kind = type(entry)
    if kind is dict:
        _write_dict(entry, out, inner, step, spill, as_item=True)
    elif kind is list:
        _write_list(entry, out, inner, step, spill, as_item=True)
    else:
        _write(entry, out, inner, step, spill)
