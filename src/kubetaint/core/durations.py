"""Go durations (Go's time.ParseDuration, its grammar and messages) for scenarios, settings and flags.

`parse_duration("1h30m")` is 5400.0 seconds. Scenarios also accept plain seconds (`90`, `2.5`),
as numbers or numeric strings. `format_duration` renders seconds the way Go's Duration.String does.
"""

from __future__ import annotations

from typing import Any

from kubetaint.api.goquote import go_quote

#: Nanoseconds per unit, as in Go's unitMap (both micro signs are accepted).
_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5
    "μs": 1_000,  # U+03BC
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_MAX_NS = 1 << 63


class DurationError(ValueError):
    """A string Go's time.ParseDuration rejects; the message is Go's."""


def _invalid(orig: str) -> DurationError:
    return DurationError(f"time: invalid duration {go_quote(orig)}")


def _leading_digits(s: str) -> tuple[str, str]:
    i = 0
    while i < len(s) and "0" <= s[i] <= "9":
        i += 1
    return s[:i], s[i:]


def parse_go_duration(orig: str) -> float:
    """Seconds of a Go duration string; raises DurationError with Go's message."""
    s = orig
    negative = False
    if s and s[0] in "-+":
        negative = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise _invalid(orig)
    total_ns = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise _invalid(orig)
        whole, s = _leading_digits(s)
        fraction = ""
        has_fraction = False
        if s.startswith("."):
            fraction, s = _leading_digits(s[1:])
            has_fraction = bool(fraction)
        if not whole and not has_fraction:
            raise _invalid(orig)
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise DurationError(f"time: missing unit in duration {go_quote(orig)}")
        unit, s = s[:i], s[i:]
        scale = _UNITS_NS.get(unit)
        if scale is None:
            raise DurationError(f"time: unknown unit {go_quote(unit)} in duration {go_quote(orig)}")
        value = int(whole or "0") * scale
        if fraction:
            # Go truncates the fractional nanoseconds.
            value += int(fraction) * scale // (10 ** len(fraction))
        total_ns += value
        if total_ns > _MAX_NS - (0 if negative else 1):
            raise _invalid(orig)
    seconds = total_ns / 1_000_000_000
    return -seconds if negative else seconds


def parse_duration(value: Any) -> float:
    """Seconds of a scenario duration: a number of seconds, a numeric string, or a Go duration."""
    if isinstance(value, bool):
        raise DurationError(f"time: invalid duration {go_quote(str(value).lower())}")
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        raise DurationError(f"time: invalid duration {go_quote(str(value))}")
    text = value.strip()
    try:
        return (
            float(text)
            if text and text.lstrip("+-").replace(".", "", 1).isdigit()
            else parse_go_duration(text)
        )
    except DurationError:
        raise
    except ValueError:
        raise _invalid(value) from None


def format_duration(seconds: float) -> str:
    """Go's Duration.String for whole and fractional seconds: `1h30m0s`, `90ms`, `0s`."""
    ns = round(seconds * 1_000_000_000)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000_000_000:
        for unit, scale in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= scale:
                return sign + _trim(ns / scale) + unit
    hours, rest = divmod(ns, 3600 * 1_000_000_000)
    minutes, rest = divmod(rest, 60 * 1_000_000_000)
    text = _trim(rest / 1_000_000_000) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def _trim(value: float) -> str:
    text = f"{value:.9f}".rstrip("0").rstrip(".")
    return text or "0"
