"""`copy_document` by marshal: a document of plain values gets marshal's copy, which is the
memoizing pickler's (`_pickled_copy`, the copy before marshal) and deepcopy's: equal values of
the same types, the same parts shared; any other document falls back, to the copy by hand (a
value that is not plain, marshal taking some of those silently) or to the pickler (a loop,
nesting past marshal's limit, a document sharing parts many times over)."""

from __future__ import annotations

import array
import copy
import pickle
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.sim import doccopy
from kubetaint.sim.doccopy import _copy_by_hand, _pickled_copy, copy_document

#: every test here is of the fast copy's own workings
pytestmark = pytest.mark.usefixtures("default_mode")

JSON = dict[str, Any]

PLAIN = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**90), max_value=2**90)
    | st.floats()
    | st.text(max_size=4, alphabet=st.characters(blacklist_categories=()))  # surrogates too
    | st.binary(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=3) | st.integers() | st.tuples(st.integers()), inner, max_size=3)
        | st.tuples(inner, inner)
        | st.frozensets(st.integers(), max_size=3)
        | st.sets(st.text(max_size=2), max_size=3)
    ),
    max_leaves=20,
)


def shape(value: Any) -> list[Any]:
    """The containers of `value` in walk order, each as the index of its first visit: two values
    with equal shapes share the same parts (and only those)."""
    seen: dict[int, int] = {}
    out: list[Any] = []

    def walk(v: Any) -> None:
        if type(v) in (dict, list, tuple, set, frozenset):
            first = seen.setdefault(id(v), len(seen))
            out.append(first)
            if first != len(seen) - 1:
                return
            for item in v.items() if type(v) is dict else v:
                walk(item)

    walk(value)
    return out


def containers(value: Any) -> Iterator[Any]:
    """Every mutable container reachable from `value`."""
    if type(value) in (dict, list, set):
        yield value
    if type(value) in (dict, list, tuple, set, frozenset):
        for item in value.values() if type(value) is dict else value:
            yield from containers(item)


def only_marshal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails the test if either fallback copies."""

    def refuse(document: JSON) -> JSON:
        raise AssertionError("a fallback copied")

    monkeypatch.setattr(doccopy, "_pickled_copy", refuse)
    monkeypatch.setattr(doccopy, "_copy_by_hand", refuse)


def spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[JSON]:
    """Records the documents the fallback `name` copies."""
    calls: list[JSON] = []
    real: Callable[[JSON], JSON] = getattr(doccopy, name)

    def recording(document: JSON) -> JSON:
        calls.append(document)
        return real(document)

    monkeypatch.setattr(doccopy, name, recording)
    return calls


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=3), PLAIN, max_size=4))
def test_a_plain_document_copies_as_the_pickler_and_deepcopy_do(document: JSON) -> None:
    copied = copy_document(document)
    assert repr(copied) == repr(_pickled_copy(document)) == repr(copy.deepcopy(document))
    assert shape(copied) == shape(document)
    mine = {id(c) for c in containers(copied)}
    assert not mine & {id(c) for c in containers(document)}, "nothing mutable shared with the input"


@pytest.mark.parametrize(
    "document",
    [
        pytest.param({"a": [{"b": 1}], "c": {"d": "e"}}, id="a JSON document"),
        pytest.param({"t": (1, ("x", [2])), "b": b"\x00"}, id="tuples and bytes"),
        pytest.param({"big": 2**200, "neg": -(2**70), "nan": float("nan"), "z": -0.0}, id="odd numbers"),
        pytest.param({"surrogate": "\udc80", "astral": "\U0001f600"}, id="any code point"),
        pytest.param({1: "int key", (1, "a"): "tuple key", None: "none key"}, id="keys of other types"),
    ],
)
def test_a_plain_document_takes_marshal_alone(document: JSON, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = repr(_pickled_copy(document))
    only_marshal(monkeypatch)
    assert repr(copy_document(document)) == expected


def test_a_part_shared_many_times_stays_one_part_in_the_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    template = {"containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}]}
    pods = [{"spec": {**template, "nodeName": f"n{i}"}, "labels": {"app": "a"}} for i in range(50)]
    document: JSON = {"objects": pods, "again": template}
    only_marshal(monkeypatch)
    copied = copy_document(document)
    lists = {id(pod["spec"]["containers"]) for pod in copied["objects"]}
    assert lists == {id(copied["again"]["containers"])}
    assert copied["again"]["containers"] is not template["containers"]
    assert shape(copied) == shape(document)


class Text(str):
    __slots__ = ()


class Blob(bytes):
    pass


@pytest.mark.parametrize(
    ("odd", "why"),
    [
        pytest.param(bytearray(b"ab"), "marshal writes a bytearray as bytes", id="a bytearray"),
        pytest.param(Blob(b"ab"), "marshal writes a bytes subclass as bytes", id="a bytes subclass"),
        pytest.param(array.array("b", [1, 2]), "marshal writes a buffer as bytes", id="an array"),
        pytest.param(1 + 2j, "marshal copies a complex number deepcopy keeps", id="a complex number"),
        pytest.param(Text("x"), "marshal refuses it", id="a str subclass"),
    ],
)
def test_a_value_that_is_not_plain_is_copied_by_hand(
    odd: Any, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_hand = spy(monkeypatch, "_copy_by_hand")
    document: JSON = {"objects": [{"odd": odd, "list": [1, 2]}]}
    copied = copy_document(document)
    assert by_hand == [document], why
    assert type(copied["objects"][0]["odd"]) is type(odd)
    assert copied["objects"][0]["odd"] == odd
    assert copied["objects"][0]["list"] is not document["objects"][0]["list"]


def test_a_memoryview_fails_as_deepcopy_fails() -> None:
    """marshal would write it as bytes: the check sends it to deepcopy, which refuses it."""
    document: JSON = {"view": memoryview(b"ab")}
    with pytest.raises(TypeError) as mine:
        copy_document(document)
    with pytest.raises(TypeError) as deep:
        copy.deepcopy(document)
    assert str(mine.value) == str(deep.value)


def test_a_pickle_buffer_is_copied_as_the_pickler_copies_it(monkeypatch: pytest.MonkeyPatch) -> None:
    pickled = spy(monkeypatch, "_pickled_copy")
    document: JSON = {"buffer": pickle.PickleBuffer(bytearray(b"ab"))}
    copied = copy_document(document)
    assert pickled == [document]
    assert type(copied["buffer"]) is bytearray and copied["buffer"] == bytearray(b"ab")


@pytest.mark.parametrize(
    "sets",
    [
        pytest.param({-6, -166}, id="a set whose order marshal would change"),
        pytest.param(frozenset({-6, -166}), id="a frozenset whose order marshal would change"),
        pytest.param([set()], id="an empty set"),
    ],
)
def test_a_document_with_a_set_takes_the_pickler(sets: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    pickled = spy(monkeypatch, "_pickled_copy")
    document: JSON = {"sets": sets, "list": [1]}
    copied = copy_document(document)
    assert pickled == [document]
    assert repr(copied) == repr(copy.deepcopy(document)) == repr(document)


def test_a_byte_like_a_set_opcode_only_costs_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    pickled = spy(monkeypatch, "_pickled_copy")
    document: JSON = {"text": "\u03cf", "number": 0x8F}  # UTF-8 cf 8f; BININT1 8f
    copied = copy_document(document)
    assert pickled == [document]
    assert repr(copied) == repr(document)


def test_a_document_that_contains_itself_takes_the_pickler(monkeypatch: pytest.MonkeyPatch) -> None:
    pickled = spy(monkeypatch, "_pickled_copy")
    looped: list[Any] = [1]
    looped.append(looped)
    document: JSON = {"x": looped}
    copied = copy_document(document)
    assert pickled == [document]
    assert copied["x"][1] is copied["x"] and copied["x"] is not looped


def nested(depth: int) -> JSON:
    document: JSON = {"leaf": 1}
    for _ in range(depth):
        document = {"in": [document]}
    return document


def test_nesting_past_marshals_limit_takes_the_pickler(monkeypatch: pytest.MonkeyPatch) -> None:
    pickled = spy(monkeypatch, "_pickled_copy")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        document = nested(1500)  # 3,000 containers deep: past marshal's 2,000
        copied = copy_document(document)
        assert copied == document
    finally:
        sys.setrecursionlimit(limit)
    assert pickled == [document]


def test_nesting_past_the_recursion_limit_fails_as_before() -> None:
    document = nested(sys.getrecursionlimit())
    with pytest.raises(RecursionError):
        _pickled_copy(document)
    with pytest.raises(RecursionError):
        copy_document(document)


def test_a_document_sharing_parts_many_times_over_stops_the_check_early(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pickled = spy(monkeypatch, "_pickled_copy")
    part: Any = ["x" * 64]
    for _ in range(30):  # 2**30 places for one string: the check would write them all
        part = [part, part]
    document: JSON = {"bomb": part}
    copied = copy_document(document)
    assert pickled == [document]
    assert copied["bomb"][0] is copied["bomb"][1] and copied["bomb"] is not part


def test_the_check_sink_counts_to_its_cap() -> None:
    sink = doccopy._CappedSink(10)
    assert sink.write(b"x" * 10) == 10
    with pytest.raises(doccopy._TooLargeError):
        sink.write(b"x")


def test_the_copy_by_hand_keeps_other_types() -> None:
    document: JSON = {"t": Text("x"), "shared": [1], "again": None}
    document["again"] = document["shared"]
    copied = _copy_by_hand(document)
    assert type(copied["t"]) is Text and copied["again"] is copied["shared"] is not document["shared"]
