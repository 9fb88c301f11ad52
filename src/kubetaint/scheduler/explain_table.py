"""Table rendering of the explain JSON: one block per pod, one row per node (NODE FEASIBLE REASON SCORE).

Unless `all_rows`, infeasible nodes with the same reason collapse into one row naming a few of them,
and only the ten best feasible nodes are listed, so the output stays readable at 5,000 nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_FEASIBLE_ROWS = 10
MAX_NAMES = 3


def _reason(node: Mapping[str, Any]) -> str:
    verdict = node.get("filter") or {}
    text = f"{verdict.get('plugin', '')}: {verdict.get('reason', '')}"
    taint = node.get("untoleratedTaint")
    if taint:
        value = f"={taint['value']}" if taint.get("value") else ""
        text += f" ({taint['key']}{value}:{taint['effect']})"
    return text


def _rows(pod: Mapping[str, Any], all_rows: bool) -> list[tuple[str, str, str, str]]:
    chosen = pod.get("node")
    rows: list[tuple[str, str, str, str]] = []
    feasible = [n for n in pod["nodes"] if n["feasible"]]
    feasible.sort(key=lambda n: (n.get("name") != chosen, -(n.get("totalScore") or -1)))
    shown = feasible if all_rows else feasible[:MAX_FEASIBLE_ROWS]
    for n in shown:
        score = str(n["totalScore"]) if "totalScore" in n else "-"
        mark = "chosen" if n["name"] == chosen else ""
        rows.append((n["name"], "yes", mark, score))
    if len(shown) < len(feasible):
        rows.append((f"({len(feasible) - len(shown)} more)", "yes", "", ""))
    infeasible = [n for n in pod["nodes"] if not n["feasible"]]
    if all_rows:
        rows += [(n["name"], "no", _reason(n), "") for n in infeasible]
        return rows
    groups: dict[str, list[str]] = {}
    for n in infeasible:
        groups.setdefault(_reason(n), []).append(n["name"])
    for reason, names in groups.items():
        label = ", ".join(names[:MAX_NAMES])
        if len(names) > MAX_NAMES:
            label += f" (+{len(names) - MAX_NAMES} more)"
        rows.append((label, "no", reason, ""))
    return rows


def render_table(document: Mapping[str, Any], all_rows: bool = False) -> str:
    blocks: list[str] = []
    for pod in document.get("pods", []):
        head = f"Pod {pod['namespace']}/{pod['name']}: {pod['result']}"
        if pod.get("node"):
            head += f" on {pod['node']}"
        lines = [head, f"  {pod['message']}"]
        if pod.get("nominatedNode"):
            victims = ", ".join(pod.get("victims", [])) or "none"
            lines.append(f"  nominated node {pod['nominatedNode']} after preempting: {victims}")
        for n in pod["nodes"]:
            if n.get("suggestedToleration") and not n["feasible"]:
                tol = n["suggestedToleration"]
                value = f", value: {tol['value']}" if "value" in tol else ""
                lines.append(
                    f"  to tolerate {n['name']}'s taint add: {{key: {tol['key']}, operator: {tol['operator']}"
                    f"{value}, effect: {tol['effect']}}}"
                )
                break
        rows = [("NODE", "FEASIBLE", "REASON", "SCORE"), *_rows(pod, all_rows)]
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        for r in rows:
            lines.append(f"  {r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}".rstrip())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
