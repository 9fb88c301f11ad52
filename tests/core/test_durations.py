"""Scenario durations follow Go's time.ParseDuration (grammar and messages), plus plain seconds."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetaint.core.durations import DurationError, format_duration, parse_duration, parse_go_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("0", 0.0, id="a bare zero needs no unit"),
        pytest.param("90s", 90.0, id="seconds"),
        pytest.param("5m", 300.0, id="minutes"),
        pytest.param("1h30m", 5400.0, id="hours and minutes"),
        pytest.param("1.5h", 5400.0, id="a fractional hour"),
        pytest.param(".5s", 0.5, id="a fraction with no whole part"),
        pytest.param("1.s", 1.0, id="a whole part with an empty fraction"),
        pytest.param("100ms", 0.1, id="milliseconds"),
        pytest.param("1µs", 1e-6, id="microseconds with the micro sign"),
        pytest.param("1μs", 1e-6, id="microseconds with the Greek mu"),
        pytest.param("1us", 1e-6, id="microseconds spelled us"),
        pytest.param("3ns", 3e-9, id="nanoseconds"),
        pytest.param("-1m", -60.0, id="a negative duration"),
        pytest.param("+2s", 2.0, id="an explicit plus sign"),
        pytest.param("1h1m1s", 3661.0, id="three units in a row"),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", 'time: invalid duration ""', id="empty string"),
        pytest.param("90", 'time: missing unit in duration "90"', id="a number without unit"),
        pytest.param("5x", 'time: unknown unit "x" in duration "5x"', id="an unknown unit"),
        pytest.param("1h30", 'time: missing unit in duration "1h30"', id="a trailing number without unit"),
        pytest.param("h", 'time: invalid duration "h"', id="a unit without number"),
        pytest.param(".s", 'time: invalid duration ".s"', id="a lone dot"),
        pytest.param("-", 'time: invalid duration "-"', id="a lone sign"),
        pytest.param("1 h", 'time: unknown unit " h" in duration "1 h"', id="a space is part of the unit"),
        pytest.param("3000000h", 'time: invalid duration "3000000h"', id="overflow of int64 nanoseconds"),
    ],
)
def test_go_duration_errors(text: str, message: str) -> None:
    with pytest.raises(DurationError) as err:
        parse_go_duration(text)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        pytest.param(90, 90.0, id="an integer is seconds"),
        pytest.param(2.5, 2.5, id="a float is seconds"),
        pytest.param("90", 90.0, id="a numeric string is seconds"),
        pytest.param("1m30s", 90.0, id="a Go duration string"),
    ],
)
def test_scenario_durations(value: object, seconds: float) -> None:
    assert parse_duration(value) == seconds


def test_booleans_are_not_durations() -> None:
    with pytest.raises(DurationError):
        parse_duration(True)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(0, "0s", id="zero"),
        pytest.param(5400, "1h30m0s", id="hours"),
        pytest.param(90, "1m30s", id="minutes"),
        pytest.param(1.5, "1.5s", id="fractional seconds"),
        pytest.param(0.1, "100ms", id="milliseconds"),
    ],
)
def test_format_like_go(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@given(st.integers(min_value=0, max_value=10**7))
def test_formatting_then_parsing_whole_seconds_round_trips(seconds: int) -> None:
    assert parse_go_duration(format_duration(seconds)) == seconds
