"""Content checks shared by validation and matching
(mirrors staging/src/k8s.io/apimachinery/pkg/api/validate/content)."""

from __future__ import annotations

import re

_DECIMAL_INTEGER = re.compile(r"0|-?[1-9][0-9]*")
EMPTY_ERROR = "must be non-empty"
DECIMAL_INTEGER_ERROR = "must be a valid decimal integer in canonical form"
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def is_decimal_integer(value: str) -> list[str]:
    """Messages for `value` not being a canonical decimal integer; empty when it is one."""
    if value == "":
        return [EMPTY_ERROR]
    if _DECIMAL_INTEGER.fullmatch(value) is None:
        return [DECIMAL_INTEGER_ERROR]
    return []


def parse_int64(value: str) -> int:
    """Parse a canonical decimal int64 as Go's strconv.ParseInt(_, 10, 64) after IsDecimalInteger.

    Raises ValueError with the joined messages (or Go's range error) on failure.
    """
    msgs = is_decimal_integer(value)
    if msgs:
        raise ValueError("; ".join(msgs))
    number = int(value)
    if not _INT64_MIN <= number <= _INT64_MAX:
        raise ValueError(f'strconv.ParseInt: parsing "{value}": value out of range')
    return number
