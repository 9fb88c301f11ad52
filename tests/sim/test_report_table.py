"""The timeline table writes plain rows itself and has rich render the rest: its text is exactly
rich's rendering of the whole table, whatever the cells hold (cells to fold, markup, emoji codes,
wide and control characters) and however wide the console."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.sim.api import simulate
from kubetaint.sim.report_table import render_table, render_table_with_rich

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))

PIECES = st.sampled_from(
    [
        "node.kubernetes.io/unreachable:NoExecute",
        "Marking for deletion Pod default/web-1",
        " ",
        "  ",
        "x" * 70,
        "[bold]",
        "[/bold]",
        "[not a tag",
        ":smile:",
        ":NoSchedule:",
        "é",
        "中文",
        "\n",
        "\t",
        "0/3 nodes are available: 3 node(s) had untolerated taint {k: v}.",
    ]
)
TEXT = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
    st.lists(PIECES, max_size=6).map("".join),
)
RECORD = st.fixed_dictionaries(
    {
        "t": st.floats(0, 7200, allow_nan=False),
        "reason": TEXT,
        "kind": st.sampled_from(["Pod", "Node", "Command", "Scenario"]),
        "name": TEXT,
    },
    optional={"namespace": TEXT, "node": TEXT, "message": TEXT},
)


def document(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "scenario": "s",
        "seed": 1,
        "end": 3600.0,
        "timeline": records,
        "summary": {"scheduled": len(records), "evicted": 0},
    }


@settings(max_examples=200, deadline=None)
@given(st.lists(RECORD, max_size=12), st.sampled_from([160, 100, 60]))
def test_the_table_is_rich_rendering_of_the_whole_table(records: list[dict[str, Any]], width: int) -> None:
    doc = document(records)
    assert render_table(doc, width=width) == render_table_with_rich(doc, width=width)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_table_is_rich_rendering(path: Path) -> None:
    doc = simulate(path)
    assert render_table(doc) == render_table_with_rich(doc)


def test_an_empty_timeline_has_a_header_and_the_summary() -> None:
    text = render_table(document([]))
    assert text.splitlines() == [
        "scenario s (seed 1), 1h0m0s",
        "TIME  REASON  OBJECT  NODE  MESSAGE",
        "summary: scheduled 0, evicted 0",
    ]


def test_cells_are_shown_as_they_are_not_as_console_markup() -> None:
    message = "[/] and [bold]x[/bold] :smile: [link=http://x]y[/link]"
    doc = document([{"t": 5.0, "reason": "Note", "kind": "Pod", "name": "p", "message": message}])
    row = render_table(doc).splitlines()[2]
    assert row.endswith(message) and row.startswith("5s  ")


PLAIN_TEXT = st.lists(st.sampled_from(["a", "bb", "ccc", "dddd", " ", "  ", "x" * 70, ""]), max_size=5).map(
    "".join
)
PLAIN_RECORD = st.fixed_dictionaries(
    {
        "t": st.sampled_from([0.0, 1.5, 60.0, 3600.25]),
        "reason": PLAIN_TEXT,
        "kind": st.just("Pod"),
        "name": PLAIN_TEXT,
    },
    optional={"node": PLAIN_TEXT, "message": PLAIN_TEXT},
)


@settings(max_examples=200, deadline=None)
@given(st.lists(PLAIN_RECORD, max_size=12), st.sampled_from([160, 100, 60]))
def test_plain_rows_of_blank_and_repeated_words_are_rich_rendering(
    records: list[dict[str, Any]], width: int
) -> None:
    doc = document(records)
    assert render_table(doc, width=width) == render_table_with_rich(doc, width=width)


def test_the_reference_mode_renders_through_rich(switch_reference_mode: Callable[[bool], None]) -> None:
    doc = document([{"t": 5.0, "reason": "Note", "kind": "Pod", "name": "p", "message": "m " * 90}])
    fast = render_table(doc)
    switch_reference_mode(True)
    assert render_table(doc) == fast == render_table_with_rich(doc)
