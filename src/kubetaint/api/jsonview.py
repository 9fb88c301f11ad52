"""Reading decoded JSON whatever it holds: a value that is not the mapping or list expected reads
as an empty one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def as_mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a mapping, else `{}`."""
    return value if type(value) is dict or isinstance(value, Mapping) else {}  # (the ABC check is slow)


def mapping_in(obj: Mapping[str, Any] | None, name: str) -> Mapping[str, Any]:
    """`obj[name]` when it is a mapping, else `{}` (also when `obj` is None)."""
    value = obj.get(name) if obj else None
    return value if type(value) is dict or isinstance(value, Mapping) else {}  # (the ABC check is slow)


def mappings_in(value: Any) -> list[Mapping[str, Any]]:
    """The mappings among the items of `value` when it is a list, else `[]`."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def as_list(value: Any) -> list[Any]:
    """`value` when it is a list, else `[]`."""
    return value if isinstance(value, list) else []


def meta_of(obj: Mapping[str, Any] | None) -> dict[str, Any]:
    """`obj`'s metadata when it is a dict, else `{}`."""
    meta = (obj or {}).get("metadata")
    return meta if isinstance(meta, dict) else {}
