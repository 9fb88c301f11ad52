"""Table columns and cells of Deployments, ReplicaSets and DaemonSets, as kube-apiserver prints
them (mirrors pkg/printers/internalversion/printers.go printDeployment, printReplicaSet,
printDaemonSet, layoutContainerCells and metav1.FormatLabelSelector)."""

from __future__ import annotations

from typing import Any

from kubetaint.apiserver.printing import (
    AGE_COLUMN,
    JSON,
    NAME_COLUMN,
    Cells,
    age_of,
    as_dict,
    as_list,
    col,
    meta_of,
)

_WIDE = [
    col("Containers", "Names of each container in the template.", priority=1),
    col("Images", "Images referenced by each container in the template.", priority=1),
    col("Selector", "Label selector for pods.", priority=1),
]

DEPLOYMENT_COLUMNS = [
    NAME_COLUMN,
    col("Ready", "Number of the pod with ready state"),
    col(
        "Up-to-date",
        "Total number of non-terminated pods targeted by this deployment that have the desired "
        "template spec.",
    ),
    col(
        "Available",
        "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
    ),
    AGE_COLUMN,
    *_WIDE,
]

REPLICASET_COLUMNS = [
    NAME_COLUMN,
    col("Desired", "Replicas is the number of desired pods.", type_="integer"),
    col("Current", "Replicas is the most recently observed number of replicas.", type_="integer"),
    col(
        "Ready",
        "readyReplicas is the number of pods targeted by this ReplicaSet with a Ready Condition.",
        type_="integer",
    ),
    AGE_COLUMN,
    *_WIDE,
]

DAEMONSET_COLUMNS = [
    NAME_COLUMN,
    col("Desired", "The total number of nodes that should be running the daemon pod.", type_="integer"),
    col("Current", "The number of nodes that are running at least one daemon pod.", type_="integer"),
    col(
        "Ready",
        "The number of nodes that should be running the daemon pod and have one or more ready.",
        type_="integer",
    ),
    col("Up-to-date", "The total number of nodes that are running updated daemon pod", type_="integer"),
    col(
        "Available",
        "The number of nodes that should be running the daemon pod and have one or more available.",
        type_="integer",
    ),
    col("Node Selector", "NodeSelector is a selector which must be true for the pod to fit on a node."),
    AGE_COLUMN,
    *_WIDE,
]


def format_label_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: `k=v` and expressions, sorted by key; `<none>` when empty."""
    sel = as_dict(selector)
    parts: list[tuple[str, str]] = [(str(k), f"{k}={v}") for k, v in as_dict(sel.get("matchLabels")).items()]
    for raw in as_list(sel.get("matchExpressions")):
        expr = as_dict(raw)
        key, op, values = (
            str(expr.get("key")),
            str(expr.get("operator")),
            ",".join(sorted(as_list(expr.get("values")))),
        )
        text = {
            "In": f"{key} in ({values})",
            "NotIn": f"{key} notin ({values})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }
        parts.append((key, text.get(op, key)))
    return ",".join(text for _, text in sorted(parts)) or "<none>"


def _container_cells(template: Any) -> list[str]:
    containers = [as_dict(c) for c in as_list(as_dict(as_dict(template).get("spec")).get("containers"))]
    return [
        ",".join(str(c.get("name", "")) for c in containers),
        ",".join(str(c.get("image", "")) for c in containers),
    ]


def _count(obj: JSON, part: str, field: str) -> int:
    return int(as_dict(obj.get(part)).get(field) or 0)


def print_deployment(d: JSON, now: float) -> Cells:
    spec = as_dict(d.get("spec"))
    desired = int(spec.get("replicas", 1) or 0)
    return [
        meta_of(d).get("name", ""),
        f"{_count(d, 'status', 'readyReplicas')}/{desired}",
        _count(d, "status", "updatedReplicas"),
        _count(d, "status", "availableReplicas"),
        age_of(d, now),
        *_container_cells(spec.get("template")),
        format_label_selector(spec.get("selector")),
    ]


def print_replicaset(rs: JSON, now: float) -> Cells:
    spec = as_dict(rs.get("spec"))
    return [
        meta_of(rs).get("name", ""),
        int(spec.get("replicas", 1) or 0),
        _count(rs, "status", "replicas"),
        _count(rs, "status", "readyReplicas"),
        age_of(rs, now),
        *_container_cells(spec.get("template")),
        format_label_selector(spec.get("selector")),
    ]


def print_daemonset(ds: JSON, now: float) -> Cells:
    spec = as_dict(ds.get("spec"))
    node_selector = as_dict(as_dict(as_dict(spec.get("template")).get("spec")).get("nodeSelector"))
    return [
        meta_of(ds).get("name", ""),
        _count(ds, "status", "desiredNumberScheduled"),
        _count(ds, "status", "currentNumberScheduled"),
        _count(ds, "status", "numberReady"),
        _count(ds, "status", "updatedNumberScheduled"),
        _count(ds, "status", "numberAvailable"),
        ",".join(f"{k}={v}" for k, v in sorted(node_selector.items())) or "<none>",
        age_of(ds, now),
        *_container_cells(spec.get("template")),
        format_label_selector(spec.get("selector")),
    ]
