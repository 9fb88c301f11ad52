"""Quantity parsing and canonical printing (upstream quantity_test.go canonicalization facts)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetaint.api.quantity import (
    QuantityError,
    format_quantity,
    milli_value,
    parse_quantity,
    quantity_format,
    value,
)

CANONICAL = [
    pytest.param("0", "0", id="zero"),
    pytest.param("0Ki", "0", id="zero with a suffix prints bare"),
    pytest.param("1Ki", "1Ki", id="binary stays binary when exact"),
    pytest.param("1024Mi", "1Gi", id="binary promotes to the largest exact suffix"),
    pytest.param("1536Mi", "1536Mi", id="binary keeps a non-dividing mantissa"),
    pytest.param("1.5Gi", "1536Mi", id="a fractional binary value moves down a suffix"),
    pytest.param("1.5Ki", "1536", id="binary below one Ki after reduction prints plain"),
    pytest.param("0.5Ki", "512", id="binary under 1024 prints as decimal"),
    pytest.param("-1Ki", "-1Ki", id="minus 1024 stays binary"),
    pytest.param("1.1Mi", "1153433600m", id="an inexact binary value prints as decimal"),
    pytest.param("100m", "100m", id="milli stays milli"),
    pytest.param("0.1", "100m", id="a decimal fraction becomes milli"),
    pytest.param("1.5", "1500m", id="one and a half is 1500m"),
    pytest.param("1000m", "1", id="a thousand milli is one"),
    pytest.param("1.0", "1", id="a trailing zero fraction is dropped"),
    pytest.param("1000", "1k", id="a thousand becomes k"),
    pytest.param("1500", "1500", id="1500 keeps no suffix"),
    pytest.param("1000000", "1M", id="a million becomes M"),
    pytest.param("1E", "1E", id="a lone E is exa"),
    pytest.param("12e6", "12e6", id="exponent format is kept"),
    pytest.param("1e3", "1e3", id="1e3 stays an exponent"),
    pytest.param("1.5e6", "1500e3", id="exponents are multiples of three"),
    pytest.param("1000e-3", "1", id="exponent zero prints bare"),
    pytest.param("0.0001m", "100n", id="tiny values reach nano"),
    pytest.param("0.00000000001", "1n", id="values below a nano round up to 1n"),
    pytest.param("-0.5", "-500m", id="negative fractions"),
    pytest.param(8, "8", id="a JSON integer"),
    pytest.param(0.25, "250m", id="a JSON float"),
]


@pytest.mark.parametrize(("raw", "expected"), CANONICAL)
def test_format_quantity(raw: str | int | float, expected: str) -> None:
    assert format_quantity(raw) == expected


@pytest.mark.parametrize(
    ("raw", "fmt"),
    [
        ("1Gi", "BinarySI"),
        ("1e3", "DecimalExponent"),
        ("1E3", "DecimalExponent"),
        ("1k", "DecimalSI"),
        ("5", "DecimalSI"),
    ],
)
def test_quantity_format(raw: str, fmt: str) -> None:
    assert quantity_format(raw) == fmt


@pytest.mark.parametrize("raw", ["", "abc", "1.2.3", "1Gb", "Ki", "1 Gi", "--1", "1e", True])
def test_malformed_quantities(raw: str | bool) -> None:
    with pytest.raises(QuantityError, match="quantities must match the regular expression"):
        parse_quantity(raw)


@pytest.mark.parametrize(
    ("raw", "milli", "whole"),
    [("100m", 100, 1), ("1", 1000, 1), ("1.0001", 1001, 2), ("1Ki", 1024000, 1024), ("0.5", 500, 1)],
)
def test_milli_value_and_value_round_up(raw: str, milli: int, whole: int) -> None:
    assert milli_value(raw) == milli
    assert value(raw) == whole


mantissas = st.integers(min_value=-(10**12), max_value=10**12)
suffixes = st.sampled_from(["", "m", "u", "n", "k", "M", "G", "Ki", "Mi", "Gi", "e3", "e-3", "e6"])


@given(mantissas, st.integers(min_value=0, max_value=3), suffixes)
def test_format_round_trips(mantissa: int, decimals: int, suffix: str) -> None:
    sign = "-" if mantissa < 0 else ""
    digits = str(abs(mantissa)).rjust(decimals + 1, "0")
    raw = f"{sign}{digits[: len(digits) - decimals]}{'.' + digits[len(digits) - decimals :] if decimals else ''}{suffix}"
    text = format_quantity(raw)
    assert format_quantity(text) == text
    exact = parse_quantity(raw)
    if (exact * 10**9).denominator == 1:
        assert parse_quantity(text) == exact
    else:
        assert abs(parse_quantity(text) - exact) < Fraction(1, 10**9)
