"""`kubetaint simulate -o table`: the timeline as a readable chronological table."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from kubetaint.sim.durations import format_duration


def _object(record: Mapping[str, Any]) -> str:
    kind = str(record.get("kind") or "")
    name = str(record.get("name") or "")
    if record.get("namespace"):
        return f"{kind.lower()}/{record['namespace']}/{name}"
    return f"{kind.lower()}/{name}" if kind not in ("Command", "Scenario") else name


def render_table(doc: Mapping[str, Any], *, width: int = 160) -> str:
    """Time, reason, object, node and message per record, then the summary."""
    table = Table(box=None, show_edge=False, pad_edge=False, header_style="bold")
    for column in ("TIME", "REASON", "OBJECT", "NODE", "MESSAGE"):
        table.add_column(column, overflow="fold")
    for record in doc.get("timeline") or []:
        table.add_row(
            format_duration(float(record["t"])),
            str(record["reason"]),
            _object(record),
            str(record.get("node") or ""),
            str(record.get("message") or ""),
        )
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, no_color=True, highlight=False, soft_wrap=False)
    console.print(
        f"scenario {doc.get('scenario')} (seed {doc.get('seed')}), {format_duration(float(doc['end']))}"
    )
    console.print(table)
    summary = doc.get("summary") or {}
    console.print("summary: " + ", ".join(f"{k} {v}" for k, v in summary.items()))
    return "".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())
