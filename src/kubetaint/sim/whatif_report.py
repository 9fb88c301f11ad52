"""Renderers of the whatif JSON document: text (rich tables) and a self-contained HTML page with
the before/after charts of its two runs."""

from __future__ import annotations

import html
import io
import json
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from kubetaint.core.durations import format_duration
from kubetaint.sim.report_assets import CSS
from kubetaint.sim.report_data import (
    evictions_per_interval,
    interval_for,
    interval_name,
    node_zones,
    pending_band,
    pending_series,
    pods_per_zone,
    zone_order,
)
from kubetaint.sim.report_svg import BUCKETS, band, bars, zone_lines
from kubetaint.store.interface import JSON


def dumps(document: Mapping[str, Any]) -> str:
    """The stable JSON form (sorted keys, two-space indent)."""
    return json.dumps(document, indent=2, sort_keys=True)


def _when(entry: Mapping[str, Any]) -> str:
    return "at once" if entry["when"] == "at once" else f"after {entry['t']:g}s"


def _lands(entry: Mapping[str, Any]) -> str:
    replacement = entry.get("replacement")
    if replacement is None:
        return "not recreated (no owner recreates it)" if not entry.get("owner") else "not recreated"
    if replacement.get("deleted"):
        return f"{replacement['name']}: deleted again"
    if replacement.get("pending"):
        return f"{replacement['name']}: Pending"
    return f"{replacement['name']} → {replacement['node']}"


def _pending_rows(pod: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for node in pod.get("nodes") or []:
        taint = node.get("untoleratedTaint")
        fix = node.get("suggestedToleration")
        rows.append(
            [
                node["name"],
                str(node.get("plugin") or ""),
                str(node.get("reason") or ""),
                _taint_text(taint) if taint else "",
                json.dumps(fix, sort_keys=True) if fix else "",
            ]
        )
    return rows


def _taint_text(taint: Mapping[str, Any]) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint['key']}{value}:{taint['effect']}"


def render_text(document: JSON) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=140, color_system=None, force_terminal=False)
    change = document["change"]
    summary = document["summary"]
    console.print(
        f"whatif: {change['command']}  (snapshot {document['snapshot']['name']}, for {document['for']:g}s)",
        soft_wrap=True,
    )
    console.print(
        f"{summary['evictedAtOnce']} pod(s) evicted at once, {summary['evictedLater']} later, "
        f"{summary['notEvicted']} stay, {summary['pending']} Pending at the end "
        f"(without the change: {summary['pendingWithout']}); {summary['inFlight']} in-flight eviction(s) "
        "happen either way",
        soft_wrap=True,
    )
    _table(
        console,
        "Evicted by the change",
        ["POD", "NODE", "WHEN", "OWNER", "REPLACEMENT"],
        [
            [f"{e['namespace']}/{e['name']}", e["node"], _when(e), e.get("owner") or "-", _lands(e)]
            for e in document["evictions"]
        ],
    )
    _table(
        console,
        "In-flight evictions (happen without the change too)",
        ["POD", "NODE", "WHEN", "WITHOUT", "REPLACEMENT"],
        [
            [f"{e['namespace']}/{e['name']}", e["node"], _when(e), f"{e['tWithout']:g}s", _lands(e)]
            for e in document["inFlight"]
        ],
    )
    _table(
        console,
        "Not evicted (still on the changed nodes at the end)",
        ["POD", "NODE", "OWNER"],
        [[f"{e['namespace']}/{e['name']}", e["node"], e.get("owner") or "-"] for e in document["notEvicted"]],
    )
    _table(
        console,
        "DaemonSet pods",
        ["POD", "NODE", "DAEMONSET", "OUTCOME"],
        [
            [f"{e['namespace']}/{e['name']}", e["node"], e["daemonSet"], e["outcome"]]
            for e in document["daemonSets"]
        ],
    )
    _table(
        console,
        "Drain blocked by a PodDisruptionBudget",
        ["POD", "MESSAGE"],
        [[f"{e['namespace']}/{e['name']}", e["message"]] for e in document["pdbBlocked"]],
    )
    for pod in document["pending"]:
        console.print(f"\nPending {pod['namespace']}/{pod['name']}: {pod['message']}", soft_wrap=True)
        _table(
            console,
            None,
            ["NODE", "PLUGIN", "REASON", "UNTOLERATED TAINT", "SUGGESTED TOLERATION"],
            _pending_rows(pod),
        )
    for note in document["notes"]:
        console.print(f"\nnote: {note}", soft_wrap=True)
    # (prose lines are never folded; table cells are padded to their column: no line ends in spaces)
    return "".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())


def _table(console: Console, title: str | None, headers: list[str], rows: list[list[str]]) -> None:
    if not rows:
        return
    if title:
        console.print(f"\n{title}")
    table = Table(show_edge=False, box=None, pad_edge=False)
    for header in headers:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _before_after(runs: tuple[Mapping[str, Any], Mapping[str, Any]]) -> str:
    """Evictions, pods per zone and pending pods of the run without and the run with the change,
    each pair drawn on the same scales' time axis."""
    without, with_change = runs
    end = float(with_change.get("end") or without.get("end") or 0.0)
    interval = interval_for(end)
    zones = node_zones(with_change) or node_zones(without)
    order = zone_order(zones.values())
    parts = [f"<h2>Evictions per {interval_name(interval)}</h2>"]
    for label, doc in (("without the change", without), ("with the change", with_change)):
        series = evictions_per_interval(doc.get("timeline") or [], end, interval)
        total = sum(sum(values) for values in series.values())
        parts.append(f"<h3>{label}: {total:,}</h3>{bars(series, interval, end)}")
    parts.append("<h2>Pods on each zone's nodes</h2>")
    for label, doc in (("without the change", without), ("with the change", with_change)):
        series = pods_per_zone(doc, node_zones(doc) or zones, end, BUCKETS)
        parts.append(f"<h3>{label}</h3>{zone_lines(series, order, end, 'pods per zone ' + label)}")
    parts.append("<h2>Pending pods</h2>")
    for label, doc in (("without the change", without), ("with the change", with_change)):
        parts.append(f"<h3>{label}</h3>{band(pending_band(pending_series(doc), end, BUCKETS), end)}")
    return "".join(parts)


_SUMMARY_LABELS = {
    "evictedAtOnce": "evicted at once",
    "evictedLater": "evicted later",
    "inFlight": "in-flight evictions",
    "notEvicted": "not evicted on the changed nodes",
    "pending": "pending with the change",
    "pendingWithout": "pending without it",
    "pdbBlocked": "drain steps blocked by a PodDisruptionBudget",
}


def render_html(document: JSON, runs: tuple[Mapping[str, Any], Mapping[str, Any]] | None = None) -> str:
    """A self-contained HTML page of the same sections; with `runs` (the timeline documents of
    the run without and the run with the change, `whatif.compare`), their charts side by side."""
    esc = html.escape
    title = f"kubetaint whatif: {document['change']['command']}"
    cards = "".join(
        f'<div class="card"><b>{int(value):,}</b><span>{esc(_SUMMARY_LABELS.get(key, key))}</span></div>'
        for key, value in document["summary"].items()
    )
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>whatif: <code>{esc(document['change']['command'])}</code></h1>",
        f"<p>snapshot {esc(str(document['snapshot']['name']))}, for {format_duration(document['for'])}, "
        f"seed {document['seed']}</p>",
        f'<h2>Summary</h2><div class="cards">{cards}</div>',
    ]
    if runs is not None:
        parts.append(_before_after(runs))

    def section(title: str, headers: list[str], rows: list[list[str]]) -> None:
        if not rows:
            return
        parts.append(f"<h2>{esc(title)}</h2><table><thead><tr>")
        parts.extend(f"<th>{esc(h)}</th>" for h in headers)
        parts.append("</tr></thead><tbody>")
        for row in rows:
            parts.append("<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in row) + "</tr>")
        parts.append("</tbody></table>")

    section(
        "Evicted by the change",
        ["pod", "node", "when", "owner", "replacement"],
        [
            [f"{e['namespace']}/{e['name']}", e["node"], _when(e), e.get("owner") or "-", _lands(e)]
            for e in document["evictions"]
        ],
    )
    section(
        "In-flight evictions",
        ["pod", "node", "when", "without the change", "replacement"],
        [
            [f"{e['namespace']}/{e['name']}", e["node"], _when(e), f"{e['tWithout']:g}s", _lands(e)]
            for e in document["inFlight"]
        ],
    )
    section(
        "Not evicted",
        ["pod", "node", "owner"],
        [[f"{e['namespace']}/{e['name']}", e["node"], e.get("owner") or "-"] for e in document["notEvicted"]],
    )
    section(
        "DaemonSet pods",
        ["pod", "node", "daemonset", "outcome"],
        [
            [f"{e['namespace']}/{e['name']}", e["node"], e["daemonSet"], e["outcome"]]
            for e in document["daemonSets"]
        ],
    )
    section(
        "Drain blocked by a PodDisruptionBudget",
        ["pod", "message"],
        [[f"{e['namespace']}/{e['name']}", e["message"]] for e in document["pdbBlocked"]],
    )
    for pod in document["pending"]:
        section(
            f"Pending {pod['namespace']}/{pod['name']}: {pod['message']}",
            ["node", "plugin", "reason", "untolerated taint", "suggested toleration"],
            _pending_rows(pod),
        )
    parts.extend(f"<p><em>{esc(note)}</em></p>" for note in document["notes"])
    parts.append("</body></html>\n")
    return "".join(parts)
