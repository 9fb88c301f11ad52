"""How upstream messages print values: Go's `strconv.Quote` (`%q`: printable characters kept,
quotes and backslashes escaped, control characters as Go escapes them) and `%v` of a float64.
One copy for every layer (validation, taint parsing and matching, durations, the API server)."""

from __future__ import annotations

import math
from decimal import Decimal


def go_quote(value: str) -> str:
    """Go's strconv.Quote / `%q`: printable characters kept, others escaped."""
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in SIMPLE_ESCAPES:
            out.append(SIMPLE_ESCAPES[ch])
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


SIMPLE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_float(value: float) -> str:
    """`%v` of a float64 (strconv.FormatFloat(value, 'g', -1, 64)): the shortest digits that read
    back as the same float, in `%e` form when the exponent is below -4 or at least 6: `1e+06`,
    `2.5`, `1e-05`."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    point = len(digit_tuple) + exponent  # where the decimal point falls in the digits
    exp = point - 1
    head = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{head}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{head}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return head + digits + "0" * (point - len(digits))
    return f"{head}{digits[:point]}.{digits[point:]}"
