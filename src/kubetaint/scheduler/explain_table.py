"""Table rendering of the explain JSON: one block per pod, one row per node, with one column per
Filter plugin that rejected some node (its reason where it rejected the node), one per Score plugin
(the node's normalised score) and the weighted total.

Unless `all_rows`, infeasible nodes with the same verdict collapse into one row naming a few of
them, and only the ten best feasible nodes are listed, so the output stays readable at 5,000 nodes.
The warnings of the document (the configuration) and of each pod (fields the scheduler does not
model) come before the rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MAX_FEASIBLE_ROWS = 10
MAX_NAMES = 3


def _reason(node: Mapping[str, Any]) -> str:
    verdict = node.get("filter") or {}
    text = str(verdict.get("reason", ""))
    taint = node.get("untoleratedTaint")
    if taint:
        value = f"={taint['value']}" if taint.get("value") else ""
        text += f" ({taint['key']}{value}:{taint['effect']})"
    return text


def _plugin(node: Mapping[str, Any]) -> str:
    return str((node.get("filter") or {}).get("plugin", ""))


def _columns(nodes: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """(Filter plugins that rejected some node, Score plugins), in the order first met."""
    filters: list[str] = []
    scores: list[str] = []
    for n in nodes:
        if not n["feasible"]:
            plugin = _plugin(n)
            if plugin not in filters:
                filters.append(plugin)
        for name in n.get("scores") or {}:
            if name not in scores:
                scores.append(name)
    return filters, scores


def _rows(pod: Mapping[str, Any], all_rows: bool, filters: list[str], scores: list[str]) -> list[list[str]]:
    chosen = pod.get("node")
    rows: list[list[str]] = []
    blank_filters = [""] * len(filters)
    feasible = [n for n in pod["nodes"] if n["feasible"]]
    feasible.sort(key=lambda n: (n.get("name") != chosen, -(n.get("totalScore") or -1)))
    shown = feasible if all_rows else feasible[:MAX_FEASIBLE_ROWS]
    for n in shown:
        per = n.get("scores") or {}
        total = str(n["totalScore"]) if "totalScore" in n else "-"
        mark = "chosen" if n["name"] == chosen else "yes"
        rows.append(
            [n["name"], mark, *blank_filters, *(str(per[s]) if s in per else "-" for s in scores), total]
        )
    if len(shown) < len(feasible):
        rows.append(
            [f"({len(feasible) - len(shown)} more)", "yes", *blank_filters, *([""] * len(scores)), ""]
        )
    infeasible = [n for n in pod["nodes"] if not n["feasible"]]

    def row(label: str, node: Mapping[str, Any]) -> list[str]:
        cells = ["" for _ in filters]
        cells[filters.index(_plugin(node))] = _reason(node)
        return [label, "no", *cells, *([""] * len(scores)), ""]

    if all_rows:
        rows += [row(n["name"], n) for n in infeasible]
        return rows
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for n in infeasible:
        groups.setdefault((_plugin(n), _reason(n)), []).append(n)
    for members in groups.values():
        names = [m["name"] for m in members]
        label = ", ".join(names[:MAX_NAMES])
        if len(names) > MAX_NAMES:
            label += f" (+{len(names) - MAX_NAMES} more)"
        rows.append(row(label, members[0]))
    return rows


#: The table of a report without pods (every pod given is bound, or there is none: a workload's
#: pods exist only once its controller creates them, which `kubetaint simulate` runs).
NO_PODS = "no unbound pods to explain"


def render_table(document: Mapping[str, Any], all_rows: bool = False) -> str:
    """The report as text: per pod, its verdict and a row per node (or group of nodes alike)."""
    blocks: list[str] = []
    head_lines = [f"warning: {w}" for w in document.get("warnings") or ()]
    for pod in document.get("pods", []):
        head = f"Pod {pod['namespace']}/{pod['name']}: {pod['result']}"
        if pod.get("node"):
            head += f" on {pod['node']}"
        lines = [head, f"  {pod['message']}"]
        lines += [f"  warning: {w}" for w in pod.get("warnings") or ()]
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
        filters, scores = _columns(pod["nodes"])
        header = ["NODE", "FEASIBLE", *filters, *(f"{s} score" for s in scores), "TOTAL"]
        rows = [header, *_rows(pod, all_rows, filters, scores)]
        widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
        for r in rows:
            cells = [f"{c:<{widths[i]}}" for i, c in enumerate(r[:-1])]
            lines.append(("  " + "  ".join([*cells, r[-1]])).rstrip())
        blocks.append("\n".join(lines))
    if not blocks:
        blocks.append(NO_PODS)
    text = "\n\n".join(blocks) + "\n"
    return "\n".join(head_lines) + "\n" + text if head_lines else text
