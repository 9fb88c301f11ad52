"""Why the pods still pending at the end of a run are pending, plugin by plugin: what
`kubetaint explain` reports for one pod of each group of `report_data.pending_reasons` (the pods
the scheduler last refused with the same message), on the run's final nodes and bound pods.

The HTML report shows it under "Pods still pending". Each node's verdict is aggregated by plugin
and reason (how many nodes, the first few by name) with the toleration that would tolerate each
untolerated taint, so the section stays small at thousands of nodes. The explanation sees the
run's final Nodes and Pods only, not its PodDisruptionBudgets, Services or workloads: those only
score nodes and choose preemption victims, which the filter verdicts shown do not depend on.
The groups' pods are explained together, on one scheduler built once, in scheduling order: one
that would fit now (a pod the scheduler has not retried yet) takes its node's room from those
after it, as `kubetaint explain` places pods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.features import FeatureGates
from kubetaint.scheduler.explain import ExplainError, explain
from kubetaint.sim.report_data import natural_key, pending_reasons

JSON = dict[str, Any]
#: Node names listed per verdict.
NODE_NAMES = 5
#: Groups explained (the largest first).
GROUPS = 20


def explain_pending(
    doc: Mapping[str, Any],
    *,
    config: Mapping[str, Any] | None = None,
    feature_gates: FeatureGates | None = None,
) -> list[JSON]:
    """Per group of pending pods (largest first, at most GROUPS): the pod explained, its group's
    message and size, and its verdicts: `[{"plugin", "reason", "nodes", "names", "taint"?,
    "toleration"?}]`, largest first; `feasible` counts the nodes that would take it now."""
    groups = pending_reasons(doc)[:GROUPS]
    if not groups:
        return []
    final = doc.get("final") or {}
    nodes = [n for n in final.get("nodes") or [] if isinstance(n, Mapping)]
    pods = [p for p in final.get("pods") or [] if isinstance(p, Mapping)]
    if not nodes:
        return []
    bound = [p for p in pods if (p.get("spec") or {}).get("nodeName")]
    by_name = {_name(p): p for p in pods}
    chosen = [(message, members, by_name.get(_key(members[0]))) for message, members in groups]
    explained = [(message, members, pod) for message, members, pod in chosen if pod is not None]
    try:  # one scheduler for every group: the final cluster is built once
        document = explain(
            [*nodes, *bound, *(pod for _, _, pod in explained)], config=config, feature_gates=feature_gates
        )
    except ExplainError:
        return []
    reports = {f"{r['namespace']}/{r['name']}": r for r in document["pods"]}
    out: list[JSON] = []
    for message, members, pod in explained:
        report = reports.get(_name(pod))
        if report is None:
            continue
        out.append(
            {
                "pod": members[0],
                "pods": len(members),
                "message": message,
                "feasible": sum(1 for n in report["nodes"] if n.get("feasible")),
                "verdicts": _verdicts(report["nodes"]),
            }
        )
    return out


def _key(member: str) -> str:
    """`pending_reasons`' name of a pod (`ns/name`, or `name` without a namespace) as `_name`'s."""
    return member if "/" in member else f"/{member}"


def _name(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def _verdicts(nodes: list[JSON]) -> list[JSON]:
    """The refusing nodes by (plugin, reason, toleration), largest first."""
    grouped: dict[tuple[str, str, str], JSON] = {}
    for node in nodes:
        refusal = node.get("filter")
        if not refusal:
            continue
        toleration = node.get("suggestedToleration")
        key = (str(refusal.get("plugin")), str(refusal.get("reason")), repr(toleration))
        entry = grouped.setdefault(key, {"plugin": key[0], "reason": key[1], "nodes": 0, "names": []})
        if toleration is not None:
            entry["taint"], entry["toleration"] = node.get("untoleratedTaint"), toleration
        entry["nodes"] += 1
        entry["names"].append(str(node.get("name")))
    for entry in grouped.values():
        entry["names"] = sorted(entry["names"], key=natural_key)[:NODE_NAMES]
    return sorted(grouped.values(), key=lambda e: (-e["nodes"], e["plugin"], e["reason"]))
