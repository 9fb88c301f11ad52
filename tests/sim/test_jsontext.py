"""The indented JSON writer: the same text as json.dumps(indent=N, ensure_ascii=False), for any
JSON value and for the values it leaves to json, whole or streamed in chunks."""

from __future__ import annotations

import io
import json
import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetaint.sim import jsontext
from kubetaint.sim.jsontext import dumps_indented, write_indented


def _expected(doc: Any, indent: int = 2) -> str:
    return json.dumps(doc, indent=indent, ensure_ascii=False)


_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_JSON = st.recursive(
    _SCALAR,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=30,
)


@given(_JSON, st.integers(min_value=1, max_value=4))
def test_any_json_value_is_written_as_json_writes_it(doc: Any, indent: int) -> None:
    assert dumps_indented(doc, indent) == _expected(doc, indent)


CASES = [
    pytest.param({}, id="an empty object"),
    pytest.param([], id="an empty array"),
    pytest.param({"a": {}, "b": [], "c": [[]], "d": [{}]}, id="empty containers inside"),
    pytest.param({"t": 3600.0, "x": 1e-05, "y": -0.0, "z": 10**30}, id="floats and a big integer"),
    pytest.param({"s": 'quote " backslash \\ newline \n tab \t é 雪 \u2028'}, id="strings needing escapes"),
    pytest.param({"a": {"b": {"c": [1, {"d": [True, False, None]}]}}}, id="deep nesting"),
    pytest.param({"nan": math.nan}, id="NaN left to json"),
    pytest.param({"inf": [math.inf, -math.inf]}, id="infinities left to json"),
    pytest.param({1: "one", None: "null", 2.5: "x", False: "f"}, id="non-string keys left to json"),
    pytest.param(OrderedDict([("b", 1), ("a", 2)]), id="a dict subclass left to json"),
    pytest.param({"tuple": (1, 2)}, id="a tuple left to json (written as a list)"),
]


@pytest.mark.parametrize("doc", CASES)
def test_documents_match_json(doc: Any) -> None:
    assert dumps_indented(doc) == _expected(doc)


class _Chunks:
    """A text stream that records each write."""

    def __init__(self) -> None:
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return len(text)


@given(_JSON, st.integers(min_value=1, max_value=4))
def test_streamed_text_is_json_text(doc: Any, indent: int) -> None:
    out = io.StringIO()
    write_indented(doc, out, indent)
    assert out.getvalue() == _expected(doc, indent)


@pytest.mark.parametrize("doc", CASES)
def test_streamed_documents_match_json_in_small_chunks(doc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsontext, "CHUNK_PARTS", 1)
    sink = _Chunks()
    write_indented({"before": list(range(5)), "doc": doc, "after": "x" * 10}, sink)
    assert "".join(sink.writes) == _expected({"before": list(range(5)), "doc": doc, "after": "x" * 10})


@pytest.mark.usefixtures("default_mode")
def test_a_large_document_is_written_in_bounded_chunks() -> None:
    doc = {"pods": [{"metadata": {"name": f"pod-{i}", "labels": {"app": "a"}}} for i in range(20_000)]}
    sink = _Chunks()
    write_indented(doc, sink)
    assert "".join(sink.writes) == _expected(doc)
    assert len(sink.writes) > 1
    assert max(len(w) for w in sink.writes) < 4 << 20


def test_values_json_rejects_raise_as_json_raises() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps_indented({"x": object()})
    with pytest.raises(TypeError, match="not JSON serializable"):
        write_indented({"x": object()}, io.StringIO())
    circular: list[Any] = []
    circular.append(circular)
    with pytest.raises(ValueError, match="Circular reference"):
        write_indented({"x": [1, circular]}, io.StringIO())


def test_a_timeline_document_round_trips() -> None:
    doc = {
        "scenario": "s",
        "seed": 1,
        "end": 60.0,
        "timeline": [{"t": 0.0, "reason": "Scheduled", "kind": "Pod", "name": "web", "node": "n-1"}],
        "summary": {"scheduled": 1},
        "final": {
            "nodes": [{"metadata": {"name": "n-1", "labels": {"zone": "a"}}, "spec": {"taints": []}}],
            "pods": [],
        },
    }
    text = dumps_indented(doc)
    assert text == _expected(doc)
    assert json.loads(text) == doc


@pytest.mark.parametrize("doc", CASES)
def test_list_items_holding_containers_match_json(doc: Any) -> None:
    items = [doc, {"wrapped": doc}, [doc, [doc]], {"wrapped": doc}]
    assert dumps_indented({"items": items}) == _expected({"items": items})


PODS_WITH_TRICKY_STRINGS = [
    pytest.param({"a": 'say "hi"', "b": [{"c": "\\"}]}, id="quotes and backslashes"),
    pytest.param({"a": "{[,]}: ", "b": [{"c": '"}]'}]}, id="brackets and commas inside strings"),
    pytest.param(
        {"a": "é 雪 \u2028 \n", "b": [{}, [], {"c": [[], {}]}]}, id="non-ASCII and empty containers"
    ),
    pytest.param({"a": [1, -2.5, 1e100, True, None], "b": {"c": [{"d": 0}]}}, id="numbers and literals"),
]


@pytest.mark.parametrize("item", PODS_WITH_TRICKY_STRINGS)
def test_items_of_one_skeleton_at_several_levels_match_json(item: Any) -> None:
    doc = {"pods": [item, item, {"x": item}], "deeper": {"pods": [[item], item]}}
    assert dumps_indented(doc) == _expected(doc)
    assert dumps_indented(doc, 3) == _expected(doc, 3)


def test_an_item_over_the_limit_is_written_container_by_container(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsontext, "ITEM_LIMIT", 10)
    doc = [{"name": "x" * 20, "inner": [{"a": 1}]}, {"b": [1, 2]}]
    assert dumps_indented(doc) == _expected(doc)


def test_a_full_skeleton_memo_starts_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsontext, "SKELETONS", 2)
    doc = [{"n": [i] * (i % 5)} for i in range(20)]
    assert dumps_indented(doc) == _expected(doc)


def test_large_items_are_handed_over_in_bounded_chunks() -> None:
    pods = [
        {"metadata": {"name": f"pod-{i}", "labels": {"app": "a"}}, "spec": {"x": [1]}} for i in range(40_000)
    ]
    sink = _Chunks()
    write_indented({"pods": pods}, sink)
    assert "".join(sink.writes) == _expected({"pods": pods})
    assert max(len(w) for w in sink.writes) < 4 << 20


@pytest.mark.parametrize("doc", CASES)
def test_the_reference_mode_writes_json_own_text(
    doc: Any, switch_reference_mode: Callable[[bool], None]
) -> None:
    switch_reference_mode(True)
    wrapped = {"items": [doc, {"x": doc}]}
    assert dumps_indented(wrapped) == _expected(wrapped)
    sink = _Chunks()
    write_indented(wrapped, sink)
    assert "".join(sink.writes) == _expected(wrapped)
