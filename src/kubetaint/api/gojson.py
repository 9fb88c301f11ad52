"""How Go's encoding/json names a JSON value in its errors (`json: cannot unmarshal <kind> into
...`, UnmarshalTypeError.Value)."""

from __future__ import annotations

from typing import Any


def json_kind(value: Any) -> str:
    """`bool`, `number`, `string`, `array`, `object` or `null`."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"
