"""A JSON object parsed with the lines its `items` start on: the top level is walked here, every
value is read by the json module's own scanner, so finding the lines costs no second parse."""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Callable
from typing import Any

_SPACE = re.compile(r"[ \t\n\r]*")
#: what may follow an element of an array: a comma (group 1) and the next element's start, or `]`
_AFTER_ITEM = re.compile(r"[ \t\n\r]*(?:(,)[ \t\n\r]*|\])")
_STRING = json.decoder.scanstring  # type: ignore[attr-defined]
#: the json module's scanner (its C one when built): `scan(text, index) -> (value, end)`
_SCANNER: Callable[[json.JSONDecoder], Callable[[str, int], tuple[Any, int]]] = json.scanner.make_scanner  # type: ignore[assignment]


class _NotWalkedError(Exception):
    """The text is not a plain JSON object; the caller parses it the ordinary way."""


def loads_object(
    text: str, decoder: json.JSONDecoder, pairs_hook: Callable[[list[tuple[str, Any]]], Any]
) -> tuple[Any, tuple[int, ...]] | None:
    """`(data, lines)`: what `decoder.decode(text)` gives for a top-level object, and the 1-based
    line of each element of its `items` array (empty without one); None when the text is not
    well-formed (decoding it again gives the JSON error to report)."""
    try:
        return _walk(text, _SCANNER(decoder), pairs_hook)
    except (_NotWalkedError, StopIteration, json.JSONDecodeError):
        return None


def _walk(
    text: str, scan: Callable[[str, int], tuple[Any, int]], pairs_hook: Callable[[list[tuple[str, Any]]], Any]
) -> tuple[Any, tuple[int, ...]]:
    at = _skip(text, 0)
    if not text.startswith("{", at):
        raise _NotWalkedError
    at = _skip(text, at + 1)
    pairs: list[tuple[str, Any]] = []
    lines: tuple[int, ...] = ()
    if text.startswith("}", at):
        return pairs_hook(pairs), lines
    while True:
        if not text.startswith('"', at):
            raise _NotWalkedError
        key, at = _STRING(text, at + 1, True)
        at = _skip(text, at)
        if not text.startswith(":", at):
            raise _NotWalkedError
        at = _skip(text, at + 1)
        if key == "items" and text.startswith("[", at):
            value, at, lines = _items(text, at, scan)
        else:
            value, at = scan(text, at)
        pairs.append((key, value))
        at = _skip(text, at)
        if text.startswith("}", at):
            break
        if not text.startswith(",", at):
            raise _NotWalkedError
        at = _skip(text, at + 1)
    if _skip(text, at + 1) != len(text):
        raise _NotWalkedError
    return pairs_hook(pairs), lines


def _items(
    text: str, at: int, scan: Callable[[str, int], tuple[Any, int]]
) -> tuple[list[Any], int, tuple[int, ...]]:
    """The array at `at` (its `[`), the index after it and the line of each element."""
    values: list[Any] = []
    lines: list[int] = []
    line, counted = 1, 0
    at = _skip(text, at + 1)
    if text.startswith("]", at):
        return values, at + 1, ()
    count, append_value, append_line, after = text.count, values.append, lines.append, _AFTER_ITEM.match
    while True:
        line += count("\n", counted, at)
        counted = at
        append_line(line)
        value, at = scan(text, at)
        append_value(value)
        found = after(text, at)
        if found is None:
            raise _NotWalkedError
        at = found.end()
        if found.group(1) is None:
            return values, at, tuple(lines)


def _skip(text: str, at: int) -> int:
    found = _SPACE.match(text, at)
    return found.end() if found is not None else at
