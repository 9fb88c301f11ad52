"""Go's `base64.StdEncoding.Decode` error offsets (mirrors encoding/base64's decodeQuantum):
a JSON `[]byte` field such as a Secret's `data` values decodes with it, and kube-apiserver's
400 names the offset: `illegal base64 data at input byte 4`."""

from __future__ import annotations

_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_NEWLINES = ("\n", "\r")


def corrupt_input_offset(text: str) -> int | None:
    """The offset Go's CorruptInputError reports for `text`, or None when it decodes."""
    src = text.encode("utf-8", "surrogatepass")
    chars = [chr(b) for b in src]
    si, n = 0, len(chars)
    while si < n:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return None
                return si - j  # an incomplete quantum: StdEncoding requires padding
            ch = chars[si]
            si += 1
            if ch in _ALPHABET:
                j += 1
                continue
            if ch in _NEWLINES:
                continue
            if ch != "=":
                return si - 1
            return _padding(chars, si, j)
    return None


def _padding(chars: list[str], si: int, j: int) -> int | None:
    """After a `=` at si - 1 with j symbols of the quantum read."""
    n = len(chars)
    if j in (0, 1):
        return si - 1
    if j == 2:
        while si < n and chars[si] in _NEWLINES:
            si += 1
        if si == n:
            return n
        if chars[si] != "=":
            return si - 1
        si += 1
    while si < n and chars[si] in _NEWLINES:
        si += 1
    return si if si < n else None
