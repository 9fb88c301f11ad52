"""Go's formatting of values in upstream messages."""

from __future__ import annotations

import pytest

from kubetaint.api.goquote import go_float


# strconv.FormatFloat(f, 'g', -1, 64), which fmt's %v of a float64 uses.
@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param(1e6, "1e+06", id="a million is in exponent form"),
        pytest.param(999999.0, "999999", id="below a million is not"),
        pytest.param(2.5, "2.5", id="a fraction"),
        pytest.param(0.0001, "0.0001", id="the exponent -4 is not in exponent form"),
        pytest.param(0.00001, "1e-05", id="the exponent -5 is"),
        pytest.param(1.0000005e6, "1.0000005e+06", id="shortest digits in exponent form"),
        pytest.param(-0.0, "-0", id="negative zero"),
        pytest.param(float("inf"), "+Inf", id="infinity"),
        pytest.param(1e21, "1e+21", id="large"),
    ],
)
def test_go_float_prints_as_go_v(value: float, text: str) -> None:
    assert go_float(value) == text
