"""The block YAML writer: the same text as PyYAML's libyaml dumper (through JSON, as the commands
call it) for any JSON document, strings quoted and folded as libyaml does, whole or streamed."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.sim import yamltext
from kubetaint.sim.yamltext import dumps_yaml, reference_text, write_yaml

#: Characters that change how a string is written: spaces, indicators, quotes, breaks, digits
#: and the letters of the booleans and nulls, non-ASCII and characters libyaml escapes.
_CHARS = st.sampled_from(
    list(" ab yntfoNTY0123456789.-+:#,'\"!&*?|>%@`[]{}~=<_/()\\\t\n\r\x85\u2028é雪\x00\x07\ufeff\U0001f600")
)
_STRINGS = st.text(_CHARS, max_size=12) | st.sampled_from(
    [
        "true",
        "False",
        "null",
        "~",
        "",
        "1",
        "-1.5",
        "0x1f",
        "1e3",
        "2026-01-01T00:00:00Z",
        "<<",
        "=",
        "---",
        "...",
    ]
)
#: Long strings of words: folded past 80 columns (plain, single- and double-quoted).
_LONG = st.lists(
    st.sampled_from(["word", "a", "longerword", "'q'", "x:y", "", "é", "tab\t", "end"]),
    min_size=5,
    max_size=40,
).map(" ".join)
_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | _STRINGS
    | _LONG
)
_KEYS = _STRINGS | st.text(st.sampled_from("kéy "), min_size=30, max_size=140)
_JSON = st.recursive(
    _SCALAR,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=4),
    max_leaves=30,
)
#: Documents shaped as a timeline: top-level lists of items, nested mappings
_DOCUMENT = st.dictionaries(
    _KEYS,
    _JSON | st.lists(_JSON, max_size=5) | st.dictionaries(_KEYS, st.lists(_JSON, max_size=4), max_size=3),
    min_size=1,
    max_size=5,
)


@settings(max_examples=300)
@given(_DOCUMENT)
def test_any_document_is_written_as_pyyaml_writes_it(doc: dict[str, Any]) -> None:
    assert dumps_yaml(doc) == reference_text(doc)


@settings(max_examples=300)
@given(_JSON)
def test_any_json_value_is_written_as_pyyaml_writes_it(doc: Any) -> None:
    assert dumps_yaml(doc) == reference_text(doc)


@given(st.lists(_LONG, min_size=1, max_size=3), st.integers(min_value=0, max_value=30))
def test_long_strings_fold_where_libyaml_folds_them(words: list[str], depth: int) -> None:
    doc: Any = {"k": words, "key": words[0]}
    for level in range(depth):
        doc = {f"level{level}": doc} if level % 2 else [doc]
    assert dumps_yaml({"top": doc}) == reference_text({"top": doc})


CASES = [
    pytest.param({"a": {}, "b": [], "c": [[]], "d": [{}]}, id="empty containers"),
    pytest.param(
        {"t": 3600.0, "x": 1e-05, "y": -0.0, "z": 10**30, "big": 1e17}, id="floats and a big integer"
    ),
    pytest.param({"nan": math.nan, "inf": [math.inf, -math.inf]}, id="NaN and infinities"),
    pytest.param(
        {"q": ["1", "true", "yes", "null", "", "2026-01-01T00:00:00Z", "a: b", "#c"]}, id="quoted strings"
    ),
    pytest.param({"x" * 200: 1, "a\nb": 2}, id="keys that are not simple keys"),
    pytest.param({"lines": ["a\nb", "a \n b", "trailing\n"]}, id="strings over several lines"),
    pytest.param({1: "one", None: "null", 2.5: "x", False: "f"}, id="non-string keys (through JSON)"),
    pytest.param(OrderedDict([("b", 1), ("a", 2)]), id="a dict subclass"),
    pytest.param({"tuple": (1, 2), "items": [(3, "x")]}, id="tuples (written as lists)"),
    pytest.param({"a": [[1, [2, []]], {"b": [{"c": {}}]}]}, id="sequences inside sequences"),
    pytest.param([{"a": 1}, "x", [1]], id="a list at the root"),
    pytest.param({}, id="an empty mapping"),
    pytest.param("text", id="a string at the root"),
]


@pytest.mark.parametrize("doc", CASES)
def test_documents_match_pyyaml(doc: Any) -> None:
    assert dumps_yaml(doc) == reference_text(doc)


class _Chunks:
    """A text stream that records each write."""

    def __init__(self) -> None:
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return len(text)


@pytest.mark.usefixtures("default_mode")
def test_a_long_timeline_is_handed_over_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamltext, "CHUNK_PARTS", 50)
    records = [
        {"t": float(i), "reason": "Scheduled", "name": f"pod-{i}", "message": "m " * i} for i in range(300)
    ]
    doc = {"scenario": "s", "timeline": records, "final": {"pods": records[:40], "nodes": []}}
    out = _Chunks()
    write_yaml(doc, out)
    assert "".join(out.writes) == reference_text(doc)
    assert len(out.writes) > 10
    assert max(map(len, out.writes)) < len("".join(out.writes)) / 5


def test_a_value_json_refuses_raises_jsons_error() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps_yaml({"timeline": [{"a": object()}]})


def test_the_reference_mode_writes_pyyamls_text_whole(switch_reference_mode: Callable[[bool], None]) -> None:
    switch_reference_mode(True)
    doc = {"timeline": [{"t": float(i), "message": "a b " * 30} for i in range(3)]}
    out = _Chunks()
    write_yaml(doc, out)
    assert out.writes == [reference_text(doc)]


@pytest.mark.usefixtures("default_mode")
def test_a_list_shared_by_many_items_at_several_indents_is_written_where_it_stands() -> None:
    tolerations = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}]
    words = ["a long value " * 8, "short"]
    items = [
        {
            "spec": {"tolerations": tolerations, "deeper": {"tolerations": tolerations, "words": words}},
            "tolerations": tolerations,
            "words": words,
        }
        for _ in range(30)
    ]
    doc = {"timeline": items, "final": {"pods": items, "again": [{"x": {"y": {"z": {"w": words}}}}] * 3}}
    assert dumps_yaml(doc) == reference_text(doc)
