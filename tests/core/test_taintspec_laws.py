"""Laws of the taint-spec grammar: printing a taint with Taint.ToString and parsing it back is the identity."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kubetaint.core.matching import TAINT_EFFECTS, taint_to_string
from kubetaint.core.taintspec import parse_taint_spec

_alnum = st.sampled_from("abcxyzABC019")
_inner = st.text(alphabet="abcXYZ019-_.", max_size=8)
names = st.builds(lambda a, mid, b: a + mid + b, _alnum, _inner, _alnum)
prefixes = st.sampled_from(["", "example.com/", "node.kubernetes.io/", "a-b.c/"])
keys = st.builds(lambda p, n: p + n, prefixes, names)
label_values = st.one_of(st.just(""), names)


def _taint(key: str, value: str, effect: str) -> dict[str, Any]:
    taint: dict[str, Any] = {"key": key, "effect": effect}
    if value:
        taint["value"] = value
    return taint


@given(keys, label_values, st.sampled_from(TAINT_EFFECTS))
def test_print_then_parse_is_identity(key: str, value: str, effect: str) -> None:
    taint = _taint(key, value, effect)
    assert parse_taint_spec([taint_to_string(taint)]) == ([taint], [])


@given(keys, st.sampled_from(TAINT_EFFECTS))
def test_removal_spec_drops_the_value(key: str, effect: str) -> None:
    spec = taint_to_string(_taint(key, "v", effect)) + "-"
    assert parse_taint_spec([spec]) == ([], [{"key": key, "effect": effect}])
