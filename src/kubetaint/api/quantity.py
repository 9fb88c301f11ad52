"""Resource quantities ("500m", "1Gi", "1.5", "2e3") as upstream parses them
(mirrors staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go).

Values are exact `Fraction`s; `milli_value` and `value` round up like upstream's MilliValue/Value.
Canonical printing lives in `format_quantity`.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)
QUANTITY_FORMAT_ERROR = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity; the message is upstream's ErrFormatWrong text."""


_CACHE: dict[str | int | float, Fraction] = {}


def parse_quantity(raw: str | int | float) -> Fraction:
    """The exact value of a quantity; raises QuantityError with upstream's message when malformed."""
    cached = _CACHE.get(raw)
    if cached is not None:
        return cached
    value = _parse(raw)
    if len(_CACHE) < 65536:
        _CACHE[raw] = value
    return value


def _parse(raw: str | int | float) -> Fraction:
    if isinstance(raw, bool):
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    if isinstance(raw, int):
        return Fraction(raw)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise QuantityError(QUANTITY_FORMAT_ERROR)
        return Fraction(repr(raw)) if "e" not in repr(raw) else Fraction(raw)
    match = _QUANTITY.fullmatch(raw)
    if match is None:
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    number = Fraction(match["num"])
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        number *= _BINARY[suffix]
    elif suffix in _DECIMAL:
        number *= _DECIMAL[suffix]
    else:
        exponent = int(suffix[1:])
        number *= Fraction(10) ** exponent
    return -number if match["sign"] == "-" else number


def milli_value(raw: str | int | float) -> int:
    """Upstream Quantity.MilliValue: thousandths, rounded up (away from zero for positives)."""
    return math.ceil(parse_quantity(raw) * 1000)


def value(raw: str | int | float) -> int:
    """Upstream Quantity.Value: the integer value, rounded up."""
    return math.ceil(parse_quantity(raw))
