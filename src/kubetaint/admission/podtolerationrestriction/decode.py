"""Toleration lists decoded as Go's encoding/json decodes `[]v1.Toleration`.

Field names match case-insensitively, unknown fields are ignored, `null` gives zero values, and a
wrong JSON type gives Go's `json: cannot unmarshal ...` message. Syntax errors get Go's wording for
the common cases.
"""

from __future__ import annotations

import json
from typing import Any

from kubetaint.api.gojson import json_kind

JSONDict = dict[str, Any]

_STRING_FIELDS = ("key", "operator", "value", "effect")
_FIELD_BY_FOLDED = {name.lower(): name for name in (*_STRING_FIELDS, "tolerationSeconds")}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class DecodeError(ValueError):
    """The text is not a JSON list of tolerations; the message follows Go's encoding/json."""


def _field(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name == "tolerationSeconds":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise DecodeError(
                f"json: cannot unmarshal {json_kind(value)} into Go struct field "
                "Toleration.tolerationSeconds of type int64"
            )
        if isinstance(value, float) and not value.is_integer():
            raise DecodeError(
                f"json: cannot unmarshal number {value!r} into Go struct field "
                "Toleration.tolerationSeconds of type int64"
            )
        number = int(value)
        if not _INT64_MIN <= number <= _INT64_MAX:
            raise DecodeError(
                f"json: cannot unmarshal number {value} into Go struct field "
                "Toleration.tolerationSeconds of type int64"
            )
        return number
    if not isinstance(value, str):
        raise DecodeError(
            f"json: cannot unmarshal {json_kind(value)} into Go struct field Toleration.{name} of type string"
        )
    return value


def decode_toleration(item: Any) -> JSONDict:
    """One v1.Toleration from decoded JSON, keeping only non-zero fields (as Go's omitempty prints)."""
    if item is None:
        return {}
    if not isinstance(item, dict):
        raise DecodeError(f"json: cannot unmarshal {json_kind(item)} into Go value of type v1.Toleration")
    toleration: JSONDict = {}
    for raw_name, raw_value in item.items():
        name = _FIELD_BY_FOLDED.get(str(raw_name).lower())
        if name is None:
            continue
        value = _field(name, raw_value)
        if value is None or value == "":
            toleration.pop(name, None)
        else:
            toleration[name] = value
    return {name: toleration[name] for name in (*_STRING_FIELDS, "tolerationSeconds") if name in toleration}


def decode_tolerations(value: Any) -> list[JSONDict]:
    """A `[]v1.Toleration` from decoded JSON; `null` is an empty list."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise DecodeError(f"json: cannot unmarshal {json_kind(value)} into Go value of type []v1.Toleration")
    return [decode_toleration(item) for item in value]


def _innermost_container(text: str, pos: int) -> str:
    """The bracket (`{` or `[`) enclosing `pos`, skipping string contents."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text[:pos]:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append(char)
        elif char in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def _syntax_message(text: str, error: json.JSONDecodeError) -> str:
    if not text[error.pos :].strip():
        return "unexpected end of JSON input"
    char = text[error.pos]
    if error.msg.startswith("Expecting value"):
        return f"invalid character {char!r} looking for beginning of value"
    if error.msg.startswith("Extra data"):
        return f"invalid character {char!r} after top-level value"
    if error.msg.startswith("Expecting property name"):
        return f"invalid character {char!r} looking for beginning of object key string"
    if error.msg.startswith("Expecting ',' delimiter"):
        if _innermost_container(text, error.pos) == "{":
            return f"invalid character {char!r} after object key:value pair"
        return f"invalid character {char!r} after array element"
    if error.msg.startswith("Expecting ':' delimiter"):
        return f"invalid character {char!r} after object key"
    return f"invalid character {char!r} in JSON input"


def parse_tolerations_json(text: str) -> list[JSONDict]:
    """json.Unmarshal(text, &[]v1.Toleration); raises DecodeError with Go's message."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise DecodeError(_syntax_message(text, error)) from None
    return decode_tolerations(value)
