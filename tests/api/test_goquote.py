"""One Go `%q` for every layer: the cases Go's strconv.Quote documents, as data."""

from __future__ import annotations

import pytest

from kubetaint.api.goquote import go_quote

CASES = [
    pytest.param("gpu", '"gpu"', id="plain text is only quoted"),
    pytest.param('a"b\\c', '"a\\"b\\\\c"', id="quotes and backslashes are escaped"),
    pytest.param("a\nb\tc", '"a\\nb\\tc"', id="newline and tab use their short escapes"),
    pytest.param("\x00\x7f", '"\\x00\\x7f"', id="other ASCII controls are hex escapes"),
    pytest.param("héllo ☺", '"héllo ☺"', id="printable unicode is kept"),
    pytest.param("\u200b", '"\\u200b"', id="non-printable unicode is a u escape"),
    pytest.param("", '""', id="the empty string"),
]


@pytest.mark.parametrize(("text", "quoted"), CASES)
def test_go_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


def test_duration_errors_quote_a_newline_as_go_does() -> None:
    from kubetaint.controlplane.durations import DurationError, parse_go_duration

    with pytest.raises(DurationError, match=r'time: unknown unit "\\n" in duration "1\\n"'):
        parse_go_duration("1\n")
