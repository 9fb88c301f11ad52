"""Decoding a scenario's objects as kube-apiserver decodes a request body (`check_decodable`),
with the verdict shared by objects that only differ in string contents (`DecodeMemo`).

The models of `kubetaint.api.models` check JSON types only: no field constrains a string's
contents (no enum, pattern or length; `Time` is a plain string), only integers are range-checked,
and there is no validator that compares fields. So whether an object decodes depends on its
apiVersion and kind (which pick the model), its keys (which pick the fields), and the type of
every value, each integer's value, never on which ASCII string a string field holds. The memo
keys an object by that shape and remembers the shapes that decoded; an object whose shape is not
known (or that fails) is decoded afresh, so every refusal carries the decoder's own message.
Strings with non-ASCII characters are kept verbatim in the key (a lone surrogate is not valid
UTF-8, which the decoder may refuse), and anything but plain JSON types is not memoised at all.

Pods stamped from one template share the template's lists (the scenario's copy keeps a shared
part shared): within one load, a list's shape is worked out once, by identity, the list held by
the memo so that no other object can take its id.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from kubetaint.api.models import DecodeError, decode, model_for
from kubetaint.api.openapi_schemas import cannot_handle, schema_of, strict_decoding_error, strict_errors
from kubetaint.sim.scenario import ScenarioError
from kubetaint.sim.source import Where
from kubetaint.speed.memo import Memo

#: Stands for every ASCII string value in a shape. The markers are small ints, which hash and
#: compare fastest (a shape is hashed once per object); keys are the only strings, atoms
#: (_atom) and non-ASCII strings are tuples, and a list's token is a negative int.
_ANY_STRING: Hashable = 0
#: Open and close a dict in a flat shape (equal to no other token).
_DICT: Hashable = 1
_END: Hashable = 2
#: Shapes kept before the memo starts afresh.
LIMIT = 1 << 12


class _UnshapedError(Exception):
    """A value that is not plain JSON (the object is then decoded afresh)."""


def describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or ""
    namespace = meta.get("namespace")
    return f"{obj.get('kind')} {namespace}/{name}" if namespace else f"{obj.get('kind')} {name}"


def check_decodable(obj: Mapping[str, Any], where: str | Where) -> None:
    """kube-apiserver decodes a request body into its Go type before admission and validation: a
    field of the wrong JSON type (a string status, a number for tolerations) is refused with the
    decoder's message, as `kubectl create` would show it, and so is a field the kind does not
    have (`fieldValidation=Strict`, as `kubectl create` asks)."""
    problem = decoding_problem(obj)
    if problem is not None:
        raise ScenarioError(f"{where}{describe(obj)}: {problem}")


def decoding_problem(obj: Mapping[str, Any]) -> str | None:
    """What kube-apiserver's strict decoder says of `obj` (a wrong JSON type, else the unknown
    fields: `Pod in version "v1" cannot be handled as a Pod: strict decoding error: ...`), or None."""
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    if model_for(api_version, kind) is None:
        return None
    try:
        decode(obj)
    except DecodeError as exc:
        return str(exc)
    except RecursionError:
        return "nested too deeply"
    schema = schema_of(api_version, kind)
    errors = strict_errors(obj, schema) if schema is not None else []
    if errors:
        return cannot_handle(kind, api_version.rpartition("/")[2], strict_decoding_error(errors))
    return None


class DecodeMemo:
    """`check_decodable` for the objects of one load, which must not change meanwhile.

    A shape is one flat tuple of tokens (a single hash per object, no nested tuples to hash
    again): a dict is `_DICT`, then each key (a string) and its value's tokens, then `_END`; a
    list is one token `-1 - n`, n numbering the distinct flat shapes of its items (worked out
    once per list, by identity); any other value one token led by its type. Keys are the only
    string tokens, the markers the only non-negative ints (see `_ANY_STRING`), so a flat shape
    reads back one way only."""

    def __init__(self, limit: int = LIMIT) -> None:
        #: the shapes that decoded
        self._decoded: Memo[Hashable, bool] = Memo("sim.decoding.shapes", limit)
        #: id(list) -> (the list, its token)
        self._lists: Memo[int, tuple[list[Any], Hashable]] = Memo("sim.decoding.lists", limit)
        #: the flat shape of a list's items -> its number (numbers are never given twice, so a
        #: shape numbered afresh only makes a miss)
        self._numbers: Memo[tuple[Hashable, ...], int] = Memo("sim.decoding.list_numbers", limit)
        self._next_number = 0

    def check(self, obj: Mapping[str, Any], where: str | Where) -> None:
        key: tuple[Hashable, ...] | None = None
        if type(obj) is dict:
            # apiVersion and kind pick the model: they lead the key as they are
            parts: list[Hashable] = [str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")]
            try:
                self._walk_dict(obj, parts.append)
                key = tuple(parts)
            except (_UnshapedError, RecursionError):  # RecursionError: a manifest that contains itself
                key = None
        if key is not None and self._decoded.get(key):
            return
        check_decodable(obj, where)
        if key is not None:
            self._decoded.put(key, True)

    def shape(self, value: Any) -> Hashable:
        """What decoding `value` depends on; raises _UnshapedError for anything but plain JSON.
        A list's shape is its token (held with the list), any other value's its flat tokens."""
        if type(value) is list:
            return self._list_token(value)
        parts: list[Hashable] = []
        self._walk(value, parts.append)
        return tuple(parts)

    def _walk(self, value: Any, append: Callable[[Hashable], None]) -> None:
        kind = type(value)
        if kind is dict:
            self._walk_dict(value, append)
        elif kind is str:
            append(_ANY_STRING if value.isascii() else (str, value))
        elif kind is list:
            append(self._list_token(value))
        else:
            append(_atom(value))

    def _walk_dict(self, value: dict[Any, Any], append: Callable[[Hashable], None]) -> None:
        append(_DICT)
        for key, item in value.items():
            if type(key) is not str:
                raise _UnshapedError
            append(key)
            kind = type(item)
            # strings inline: they are most of a manifest's values
            if kind is str:
                append(_ANY_STRING if item.isascii() else (str, item))
            elif kind is dict:
                self._walk_dict(item, append)
            elif kind is list:
                append(self._list_token(item))
            else:
                append(_atom(item))
        append(_END)

    def _list_token(self, value: list[Any]) -> Hashable:
        held = self._lists.get(id(value))
        if held is None:
            parts: list[Hashable] = []
            for item in value:
                self._walk(item, parts.append)
            flat = tuple(parts)
            number = self._numbers.get(flat)
            if number is None:
                number = self._numbers.put(flat, self._next_number)
                self._next_number += 1
            held = self._lists.put(id(value), (value, -1 - number))  # (list, number), as an int
        return held[1]


def _atom(value: Any) -> Hashable:
    """The token of a number, boolean or null (led by its type); _UnshapedError for the rest."""
    kind = type(value)
    if kind is int or kind is bool or value is None:
        return kind, value
    if kind is float:
        return kind, repr(value)
    raise _UnshapedError
