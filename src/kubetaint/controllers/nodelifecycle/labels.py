"""Node label reconciliation (mirrors reconcileNodeLabels and labelReconcileInfo in
node_lifecycle_controller.go): the beta OS/arch labels follow the stable ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.store.interface import Store

#: (primary key, secondary key, ensure the secondary exists)
LABEL_RECONCILE_INFO = (
    ("kubernetes.io/os", "beta.kubernetes.io/os", True),
    ("kubernetes.io/arch", "beta.kubernetes.io/arch", True),
)


def labels_to_update(labels: Mapping[str, str] | None) -> dict[str, str]:
    """The secondary labels to set so they match their primary."""
    if not labels:
        return {}
    result: dict[str, str] = {}
    for primary, secondary, ensure in LABEL_RECONCILE_INFO:
        if primary not in labels:
            continue
        stale = secondary in labels and labels[secondary] != labels[primary]
        missing = secondary not in labels and ensure
        if stale or missing:
            result[secondary] = labels[primary]
    return result


def reconcile_node_labels(store: Store, node: Mapping[str, Any] | None) -> None:
    """Write the missing or stale secondary labels (re-reading the node on conflict)."""
    if node is None:
        return
    wanted = labels_to_update((node.get("metadata") or {}).get("labels"))
    if not wanted:
        return
    name = str((node.get("metadata") or {}).get("name") or "")
    for attempt in range(5):
        current = store.get("nodes", "", name) if attempt else node
        meta = current.get("metadata") or {}
        labels = {**(meta.get("labels") or {}), **wanted}
        try:
            store.update("nodes", {**current, "metadata": {**meta, "labels": labels}})
            return
        except StatusError as err:
            if err.code != 409:
                raise
