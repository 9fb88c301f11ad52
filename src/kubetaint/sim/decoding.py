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

from collections.abc import Hashable, Mapping
from typing import Any

from kubetaint.api.models import DecodeError, decode, model_for
from kubetaint.sim.scenario import ScenarioError

#: Stands for every ASCII string value in a shape.
_ANY_STRING: Hashable = (str,)
#: Shapes kept before the memo starts afresh.
LIMIT = 1 << 12


class _UnshapedError(Exception):
    """A value that is not plain JSON (the object is then decoded afresh)."""


def describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or ""
    namespace = meta.get("namespace")
    return f"{obj.get('kind')} {namespace}/{name}" if namespace else f"{obj.get('kind')} {name}"


def check_decodable(obj: Mapping[str, Any], where: str) -> None:
    """kube-apiserver decodes a request body into its Go type before admission and validation: a
    field of the wrong JSON type (a string status, a number for tolerations) is refused with the
    decoder's message, as `kubectl create` would show it."""
    if model_for(str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")) is None:
        return
    try:
        decode(obj)
    except DecodeError as exc:
        raise ScenarioError(f"{where}{describe(obj)}: {exc}") from None


class DecodeMemo:
    """`check_decodable` for the objects of one load, which must not change meanwhile."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._limit = limit
        self._decoded: set[Hashable] = set()
        #: id(list) -> (the list, its shape)
        self._lists: dict[int, tuple[list[Any], Hashable]] = {}

    def check(self, obj: Mapping[str, Any], where: str) -> None:
        try:
            # apiVersion and kind pick the model: they are part of the key as they are
            api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
            key = (api_version, kind, self.shape(obj)) if type(obj) is dict else None
        except (_UnshapedError, RecursionError):  # RecursionError: a manifest that contains itself
            key = None
        if key is not None and key in self._decoded:
            return
        check_decodable(obj, where)
        if key is not None:
            if len(self._decoded) >= self._limit:
                self._decoded.clear()
            self._decoded.add(key)

    def shape(self, value: Any) -> Hashable:
        """What decoding `value` depends on; raises _UnshapedError for anything but plain JSON.
        Every shape is a tuple led by the type of its value (no two types' shapes are equal)."""
        kind = type(value)
        if kind is str:
            return _ANY_STRING if value.isascii() else (str, value)
        if kind is dict:
            return self._dict_shape(value)
        if kind is list:
            held = self._lists.get(id(value))
            if held is None:
                if len(self._lists) >= self._limit:
                    self._lists.clear()
                held = self._lists[id(value)] = (value, (list, *[self.shape(item) for item in value]))
            return held[1]
        if kind is int or kind is bool or value is None:
            return kind, value
        if kind is float:
            return kind, repr(value)
        raise _UnshapedError

    def _dict_shape(self, value: dict[Any, Any]) -> Hashable:
        """`shape` of a dict: strings, dicts and known lists inline (most of a manifest)."""
        parts: list[Hashable] = [dict]
        append = parts.append
        lists = self._lists
        for key, item in value.items():
            if type(key) is not str:
                raise _UnshapedError
            append(key)
            kind = type(item)
            if kind is str:
                append(_ANY_STRING if item.isascii() else (str, item))
            elif kind is dict:
                append(self._dict_shape(item))
            elif kind is list and id(item) in lists:
                append(lists[id(item)][1])
            else:
                append(self.shape(item))
        return tuple(parts)
