"""Reading decoded JSON whatever it holds: a value that is not the mapping or list expected reads
as an empty one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def as_mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a mapping, else `{}`."""
    return value if type(value) is dict or isinstance(value, Mapping) else {}  # (the ABC check is slow)


def as_list(value: Any) -> list[Any]:
    """`value` when it is a list, else `[]`."""
    return value if isinstance(value, list) else []


def meta_of(obj: Mapping[str, Any] | None) -> dict[str, Any]:
    """`obj`'s metadata when it is a dict, else `{}`."""
    meta = (obj or {}).get("metadata")
    return meta if isinstance(meta, dict) else {}
