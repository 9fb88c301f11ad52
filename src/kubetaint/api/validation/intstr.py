"""IntOrString fields of the apps and policy kinds (mirrors pkg/apis/apps/validation:
ValidatePositiveIntOrPercent, IsNotMoreThan100Percent, getIntOrPercentValue)."""

from __future__ import annotations

import re
from typing import Any

from kubetaint.api.goquote import go_quote
from kubetaint.api.validation import field as f
from kubetaint.api.validation.objectmeta import IS_NEGATIVE_ERROR

#: validation.IsValidPercent's message
INVALID_PERCENT = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or "
    "'93%', regex used for validation is '[0-9]+%')"
)
_PERCENT = re.compile(r"^[0-9]+%$")
_ATOI = re.compile(r"^[+-]?[0-9]+$")


def go_int_or_string(value: int | str) -> f.GoValue:
    """The bad value as Go prints an intstr.IntOrString (`%#v`)."""
    if isinstance(value, int):
        return f.GoValue(value, f'intstr.IntOrString{{Type:0, IntVal:{value}, StrVal:""}}')
    return f.GoValue(value, f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_quote(value)}}}")


def int_or_percent(value: Any, path: str) -> list[f.FieldError]:
    """ValidatePositiveIntOrPercent, then IsNotMoreThan100Percent."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return [f.invalid(path, value, "must be an integer or percentage (e.g '5%')")]
    shown = go_int_or_string(value)
    if isinstance(value, int):
        return [f.invalid(path, shown, IS_NEGATIVE_ERROR)] if value < 0 else []
    if not _PERCENT.match(value):
        return [f.invalid(path, shown, INVALID_PERCENT)]
    if int(value[:-1]) > 100:
        return [f.invalid(path, shown, "must not be greater than 100%")]
    return []


def int_or_percent_value(value: int | str) -> int:
    """getIntOrPercentValue: a valid percentage's number, else IntValue() (a string's strconv.Atoi,
    0 when it is not a number)."""
    if isinstance(value, int):
        return value
    if _PERCENT.match(value):
        return int(value[:-1])
    return int(value) if _ATOI.match(value) else 0
