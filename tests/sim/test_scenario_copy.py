"""The scenario's own copy of a document given as a dict: pickled and unpickled when it holds
builtin values only, copied by hand otherwise; either way what copy.deepcopy gives (equal values
of the same types, shared parts shared, nothing shared with the input but immutable atoms)."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.sim.doccopy import _copy_by_hand, copy_document

JSON = dict[str, Any]

VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3)
        | st.tuples(inner, inner)
    ),
    max_leaves=20,
)


def same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (repr tells 1, 1.0 and True apart; NaN too)."""
    return repr(a) == repr(b)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=3), VALUES, max_size=4))
def test_the_pickled_copy_is_the_hand_made_copy_and_deepcopy(document: JSON) -> None:
    copied = copy_document(document)
    assert same(copied, _copy_by_hand(document))
    assert same(copied, copy.deepcopy(document))


def test_a_shared_part_stays_shared_and_apart_from_the_input() -> None:
    labels = {"app": "a"}
    spec = {"containers": [{"name": "c"}]}
    document: JSON = {"objects": [{"labels": labels, "spec": spec}, {"labels": labels, "spec": spec}]}
    copied = copy_document(document)
    first, second = copied["objects"]
    assert first["spec"] is second["spec"] and first["labels"] is second["labels"]
    assert first["spec"] is not spec and first["spec"]["containers"] is not spec["containers"]
    first["spec"]["containers"][0]["name"] = "changed"
    assert spec["containers"][0]["name"] == "c"


def test_a_document_that_contains_itself_is_copied_with_its_loop() -> None:
    looped: list[Any] = [1]
    looped.append(looped)
    copied = copy_document({"x": looped})
    assert copied["x"][1] is copied["x"] and copied["x"] is not looped


class Custom:
    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Custom) and other.value == self.value

    __hash__ = None  # type: ignore[assignment]


class Text(str):
    __slots__ = ()


@pytest.mark.parametrize(
    "odd",
    [
        pytest.param(OrderedDict(a=[1]), id="a dict subclass keeps its type"),
        pytest.param(Text("x"), id="a str subclass is kept"),
        pytest.param(Custom(3), id="an object of another class is deep-copied"),
        pytest.param(bytearray(b"ab"), id="a bytearray is deep-copied"),
    ],
)
def test_a_document_with_other_types_is_copied_by_hand(odd: Any) -> None:
    document: JSON = {"objects": [{"odd": odd, "list": [1, 2]}]}
    copied = copy_document(document)
    assert copied == _copy_by_hand(document) == document
    assert type(copied["objects"][0]["odd"]) is type(odd)
    assert copied["objects"][0]["list"] is not document["objects"][0]["list"]
