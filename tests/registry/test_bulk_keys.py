"""The pod admission memo's key of a pod's fields other than metadata and spec tells two pods
apart exactly as the repr of those fields in their order does: equal keys only for equal reprs
(never a pod admitted as another that differs), and for the JSON values a manifest holds equal
reprs give equal keys."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.registry.bulk import _rest

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10,
)
KEYS = st.sampled_from(["apiVersion", "kind", "metadata", "spec", "status", "x"]) | st.text(max_size=3)


def reference(pod: dict[Any, Any]) -> str:
    return repr({k: v for k, v in pod.items() if k not in ("metadata", "spec")})


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=6), st.dictionaries(KEYS, VALUES, max_size=6))
def test_the_rest_of_two_pods_is_equal_exactly_when_their_reprs_are(
    pod: dict[str, Any], other: dict[str, Any]
) -> None:
    assert (_rest(pod) == _rest(other)) == (reference(pod) == reference(other))
    assert _rest(pod) == _rest(dict(pod))
    hash(_rest(pod))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param({"x": 1}, {"x": 1.0}, id="an integer and a float"),
        pytest.param({"x": 1}, {"x": True}, id="an integer and a boolean"),
        pytest.param({"x": "1"}, {"x": 1}, id="a string and a number"),
        pytest.param({"x": "{'a': 1}"}, {"x": {"a": 1}}, id="a string that reads as an object's repr"),
        pytest.param({"x": "(1,)"}, {"x": (1,)}, id="a string that reads as a tuple's repr"),
        pytest.param({1: "a"}, {True: "a"}, id="keys 1 and True"),
        pytest.param({"1": "a"}, {1: "a"}, id="a string key and a number key"),
        pytest.param({"a": "1", "b": "2"}, {"b": "2", "a": "1"}, id="the same fields in another order"),
    ],
)
def test_pods_whose_other_fields_differ_get_other_keys(a: dict[Any, Any], b: dict[Any, Any]) -> None:
    assert reference(a) != reference(b)
    assert _rest(a) != _rest(b)


def test_metadata_and_spec_are_left_out_wherever_they_stand() -> None:
    pod = {"status": {"phase": "Running"}, "spec": {}, "kind": "Pod", "metadata": {}, "apiVersion": "v1"}
    other = {"status": {"phase": "Running"}, "kind": "Pod", "apiVersion": "v1", "spec": {"x": 1}}
    assert _rest(pod) == _rest(other)
    assert _rest(pod) == (("status", ("{'phase': 'Running'}",)), ("kind", "Pod"), ("apiVersion", "v1"))
    assert list(pod) == ["status", "spec", "kind", "metadata", "apiVersion"], "the pod is not changed"
