"""Table columns and cells of the workload kinds and RuntimeClasses, as kube-apiserver prints them
(mirrors printDeployment, printReplicaSet, printDaemonSet, printRuntimeClass, layoutContainerCells
of pkg/printers/internalversion/printers.go and metav1.FormatLabelSelector / labels.FormatLabels
of apimachinery). Column descriptions are the SwaggerDoc of the fields they show.
"""

from __future__ import annotations

from typing import Any

from kubetaint.api.jsonview import as_list, meta_of
from kubetaint.apiserver.printing import (
    AGE_COLUMN,
    JSON,
    NAME_COLUMN,
    Cells,
    age_of,
    as_dict,
    col,
    count_of,
    swagger_doc,
)

APPS = "io.k8s.api.apps.v1."
CONTAINERS_COLUMN = col("Containers", "Names of each container in the template.", priority=1)
IMAGES_COLUMN = col("Images", "Images referenced by each container in the template.", priority=1)


def _selector_column(schema: str) -> JSON:
    return col("Selector", swagger_doc(APPS + schema, "selector"), priority=1)


DEPLOYMENT_COLUMNS = [
    NAME_COLUMN,
    col("Ready", "Number of the pod with ready state"),
    col("Up-to-date", swagger_doc(APPS + "DeploymentStatus", "updatedReplicas")),
    col("Available", swagger_doc(APPS + "DeploymentStatus", "availableReplicas")),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    _selector_column("DeploymentSpec"),
]

REPLICA_SET_COLUMNS = [
    NAME_COLUMN,
    col("Desired", swagger_doc(APPS + "ReplicaSetSpec", "replicas"), type_="integer"),
    col("Current", swagger_doc(APPS + "ReplicaSetStatus", "replicas"), type_="integer"),
    col("Ready", swagger_doc(APPS + "ReplicaSetStatus", "readyReplicas"), type_="integer"),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    _selector_column("ReplicaSetSpec"),
]

_DS_STATUS = APPS + "DaemonSetStatus"
DAEMON_SET_COLUMNS = [
    NAME_COLUMN,
    col("Desired", swagger_doc(_DS_STATUS, "desiredNumberScheduled"), type_="integer"),
    col("Current", swagger_doc(_DS_STATUS, "currentNumberScheduled"), type_="integer"),
    col("Ready", swagger_doc(_DS_STATUS, "numberReady"), type_="integer"),
    col("Up-to-date", swagger_doc(_DS_STATUS, "updatedNumberScheduled"), type_="integer"),
    col("Available", swagger_doc(_DS_STATUS, "numberAvailable"), type_="integer"),
    col("Node Selector", swagger_doc("io.k8s.api.core.v1.PodSpec", "nodeSelector")),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    _selector_column("DaemonSetSpec"),
]

#: Upstream describes Handler with ObjectMeta's (absent) "handler" doc: an empty description.
RUNTIME_CLASS_COLUMNS = [NAME_COLUMN, col("Handler", ""), AGE_COLUMN]


def format_labels(labels: Any) -> str:
    """labels.FormatLabels: `k=v` pairs sorted by key, or `<none>`."""
    pairs = as_dict(labels)
    return ",".join(f"{key}={pairs[key]}" for key in sorted(pairs)) or "<none>"


def selector_string(selector: Any) -> str | None:
    """metav1.LabelSelectorAsSelector(...).String(): requirements sorted by key; None for an
    invalid operator (upstream's conversion error)."""
    if not isinstance(selector, dict):
        return ""
    requirements: list[tuple[str, str]] = [
        (str(key), f"{key}={value}") for key, value in as_dict(selector.get("matchLabels")).items()
    ]
    for expr in map(as_dict, as_list(selector.get("matchExpressions"))):
        key, operator = str(expr.get("key", "")), expr.get("operator")
        values = ",".join(sorted(str(v) for v in as_list(expr.get("values"))))
        if operator == "In":
            requirements.append((key, f"{key} in ({values})"))
        elif operator == "NotIn":
            requirements.append((key, f"{key} notin ({values})"))
        elif operator == "Exists":
            requirements.append((key, key))
        elif operator == "DoesNotExist":
            requirements.append((key, f"!{key}"))
        else:
            return None
    return ",".join(text for _, text in sorted(requirements, key=lambda item: item[0]))


def format_label_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: `<error>` for an invalid selector, `<none>` for an empty one."""
    text = selector_string(selector)
    if text is None:
        return "<error>"
    return text or "<none>"


def layout_container_cells(template: Any) -> tuple[str, str]:
    """layoutContainerCells: container names and images of a pod template, comma-joined."""
    containers = [as_dict(c) for c in as_list(as_dict(as_dict(template).get("spec")).get("containers"))]
    return ",".join(str(c.get("name", "")) for c in containers), ",".join(
        str(c.get("image", "")) for c in containers
    )


def _desired(spec: JSON) -> int:
    # The internal type's replicas is defaulted to 1 (SetDefaults_Deployment/_ReplicaSet).
    return count_of(spec["replicas"]) if "replicas" in spec else 1


def print_deployment(obj: JSON, now: float) -> Cells:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    names, images = layout_container_cells(spec.get("template"))
    return [
        meta_of(obj).get("name", ""),
        f"{count_of(status.get('readyReplicas'))}/{_desired(spec)}",
        count_of(status.get("updatedReplicas")),
        count_of(status.get("availableReplicas")),
        age_of(obj, now),
        names,
        images,
        selector_string(spec.get("selector")) or "",
    ]


def print_replica_set(obj: JSON, now: float) -> Cells:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    names, images = layout_container_cells(spec.get("template"))
    return [
        meta_of(obj).get("name", ""),
        _desired(spec),
        count_of(status.get("replicas")),
        count_of(status.get("readyReplicas")),
        age_of(obj, now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


def print_daemon_set(obj: JSON, now: float) -> Cells:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    template = as_dict(spec.get("template"))
    names, images = layout_container_cells(template)
    return [
        meta_of(obj).get("name", ""),
        count_of(status.get("desiredNumberScheduled")),
        count_of(status.get("currentNumberScheduled")),
        count_of(status.get("numberReady")),
        count_of(status.get("updatedNumberScheduled")),
        count_of(status.get("numberAvailable")),
        format_labels(as_dict(template.get("spec")).get("nodeSelector")),
        age_of(obj, now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


def print_runtime_class(obj: JSON, now: float) -> Cells:
    return [meta_of(obj).get("name", ""), obj.get("handler", ""), age_of(obj, now)]
