"""`kubetaint simulate -o html`: a self-contained report (inline CSS and SVG, no scripts from the
network): the summary, an eviction timeline per zone and node, pending pods over time, and the
full chronological table."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from kubetaint.sim.durations import format_duration

_WIDTH = 900
_LEFT = 170
_ROW = 16
_MARKS = {
    "TaintAdded": ("#d98b00", "taint added"),
    "TaintRemoved": ("#5a9e3a", "taint removed"),
    "Evicted": ("#c0392b", "evicted"),
    "Deleted": ("#7f8c8d", "pod deleted"),
    "Eviction": ("#c0392b", "taint manager eviction"),
    "Fault": ("#8e44ad", "fault"),
    "NodeNotReady": ("#2c3e50", "node not ready"),
}
_CSS = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;text-align:left;vertical-align:top}
tr:nth-child(even){background:#f4f4f4}.sum td{font-size:14px;padding:4px 12px}
svg text{font-size:11px;font-family:system-ui,sans-serif}.legend span{margin-right:14px;font-size:12px}
"""


def _x(t: float, end: float) -> float:
    return _LEFT + (_WIDTH - _LEFT - 10) * (t / end if end > 0 else 0.0)


def _node_of(record: Mapping[str, Any]) -> str:
    if record.get("kind") == "Node":
        return str(record.get("name") or "")
    return str(record.get("node") or "")


def _mark(record: Mapping[str, Any]) -> str | None:
    reason = str(record.get("reason") or "")
    if reason == "TaintManagerEviction":
        return "Eviction" if str(record.get("message", "")).startswith("Marking") else None
    if reason == "Deleted" and record.get("kind") != "Pod":
        return None
    return reason if reason in _MARKS else None


def eviction_svg(doc: Mapping[str, Any]) -> str:
    """Rows per node (grouped by zone) with a mark per taint change, fault and eviction."""
    end = float(doc.get("end") or 0.0)
    zones = {
        str(n["metadata"]["name"]): str(
            (n["metadata"].get("labels") or {}).get("topology.kubernetes.io/zone") or ""
        )
        for n in (doc.get("final") or {}).get("nodes") or []
    }
    rows: dict[str, list[tuple[float, str]]] = {}
    for record in doc.get("timeline") or []:
        mark = _mark(record)
        node = _node_of(record)
        if mark is None or not node:
            continue
        rows.setdefault(node, []).append((float(record["t"]), mark))
    ordered = sorted(rows, key=lambda n: (zones.get(n, ""), n))
    height = max(1, len(ordered)) * _ROW + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{height}">']
    previous_zone = None
    for i, node in enumerate(ordered):
        y = 20 + i * _ROW
        zone = zones.get(node, "")
        if zone != previous_zone:
            parts.append(f'<line x1="0" x2="{_WIDTH}" y1="{y - 3}" y2="{y - 3}" stroke="#bbb"/>')
            previous_zone = zone
        label = html.escape(f"{zone + ' / ' if zone else ''}{node}")
        parts.append(f'<text x="4" y="{y + 9}">{label}</text>')
        for t, mark in rows[node]:
            color, title = _MARKS[mark]
            parts.append(
                f'<rect x="{_x(t, end):.1f}" y="{y}" width="3" height="11" fill="{color}">'
                f"<title>{html.escape(title)} at {format_duration(t)}</title></rect>"
            )
    parts.append(_axis(end, height - 8))
    parts.append("</svg>")
    return "".join(parts)


def _axis(end: float, y: float) -> str:
    ticks = []
    for i in range(6):
        t = end * i / 5
        ticks.append(
            f'<text x="{_x(t, end):.1f}" y="{y}" text-anchor="middle">{format_duration(round(t))}</text>'
        )
    return "".join(ticks)


def pending_series(doc: Mapping[str, Any]) -> list[tuple[float, int]]:
    """(t, pending pods) after every change: created unbound or failing → pending;
    scheduled or deleted → not."""
    pending: set[tuple[str, str]] = set()
    series: list[tuple[float, int]] = [(0.0, 0)]
    for record in doc.get("timeline") or []:
        if record.get("kind") != "Pod":
            continue
        key = (str(record.get("namespace") or ""), str(record.get("name") or ""))
        reason = record["reason"]
        before = len(pending)
        if (reason == "Created" and not record.get("node")) or reason == "FailedScheduling":
            pending.add(key)
        elif reason in ("Scheduled", "Deleted"):
            pending.discard(key)
        if len(pending) != before:
            series.append((float(record["t"]), len(pending)))
    series.append((float(doc.get("end") or 0.0), len(pending)))
    return series


def pending_svg(doc: Mapping[str, Any]) -> str:
    end = float(doc.get("end") or 0.0)
    series = pending_series(doc)
    peak = max((n for _, n in series), default=0) or 1
    height = 160
    plot = height - 30

    def y(n: int) -> float:
        return 10 + plot * (1 - n / peak)

    points = []
    last = 0
    for t, n in series:
        points.append(f"{_x(t, end):.1f},{y(last):.1f}")
        points.append(f"{_x(t, end):.1f},{y(n):.1f}")
        last = n
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{height}">'
        f'<text x="4" y="{y(peak) + 4:.1f}">{peak} pending</text><text x="4" y="{y(0):.1f}">0</text>'
        f'<polyline fill="none" stroke="#2e86c1" stroke-width="2" points="{" ".join(points)}"/>'
        f"{_axis(end, height - 4)}</svg>"
    )


def render_html(doc: Mapping[str, Any]) -> str:
    title = html.escape(f"kubetaint simulate: {doc.get('scenario')}")
    summary = "".join(
        f"<td><b>{html.escape(str(v))}</b> {html.escape(k)}</td>"
        for k, v in (doc.get("summary") or {}).items()
    )
    legend = "".join(
        f'<span><svg width="10" height="10"><rect width="10" height="10" fill="{c}"/></svg> '
        f"{html.escape(t)}</span>"
        for c, t in _MARKS.values()
    )
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{html.escape(str(v))}</td>"
            for v in (
                format_duration(float(r["t"])),
                r["reason"],
                "/".join(str(r[k]) for k in ("kind", "namespace", "name") if r.get(k)),
                r.get("node", ""),
                r.get("message", ""),
            )
        )
        + "</tr>"
        for r in doc.get("timeline") or []
    )
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title><style>{_CSS}</style></head>'
        f"<body><h1>{title}</h1><p>seed {html.escape(str(doc.get('seed')))}, "
        f"simulated {format_duration(float(doc.get('end') or 0))}</p>"
        f'<h2>Summary</h2><table class="sum"><tr>{summary}</tr></table>'
        "<h2>Evictions and taints per zone and node</h2>"
        f'<div class="legend">{legend}</div>{eviction_svg(doc)}'
        f"<h2>Pending pods over time</h2>{pending_svg(doc)}"
        f"<h2>Timeline</h2><table><tr><th>time</th><th>reason</th><th>object</th><th>node</th>"
        f"<th>message</th></tr>{rows}</table></body></html>\n"
    )
