"""Copies a scenario given as data faster than copy.deepcopy (used instead when `KUBETAINT_REFERENCE=1`).

`copy_document` gives the scenario its own copy of a document given as data: what copy.deepcopy
gives (equal values of the same types, a part shared in the input shared in the copy, nothing
shared with the input but immutable atoms).

A document of plain values (None, booleans and exact ints, floats, strings, bytes, dicts, lists
and tuples: what JSON parsers and most callers build) is copied by `marshal`, which (version 3
on) writes an object met twice once and a reference after, so its copy shares what the input
shares, as deepcopy's memo does, and rebuilds dicts in their order. marshal also takes, silently,
values deepcopy keeps apart (a bytearray or any other buffer becomes bytes; code objects and
complex numbers are rebuilt) and writes sets sorted (bpo-37596: a set's iteration order can
change). So a check runs first: a pickler in fast mode (no memo, nothing kept) whose
`reducer_override` refuses every object CPython's pickler does not handle itself. Below protocol
5 the pickler has no bytearray or PickleBuffer opcode: a bytearray is reduced to its type, which
reducer_override refuses, and a PickleBuffer fails. A set shows as its opcode's byte in the
pickle: a pickle holding that byte anywhere (perhaps inside another opcode's argument) sends the
document to the pickler's copy. The check pickles a shared part once per place it appears; its
output is capped at a multiple of marshal's (which writes a shared part once), so a document
sharing parts many times over (an alias bomb) stops it early.

A document the check refuses is copied by hand (`_copy_by_hand`); any other one marshal or the
check does not take (a type marshal refuses, a set, a loop, nesting deeper than marshal's limit,
the output cap) is copied by the memoizing pickler (`_pickled_copy`, the copy before marshal was
used), which also copies loops, or raises what it raises (RecursionError).
"""

from __future__ import annotations

import copy
import io
import marshal
import pickle
from typing import Any

from kubetaint.speed.reference import reference_mode

_ATOMS = frozenset({str, int, float, bool, type(None)})

#: The check's output may be this many times marshal's size (plus `_SLACK` bytes) before it is
#: taken for a document that shares parts many times over.
_GROWTH = 4
_SLACK = 1 << 20


class _NotPlainError(Exception):
    """A value of a type the plain pickler does not take (copied by hand instead)."""


class _TooLargeError(Exception):
    """The plain-value check wrote more than its cap."""


class _PlainPickler(pickle.Pickler):
    """A pickler of builtin values only: CPython's pickler asks reducer_override about every object
    except None, booleans and exact ints, floats, strings, bytes, dicts, sets, frozensets, lists
    and tuples (and, at protocol 5, bytearrays and PickleBuffers)."""

    def reducer_override(self, obj: Any) -> Any:
        raise _NotPlainError


class _CappedSink:
    """A file that keeps nothing written to it, but whether it saw a byte that may be a set's
    opcode, up to `cap` bytes."""

    def __init__(self, cap: int) -> None:
        self.left = cap
        self.maybe_sets = False

    def write(self, data: bytes) -> int:
        self.left -= len(data)
        if self.left < 0:
            raise _TooLargeError
        if not self.maybe_sets:
            self.maybe_sets = _EMPTY_SET in data or _FROZENSET in data
        return len(data)


#: The protocol 4 opcodes that start a set and end a frozenset: a document with a set has one or
#: the other in its pickle (where either byte may also be part of another opcode's argument).
_EMPTY_SET = pickle.EMPTY_SET
_FROZENSET = pickle.FROZENSET


def copy_document(document: dict[str, Any]) -> dict[str, Any]:
    """copy.deepcopy of a JSON-like document (see the module docstring); copy.deepcopy itself in
    reference mode."""
    if reference_mode():
        return copy.deepcopy(document)
    try:
        dumped = marshal.dumps(document, 4)
    except Exception:  # a type marshal refuses, nesting past its limit
        return _pickled_copy(document)
    sink = _CappedSink(_GROWTH * len(dumped) + _SLACK)
    try:
        _check_plain(document, sink)
    except _NotPlainError:
        return _copy_by_hand(document)
    except (_TooLargeError, ValueError, pickle.PicklingError, RecursionError):
        return _pickled_copy(document)  # (fast mode refuses a loop with ValueError)
    if sink.maybe_sets:
        return _pickled_copy(document)
    return marshal.loads(dumped)  # type: ignore[no-any-return]


def _check_plain(document: dict[str, Any], sink: _CappedSink) -> None:
    """Raises _NotPlainError when `document` holds a value that is not plain (see the module
    docstring), _TooLargeError once the check wrote more than the sink's cap; returns when
    every value is plain."""
    checker = _PlainPickler(sink, protocol=4)
    checker.fast = True
    checker.dump(document)


def _pickled_copy(document: dict[str, Any]) -> dict[str, Any]:
    """The copy by the memoizing pickler (loops kept), or by hand when a value is not plain."""
    buffer = io.BytesIO()
    try:
        _PlainPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(document)
    except _NotPlainError:
        return _copy_by_hand(document)
    return pickle.loads(buffer.getbuffer())  # type: ignore[no-any-return]


def _copy_by_hand(document: dict[str, Any]) -> dict[str, Any]:
    """copy_document in Python: plain dicts and lists are copied by hand (a part shared in the
    input stays shared in the copy, as deepcopy keeps it), strings, numbers, booleans and None
    are kept, anything else goes to copy.deepcopy."""
    memo: dict[int, Any] = {}
    atoms = _ATOMS

    def copied(value: Any) -> Any:
        kind = type(value)
        if kind in atoms:
            return value
        if kind is dict:
            found = memo.get(id(value))
            if found is None:
                found = memo[id(value)] = {}
                for key, item in value.items():
                    copied_key = key if type(key) in atoms else copy.deepcopy(key, memo)
                    found[copied_key] = item if type(item) in atoms else copied(item)  # atoms: no call
            return found
        if kind is list:
            found = memo.get(id(value))
            if found is None:
                found = memo[id(value)] = []
                found.extend([item if type(item) in atoms else copied(item) for item in value])
            return found
        return copy.deepcopy(value, memo)

    return copied(document)  # type: ignore[no-any-return]
