"""The simulate HTML report: what it derives from a timeline, and the page as a real headless
Chromium renders it (the script runs without errors, the charts hold their marks, the table
fills and filters)."""

from __future__ import annotations

import base64
import gzip
import itertools
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetaint.sim.api import simulate
from kubetaint.sim.pending_explain import explain_pending
from kubetaint.sim.report_data import (
    COLUMNS,
    MARKS,
    evictions_per_interval,
    interval_for,
    natural_key,
    pack_records,
    pending_reasons,
    pods_per_zone,
)
from kubetaint.sim.report_html import NODE_ROWS, render_html
from kubetaint.sim.report_svg import bars, zone_lines
from sim.browser import needs_chromium, rendered_dom, with_zone_line_probe, zone_line_pixels
from sim.helpers import EXAMPLES, run_example
from sim.test_pending_explain import pending_run


def _filled(message: str, namespace: str, name: str, node: str) -> str:
    """A packed message's markers replaced in the reverse order of their making."""
    if message.startswith("\x00"):
        return message[1:]
    return message.replace("\x03", node).replace("\x02", name).replace("\x01", f"{namespace}/{name}")


def unpack_records(packed: str) -> list[dict[str, Any]]:
    """`pack_records` undone, as the page's script does."""
    payload = json.loads(gzip.decompress(base64.b64decode(packed)))
    columns, tables = payload["columns"], payload["tables"]
    records: list[dict[str, Any]] = []
    t = 0
    for row in range(len(columns["dt"])):
        t += columns["dt"][row]
        values = {column: tables[column][columns[column][row]] for column in COLUMNS}
        values["message"] = _filled(values["message"], values["namespace"], values["name"], values["node"])
        records.append({"t": t / 1000, **values})
    return records


_TEXT = st.text(alphabet=st.sampled_from("ab-/0\x00\x01\x02\x03 "), max_size=12)


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "t": st.integers(min_value=0, max_value=10**7).map(lambda ms: ms / 1000),
                "reason": _TEXT,
                "kind": st.sampled_from(["Pod", "Node", "Scenario"]),
                "namespace": _TEXT,
                "name": _TEXT,
                "node": _TEXT,
                "message": _TEXT,
            }
        ),
        max_size=20,
    ).map(lambda rs: sorted(rs, key=lambda r: r["t"]))
)
def test_packed_records_unpack_to_the_records(records: list[dict[str, Any]]) -> None:
    assert unpack_records(pack_records(records)) == records


def test_messages_naming_their_pod_pack_into_one_text() -> None:
    records = [
        {
            "t": float(i),
            "reason": "TaintManagerEviction",
            "kind": "Pod",
            "namespace": "default",
            "name": f"web-{i}",
            "node": "node-1",
            "message": f"Marking for deletion Pod default/web-{i}",
        }
        for i in range(1000)
    ]
    packed = pack_records(records)
    assert unpack_records(packed) == records
    payload = json.loads(gzip.decompress(base64.b64decode(packed)))
    assert payload["tables"]["message"] == ["Marking for deletion Pod \x01"]


def test_nodes_sort_by_their_numbers() -> None:
    names = ["node-10", "node-2", "node-1", "a-3-b-10", "a-3-b-9"]
    assert sorted(names, key=natural_key) == ["a-3-b-9", "a-3-b-10", "node-1", "node-2", "node-10"]


@pytest.mark.parametrize(
    ("end", "interval"),
    [
        pytest.param(600, 10, id="ten minutes in ten-second bars"),
        pytest.param(3600, 60, id="an hour in minutes"),
        pytest.param(86400, 1800, id="a day in half hours"),
    ],
)
def test_eviction_bars_take_a_round_interval(end: float, interval: float) -> None:
    assert interval_for(end) == interval


def _eviction(t: float, reason: str) -> dict[str, Any]:
    message = "Marking for deletion Pod default/p" if reason == "TaintManagerEviction" else "The node was low"
    return {"t": t, "reason": reason, "kind": "Pod", "name": "default/p", "message": message}


def test_evictions_are_counted_by_kind_per_interval() -> None:
    records = [
        _eviction(10, "TaintManagerEviction"),
        _eviction(70, "Evicted"),
        _eviction(80, "TaintManagerEviction"),
    ]
    records.append(
        {"t": 80, "reason": "TaintManagerEviction", "kind": "Pod", "message": "Cancelling deletion"}
    )
    assert evictions_per_interval(records, 120, 60) == {"Eviction": [1, 1], "Evicted": [0, 1]}


def test_the_evictions_chart_stacks_each_kind_in_its_marks_colour_with_a_legend() -> None:
    chart = bars({"Eviction": [2, 1], "Evicted": [0, 1]}, 60, 120)
    colours = {mark.key: mark.color for mark in MARKS}
    rects = re.findall(
        r'<rect class="bar (\w+)" x="([\d.]+)" y="([\d.]+)" [^>]*height="([\d.]+)" fill="([^"]+)"', chart
    )
    assert [(kind, fill) for kind, _, _, _, fill in rects] == [
        ("Eviction", colours["Eviction"]),
        ("Eviction", colours["Eviction"]),
        ("Evicted", colours["Evicted"]),
    ]
    # the second interval's kubelet eviction sits on its taint manager eviction
    (_, x1, y1, h1, _), (_, x2, y2, h2, _) = rects[1], rects[2]
    assert x1 == x2 and abs(float(y2) + float(h2) - float(y1)) < 0.2 and float(h1) == float(h2)
    assert "taint manager eviction</span>" in chart and "evicted (kubelet or API eviction)</span>" in chart


def test_pods_per_zone_count_the_pods_bound_before_the_run() -> None:
    doc = run_example("taint-based-eviction")
    zones = {"node-0": "zone-a", "node-1": "zone-a"}
    series = pods_per_zone(doc, zones, float(doc["end"]), 10)
    # two pods on node-0 from the start; the one with the default 300 s toleration is evicted
    assert series["zone-a"][0] == 2
    assert series["zone-a"][-1] == 1


def test_pending_pods_are_grouped_by_the_schedulers_message() -> None:
    pod = {"metadata": {"namespace": "default", "name": "p"}, "spec": {}, "status": {"phase": "Pending"}}
    message = "0/1 nodes are available: 1 node(s) had untolerated taint {a: b}."
    doc = {
        "timeline": [
            {
                "t": 0.0,
                "reason": "FailedScheduling",
                "kind": "Pod",
                "namespace": "default",
                "name": "p",
                "message": "x",
            },
            {
                "t": 9.0,
                "reason": "FailedScheduling",
                "kind": "Pod",
                "namespace": "default",
                "name": "p",
                "message": message,
            },
        ],
        "final": {"nodes": [], "pods": [pod]},
    }
    assert pending_reasons(doc) == [(message, ["default/p"])]


def test_evictions_are_drawn_over_the_deletions_of_their_instant() -> None:
    page = render_html(run_example("taint-based-eviction"))
    chart = page[page.index('<svg class="chart nodes"') :]
    chart = chart[: chart.index("</svg>")]
    assert chart.index("mark Deleted") < chart.index("mark Eviction")


def _zone_outage(nodes: int) -> dict[str, Any]:
    """`nodes` nodes over three zones, two ReplicaSet pods per node, zone-a stopping at 60 s."""
    template = {"containers": [{"name": "app", "image": "app", "resources": {"requests": {"cpu": "100m"}}}]}
    objects: list[dict[str, Any]] = []
    for r in range(nodes // 50):
        labels = {"app": f"app-{r}"}
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": f"app-{r}"},
                "spec": {
                    "replicas": 100,
                    "selector": {"matchLabels": labels},
                    "template": {"metadata": {"labels": labels}, "spec": template},
                },
            }
        )
    return {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "zone-outage"},
        "spec": {
            "seed": 1,
            "until": "20m",
            "nodeGroups": [{"name": "node", "count": nodes, "zones": ["zone-a", "zone-b", "zone-c"]}],
            "objects": objects,
            "events": [{"at": "60s", "zone": "zone-a", "fault": "stop"}],
        },
    }


@cache
def _large_report() -> tuple[dict[str, Any], str]:
    doc = simulate(_zone_outage(NODE_ROWS * 2))
    return doc, render_html(doc)


def test_beyond_a_few_hundred_nodes_the_chart_has_a_lane_per_zone() -> None:
    _, page = _large_report()
    assert '<svg class="chart zones"' in page
    assert '<svg class="chart nodes"' in page  # under each zone's disclosure
    assert page.count('<details class="zone">') == 3
    for section in page.split('<details class="zone">')[1:]:
        rows = re.findall(r'class="label">(node-\d+)</text>', section[: section.index("</details>")])
        assert rows
        assert rows == sorted(rows, key=natural_key)


def _body(dom: str) -> str:
    found = re.search(r"<body[^>]*>", dom)
    assert found is not None
    return found.group(0)


def _write(tmp_path: Path, page: str) -> Path:
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


@needs_chromium
@pytest.mark.parametrize("example", sorted(p.stem for p in EXAMPLES.glob("*.yaml")))
def test_every_examples_report_renders_without_script_errors(example: str, tmp_path: Path) -> None:
    doc = run_example(example)
    dom = rendered_dom(_write(tmp_path, render_html(doc)))
    body = _body(dom)
    assert 'data-ready="yes"' in body
    assert "data-errors" not in body
    assert dom.count("<tr data-reason=") == min(200, len(doc["timeline"]))


@needs_chromium
def test_the_page_shows_every_kind_of_mark_in_its_legend_and_its_evictions(tmp_path: Path) -> None:
    dom = rendered_dom(_write(tmp_path, render_html(run_example("taint-based-eviction"))))
    assert '<html lang="en">' in dom
    assert 'name="viewport"' in dom
    for mark in MARKS:
        assert f'href="#m-{mark.key}"' in dom
    assert 'class="mark Eviction"' in dom
    assert 'class="bar Eviction"' in dom  # the evictions-per-interval chart, in the mark's colour


@needs_chromium
def test_the_table_is_filtered_as_the_address_asks(tmp_path: Path) -> None:
    doc = run_example("taint-based-eviction")
    dom = rendered_dom(_write(tmp_path, render_html(doc)), "reason=TaintManagerEviction")
    reasons = re.findall(r'<tr data-reason="([^"]*)"', dom)
    expected = [r for r in doc["timeline"] if r["reason"] == "TaintManagerEviction"]
    assert reasons == ["TaintManagerEviction"] * len(expected)
    assert f"{len(expected)} of {len(doc['timeline'])} records" in dom


@needs_chromium
def test_a_zone_outage_report_opens_with_every_record_in_its_table(tmp_path: Path) -> None:
    doc, page = _large_report()
    dom = rendered_dom(_write(tmp_path, page), "kind=Node")
    assert 'data-ready="yes"' in _body(dom)
    nodes = [r for r in doc["timeline"] if r["kind"] == "Node"]
    assert f"{len(nodes):,} of {len(doc['timeline']):,} records" in dom


@needs_chromium
def test_a_report_explaining_its_pending_pods_renders_without_script_errors(tmp_path: Path) -> None:
    doc = pending_run()
    dom = rendered_dom(_write(tmp_path, render_html(doc, explain_pending(doc))))
    body = _body(dom)
    assert 'data-ready="yes"' in body and "data-errors" not in body
    assert dom.count('<details class="why" open="">') == 1


_ZONES = [f"zone-{c}" for c in "abcdefg"]


def test_each_zones_line_has_its_own_dash_and_markers_at_buckets_no_other_zone_uses() -> None:
    chart = zone_lines({zone: [3] * 240 for zone in _ZONES}, _ZONES, 1200, "pods per zone")
    styles = re.findall(
        r'<polyline class="zone-line" data-zone="[^"]+" fill="none" stroke="([^"]+)" '
        r'stroke-width="[\d.]+"(?: stroke-dasharray="([^"]+)")?',
        chart,
    )
    assert len(set(styles)) == len(_ZONES)
    assert [dash for _, dash in styles].count("") == 1  # the first zone's, drawn under the others
    markers = re.findall(r'<path class="zone-marker" data-zone="([^"]+)"[^>]* d="M([\d.]+),', chart)
    assert {zone for zone, _ in markers} == set(_ZONES)
    by_x: dict[str, set[str]] = {}
    for zone, x in markers:
        by_x.setdefault(x, set()).add(zone)
    assert all(len(zones) == 1 for zones in by_x.values())
    assert chart.index('class="zone-marker"') > chart.rindex('class="zone-line"')  # over every line


def _shown(measured: list[dict[str, Any]], chart: int) -> dict[str, float]:
    """The share of each zone line's own pixels that shows in `chart`."""
    return {m["zone"]: m["shown"] / m["alone"] for m in measured if m["chart"] == chart}


@needs_chromium
def test_zone_lines_with_equal_counts_all_show(tmp_path: Path) -> None:
    pairs = list(itertools.combinations(range(len(_ZONES)), 2))
    charts = [zone_lines({zone: [7] * 240 for zone in _ZONES[:3]}, _ZONES[:3], 1200, "three equal")]
    charts += [
        zone_lines(
            {zone: [7 if k in pair else 2] * 240 for k, zone in enumerate(_ZONES)}, _ZONES, 1200, "pair"
        )
        for pair in pairs
    ]
    page = f"<!DOCTYPE html><html><body>{''.join(charts)}</body></html>"
    measured = zone_line_pixels(rendered_dom(_write(tmp_path, with_zone_line_probe(page))))
    # three zones with the same count all along: at least a tenth of each line shows
    assert all(share >= 0.1 for share in _shown(measured, 0).values()), _shown(measured, 0)
    # any two of seven zones with the same count: neither line hides the other
    for chart, pair in enumerate(pairs, start=1):
        shown = _shown(measured, chart)
        for k in pair:
            assert shown[_ZONES[k]] >= 0.05, (pair, shown)


@needs_chromium
def test_a_zone_outage_report_shows_every_zones_line(tmp_path: Path) -> None:
    _, page = _large_report()  # zone-b and zone-c keep equal counts until zone-a's pods move
    measured = zone_line_pixels(rendered_dom(_write(tmp_path, with_zone_line_probe(page))))
    shown = _shown(measured, 0)
    assert sorted(shown) == ["zone-a", "zone-b", "zone-c"]
    assert all(share >= 0.1 for share in shown.values()), shown
