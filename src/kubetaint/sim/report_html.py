"""`kubetaint simulate -o html`: one self-contained page (inline CSS, SVG and script; nothing
fetched) that stays small and quick to open at 5,000 nodes: the summary, taints, faults and
evictions per node (per zone, expandable, beyond `NODE_ROWS` nodes), pods per zone, evictions and
pending pods over time, why the pods still pending are pending, and a filterable timeline table
whose records travel packed (`report_data.pack_records`) and are unpacked by the page."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.core.durations import format_duration
from kubetaint.sim.report_assets import CSS, SCRIPT
from kubetaint.sim.report_data import (
    NO_ZONE,
    NodeMarks,
    evictions_per_interval,
    interval_for,
    interval_name,
    node_zones,
    pack_records,
    pending_band,
    pending_reasons,
    pending_series,
    pods_per_zone,
    zone_mark_counts,
    zone_order,
)
from kubetaint.sim.report_svg import (
    BUCKETS,
    band,
    bars,
    legend,
    node_rows,
    sorted_nodes,
    symbols,
    zone_lanes,
    zone_lines,
)

#: Up to this many nodes with marks, the chart has a row per node; beyond, a lane per zone and
#: kind of mark, with each zone's first `NODES_PER_ZONE` nodes under a disclosure.
NODE_ROWS = 150
NODES_PER_ZONE = 40
#: Pod names listed per group of pending pods.
PENDING_NAMES = 20

_SUMMARY_LABELS = {
    "scheduled": "scheduled",
    "failedScheduling": "failed scheduling attempts",
    "evicted": "evicted",
    "preempted": "preempted",
    "pendingAtEnd": "pending at the end",
}


def _summary(doc: Mapping[str, Any]) -> str:
    cards = []
    for key, value in (doc.get("summary") or {}).items():
        shown = f"{value:,}" if isinstance(value, int) else str(value)
        label = _SUMMARY_LABELS.get(key, key)
        cards.append(f'<div class="card"><b>{html.escape(shown)}</b><span>{html.escape(label)}</span></div>')
    return f'<div class="cards">{"".join(cards)}</div>'


def _node_chart(doc: Mapping[str, Any], end: float) -> str:
    zones = node_zones(doc)
    marks = NodeMarks.of(doc.get("timeline") or [])
    for node in marks.by_node:
        zones.setdefault(node, NO_ZONE)
    order = zone_order(zones.values())
    marked = sorted_nodes(list(marks.by_node), zones, order)
    if not marked:
        return "<p>No taint changes, faults or evictions.</p>"
    if len(marked) <= NODE_ROWS:
        return legend() + node_rows(marked, marks, zones, end, label_zone=True)
    counts = zone_mark_counts(marks, zones, end, BUCKETS)
    parts = [
        legend(),
        f"<p>{len(marked):,} nodes have marks: one lane per zone and kind of mark, each mark standing for "
        "the records of its interval (more opaque: more records). Open a zone for its nodes.</p>",
        zone_lanes(counts, [z for z in order if z in counts], end),
    ]
    for zone in order:
        members = [n for n in marked if zones.get(n) == zone]
        if not members:
            continue
        total = sum(1 for z in zones.values() if z == zone)
        shown = members[:NODES_PER_ZONE]
        more = (
            f"<p>{len(members) - len(shown):,} more nodes of {html.escape(zone)} have marks: "
            "<code>-o json</code> has every record.</p>"
            if len(members) > len(shown)
            else ""
        )
        parts.append(
            f'<details class="zone"><summary>{html.escape(zone)}: {total:,} nodes, '
            f"{len(members):,} with marks</summary>"
            f"{node_rows(shown, marks, zones, end, label_zone=False)}{more}</details>"
        )
    return "".join(parts)


def _why(explained: Mapping[str, Any]) -> str:
    """One explained pod of a group of pending pods: the nodes each plugin refused it, and the
    toleration that would tolerate each untolerated taint."""
    rows = []
    for verdict in explained.get("verdicts") or []:
        names = ", ".join(html.escape(str(n)) for n in verdict.get("names") or [])
        if int(verdict.get("nodes") or 0) > len(verdict.get("names") or []):
            names += ", …"
        reason = html.escape(str(verdict.get("reason")))
        taint = verdict.get("taint")
        if isinstance(taint, Mapping):
            value = f"={taint['value']}" if taint.get("value") else ""
            spelled = f"{taint.get('key')}{value}:{taint.get('effect')}"
            reason += f" <code>{html.escape(spelled)}</code>"
        toleration = verdict.get("toleration")
        fix = (
            "<code>" + html.escape(json.dumps(toleration, separators=(", ", ": "))) + "</code>"
            if toleration
            else ""
        )
        rows.append(
            f"<tr><td>{html.escape(str(verdict.get('plugin')))}</td>"
            f"<td>{int(verdict.get('nodes') or 0):,}</td><td>{reason}</td><td>{names}</td><td>{fix}</td></tr>"
        )
    others = int(explained.get("pods") or 1) - 1
    who = html.escape(str(explained.get("pod")))
    also = f" (and {others:,} more with the same message)" if others else ""
    feasible = int(explained.get("feasible") or 0)
    now = f"; {feasible:,} node(s) would take it now" if feasible else ""
    return (
        f'<details class="why" open><summary>Why <b>{who}</b>{also} is pending, plugin by plugin{now}'
        "</summary>"
        '<table class="verdicts"><thead><tr><th>plugin</th><th>nodes</th><th>reason</th><th>which</th>'
        f"<th>toleration that tolerates the taint</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "</details>"
    )


def _pending_section(doc: Mapping[str, Any], explained: Sequence[Mapping[str, Any]] = ()) -> str:
    groups = pending_reasons(doc)
    if not groups:
        return "<p>No pod is pending at the end.</p>"
    rows = []
    for message, pods in groups:
        names = ", ".join(html.escape(p) for p in pods[:PENDING_NAMES])
        if len(pods) > PENDING_NAMES:
            names += f" and {len(pods) - PENDING_NAMES:,} more"
        rows.append(f"<tr><td>{len(pods):,}</td><td>{html.escape(message)}</td><td>{names}</td></tr>")
    return (
        "<p>Grouped by the scheduler's last message for them, which names each plugin's reason; "
        + (
            "below, one pod of each group is explained plugin by plugin on the final nodes, as "
            "<code>kubetaint explain</code> explains it.</p>"
            if explained
            else "<code>kubetaint explain</code> shows the verdicts per node.</p>"
        )
        + '<table class="pending-pods"><thead><tr><th>pods</th><th>scheduler message</th><th>which</th>'
        "</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>" + "".join(_why(one) for one in explained)
    )


def _timeline_section(doc: Mapping[str, Any]) -> str:
    records = doc.get("timeline") or []
    reasons = sorted({str(r.get("reason") or "") for r in records})
    kinds = sorted({str(r.get("kind") or "") for r in records})
    options = "".join(f'<option value="{html.escape(r)}">{html.escape(r)}</option>' for r in reasons)
    kind_options = "".join(f'<option value="{html.escape(k)}">{html.escape(k)}</option>' for k in kinds)
    return (
        '<div class="filters">'
        '<label>reason <select id="f-reason"><option value="">any</option>'
        f"{options}</select></label>"
        f'<label>kind <select id="f-kind"><option value="">any</option>{kind_options}</select></label>'
        '<label>contains <input id="f-text" type="search" placeholder="pod, node or message"></label>'
        f'<span id="f-count" aria-live="polite">{len(records):,} records</span></div>'
        '<table class="timeline"><thead><tr><th>time</th><th>reason</th><th>object</th><th>node</th>'
        '<th>message</th></tr></thead><tbody id="rows"></tbody></table>'
        '<button id="more" type="button" hidden>Show more</button>'
        "<noscript><p>The table needs scripts; <code>-o json</code> or <code>-o table</code> "
        "has every record.</p></noscript>"
        f'<script type="application/octet-stream" id="records">{pack_records(records)}</script>'
    )


def render_html(doc: Mapping[str, Any], pending: Sequence[Mapping[str, Any]] = ()) -> str:
    """The report of the run `doc`; `pending` (`pending_explain.explain_pending(doc)`) explains its
    pods still pending, plugin by plugin."""
    end = float(doc.get("end") or 0.0)
    zones = node_zones(doc)
    order = zone_order(zones.values())
    title = html.escape(f"kubetaint simulate: {doc.get('scenario')}")
    interval = interval_for(end)
    per_zone = pods_per_zone(doc, zones, end, BUCKETS)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{CSS}</style></head><body>{symbols()}"
        f"<h1>{title}</h1><p>seed {html.escape(str(doc.get('seed')))}, simulated {format_duration(end)}, "
        f"{len(zones):,} nodes at the end</p>"
        f"<h2>Summary</h2>{_summary(doc)}"
        f'<h2 id="marks">Taints, faults and evictions by node</h2>{_node_chart(doc, end)}'
        f'<h2 id="zones">Pods on each zone\'s nodes</h2>{zone_lines(per_zone, order, end, "pods per zone")}'
        f'<h2 id="evictions">Evictions per {interval_name(interval)}</h2>'
        f"{bars(evictions_per_interval(doc.get('timeline') or [], end, interval), interval, end)}"
        f'<h2 id="pending">Pending pods</h2>{band(pending_band(pending_series(doc), end, BUCKETS), end)}'
        f'<h2 id="still-pending">Pods still pending</h2>{_pending_section(doc, pending)}'
        f'<h2 id="timeline">Timeline</h2>{_timeline_section(doc)}'
        f"<script>{SCRIPT}</script></body></html>\n"
    )
