"""Go's `strconv.Quote` (`%q`), which upstream messages use to show values: printable characters
kept, quotes and backslashes escaped, control characters as Go escapes them. One copy for every
layer (validation, taint parsing and matching, durations, the API server)."""

from __future__ import annotations


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
