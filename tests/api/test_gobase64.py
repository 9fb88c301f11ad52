"""Go's base64 decode error offsets (encoding/base64's TestDecodeCorrupt table, as data)."""

from __future__ import annotations

import pytest

from kubetaint.api.gobase64 import corrupt_input_offset

# (input, offset): -1 means the input decodes (encoding/base64/base64_test.go TestDecodeCorrupt)
DECODE_CORRUPT = [
    ("", -1),
    ("\n", -1),
    ("AAA=\n", -1),
    ("AAAA\n", -1),
    ("!!!!", 0),
    ("====", 0),
    ("x===", 1),
    ("=AAA", 0),
    ("A=AA", 1),
    ("AA=A", 2),
    ("AA==A", 4),
    ("AAA=AAAA", 4),
    ("AAAAA", 4),
    ("AAAAAA", 4),
    ("A=", 1),
    ("A==", 1),
    ("AA=", 3),
    ("AA==", -1),
    ("AAA=", -1),
    ("AAAA", -1),
    ("AAAAAA=", 7),
    ("YWJjZA=====", 8),
    ("A!\n", 1),
    ("A=\n", 1),
]


@pytest.mark.parametrize(("text", "offset"), DECODE_CORRUPT, ids=[repr(t) for t, _ in DECODE_CORRUPT])
def test_the_offset_is_gos(text: str, offset: int) -> None:
    assert corrupt_input_offset(text) == (None if offset < 0 else offset)
