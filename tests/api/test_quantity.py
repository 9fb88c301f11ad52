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


# TestQuantityParseEmit, with the negative variants upstream also checks.
PARSE_EMIT = [
    ("1Ki", "1Ki"),
    ("1Mi", "1Mi"),
    ("1Gi", "1Gi"),
    ("1024Mi", "1Gi"),
    ("1000M", "1G"),
    (".001Ki", "1024m"),
    (".000001Ki", "1024u"),
    (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
]


@pytest.mark.parametrize(("raw", "expected"), PARSE_EMIT)
def test_parse_emit(raw: str, expected: str) -> None:
    assert format_quantity(raw) == expected
    assert format_quantity("-" + raw) == "-" + expected
    assert format_quantity("+" + raw) == expected


D = Fraction
# TestQuantityParse: (input, exact value after parsing, format).
PARSE = [
    ("0", D(0), "DecimalSI"),
    ("0Ki", D(0), "BinarySI"),
    ("1", D(1), "DecimalSI"),
    ("8Ki", D(8 * 1024), "BinarySI"),
    ("3Ei", D(3 * 2**60), "BinarySI"),
    ("5n", D(5, 10**9), "DecimalSI"),
    ("50k", D(50_000), "DecimalSI"),
    ("1E", D(10**18), "DecimalSI"),
    ("1E-3", D(1, 1000), "DecimalExponent"),
    ("1E18", D(10**18), "DecimalExponent"),
    ("100.035k", D(100035), "DecimalSI"),
    ("0.0005k", D(1, 2), "DecimalSI"),
    ("0.5e-2", D(5, 1000), "DecimalExponent"),
    ("1.3E+6", D(1_300_000), "DecimalExponent"),
    ("1.01E", D(101 * 10**16), "DecimalSI"),
    ("3.001n", D(4, 10**9), "DecimalSI"),
    ("1.1E-9", D(2, 10**9), "DecimalExponent"),
    ("0.0000000005", D(1, 10**9), "DecimalSI"),
    ("0.00000012345", D(124, 10**9), "DecimalSI"),
    ("9Ei", D(2**63 - 1), "BinarySI"),
    ("9223372036854775807Ki", D(2**63 - 1), "BinarySI"),
    ("12E", D(12 * 10**18), "DecimalSI"),
    ("100.035Ki", D(10243584, 100), "BinarySI"),
    ("0.5Mi", D(2**19), "BinarySI"),
    (".001", D(1, 1000), "DecimalSI"),
    (".0001k", D(1, 10), "DecimalSI"),
    ("1.", D(1), "DecimalSI"),
    ("1.G", D(10**9), "DecimalSI"),
]


@pytest.mark.parametrize(("raw", "amount", "fmt"), PARSE)
def test_quantity_parse_table(raw: str, amount: Fraction, fmt: str) -> None:
    assert parse_quantity(raw) == amount
    assert parse_quantity("-" + raw) == -amount
    assert parse_quantity("+" + raw) == amount
    assert quantity_format(raw) == fmt


@pytest.mark.parametrize(
    "raw", ["1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", " 1", "1 "]
)
def test_quantity_parse_invalid_table(raw: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(raw)


def test_a_fraction_of_a_binary_unit_below_one_prints_decimal() -> None:
    assert format_quantity("0.000000000001Ki") == "2n"
    assert format_quantity(1e-12) == "1e-9"  # a JSON number keeps its exponent format


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


@pytest.mark.parametrize(("number", "boolean"), [(1, True), (0, False)])
def test_a_boolean_is_malformed_even_after_its_equal_number_was_parsed(number: int, boolean: bool) -> None:
    # True == 1 and hash(True) == hash(1): a cache of parsed values must not answer for a boolean
    assert parse_quantity(number) == number
    with pytest.raises(QuantityError, match="quantities must match the regular expression"):
        parse_quantity(boolean)
