"""Resource quantities ("500m", "1Gi", "1.5", "2e3") as upstream parses them
(mirrors staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go).

Values are exact `Fraction`s; `milli_value` and `value` round up like upstream's MilliValue/Value.
Canonical printing lives in `format_quantity`.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from kubetaint.speed.memo import Memo

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

#: ErrNumeric and ErrSuffix of quantity.go.
NUMERIC_ERROR = "unable to parse numeric part of quantity"
SUFFIX_ERROR = "unable to parse quantity's suffix"
#: Bounds on a quantity's text that keep its exact value computable: more digits than any int64
#: amount in nano units needs many times over, and decimal exponents past which every value
#: saturates int64 (MilliValue/Value) or rounds up to one nano. Past them, ErrNumeric/ErrSuffix.
MAX_DIGITS = 1_000
MAX_EXPONENT = 1_000

_NANO = 10**9
_INT64_MAX = 2**63 - 1


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity; the message is upstream's ErrFormatWrong text."""


_PARSED: Memo[str | int | float, Fraction] = Memo("api.quantity.parse_quantity", limit=1 << 16)


def parse_quantity(raw: str | int | float) -> Fraction:
    """The exact value of a quantity; raises QuantityError with upstream's message when malformed."""
    if raw is True or raw is False:  # equal (and hash-equal) to 1 and 0: never from the cache
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    cached = _PARSED.get(raw)
    if cached is not None:
        return cached
    return _PARSED.put(raw, _parse(raw))


def _parse(raw: str | int | float) -> Fraction:
    if isinstance(raw, bool):
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    if isinstance(raw, int):
        return Fraction(raw)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise QuantityError(QUANTITY_FORMAT_ERROR)
        return _parse(repr(raw))  # a JSON number is parsed from its text, as upstream does
    match = _QUANTITY.fullmatch(raw)
    if match is None:
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    suffix = match["suffix"] or ""
    if len(match["num"]) > MAX_DIGITS:
        raise QuantityError(NUMERIC_ERROR)
    exponential = suffix not in _BINARY and suffix not in _DECIMAL
    if exponential and abs(int(suffix[1:])) > MAX_EXPONENT:
        raise QuantityError(SUFFIX_ERROR)
    number = Fraction(match["num"])
    if suffix in _BINARY:
        number *= _BINARY[suffix]
        # ParseQuantity caps binary quantities at the largest int64.
        number = min(number, Fraction(_INT64_MAX))
    elif suffix in _DECIMAL:
        number *= _DECIMAL[suffix]
    else:
        exponent = int(suffix[1:])
        number *= Fraction(10) ** exponent
    if (number * _NANO).denominator != 1:
        # Non-zero amounts finer than a nano round up to the next nano, away from zero.
        number = Fraction(math.ceil(number * _NANO), _NANO)
    return -number if match["sign"] == "-" else number


#: milli_value and value of the quantity strings seen (pure functions of an immutable text: 150,000
#: pods of a few templates parse the same few strings again and again).
_MILLI_VALUES: Memo[str, int] = Memo("api.quantity.milli_value", limit=1 << 12)
_VALUES: Memo[str, int] = Memo("api.quantity.value", limit=1 << 12)


def milli_value(raw: str | int | float) -> int:
    """Upstream Quantity.MilliValue: thousandths, rounded up (away from zero for positives)."""
    if type(raw) is not str:
        return math.ceil(parse_quantity(raw) * 1000)
    found = _MILLI_VALUES.get(raw)
    if found is None:
        found = _MILLI_VALUES.put(raw, math.ceil(parse_quantity(raw) * 1000))
    return found


def value(raw: str | int | float) -> int:
    """Upstream Quantity.Value: the integer value, rounded up."""
    if type(raw) is not str:
        return math.ceil(parse_quantity(raw))
    found = _VALUES.get(raw)
    if found is None:
        found = _VALUES.put(raw, math.ceil(parse_quantity(raw)))
    return found


_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


def quantity_format(raw: str | int | float) -> str:
    """The Format upstream keeps for a parsed quantity: BinarySI, DecimalExponent or DecimalSI."""
    text = repr(raw) if isinstance(raw, float) else str(raw)
    match = _QUANTITY.fullmatch(text)
    suffix = (match["suffix"] or "") if match is not None else ""
    if suffix in _BINARY:
        return "BinarySI"
    if len(suffix) > 1 and suffix[0] in ("e", "E"):  # a lone "E" is exa, not an exponent
        return "DecimalExponent"
    return "DecimalSI"


def format_quantity(raw: str | int | float) -> str:
    """Upstream Quantity.String(): the canonical form (CanonicalizeBytes) in the parsed format.

    Values are first rounded up (away from zero) to nano precision, as ParseQuantity does. BinarySI
    stays binary only for whole values of magnitude >= 1024; everything else prints as a decimal
    mantissa with an SI suffix (or an `eN` exponent) whose exponent is a multiple of 3.
    """
    amount = parse_quantity(raw)
    if amount == 0:
        return "0"
    sign = "-" if amount < 0 else ""
    magnitude = abs(amount)
    fmt = quantity_format(raw)
    if fmt == "BinarySI" and magnitude >= 1024 and magnitude.denominator == 1:
        return sign + _canonical_binary(int(magnitude))
    nanos = math.ceil(magnitude * 10**9)
    return sign + _canonical_decimal(nanos, fmt)


def _canonical_binary(amount: int) -> str:
    exponent = 0
    while amount % 1024 == 0 and exponent < len(_BINARY_SUFFIXES) - 1:
        amount //= 1024
        exponent += 1
    return f"{amount}{_BINARY_SUFFIXES[exponent]}"


def _canonical_decimal(nanos: int, fmt: str) -> str:
    mantissa, exponent = nanos, -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    mantissa *= 10**shift
    exponent -= shift
    if fmt == "DecimalExponent" or exponent not in _DECIMAL_SUFFIXES:
        return f"{mantissa}" if exponent == 0 else f"{mantissa}e{exponent}"
    return f"{mantissa}{_DECIMAL_SUFFIXES[exponent]}"
