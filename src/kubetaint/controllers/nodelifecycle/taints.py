"""Store-side helpers of the node lifecycle controller.

Mirrors pkg/controller/controller_utils.go (AddOrUpdateTaintOnNode, RemoveTaintOffNode,
PatchNodeTaints) and pkg/controller/util/node/controller_utils.go (SwapNodeControllerTaint,
MarkPodsNotReady, RecordNodeEvent, RecordNodeStatusChange). Taint writes re-read the node and
retry on conflict up to 5 times (UpdateTaintBackoff.Steps), without sleeping.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, format_time
from kubetaint.core.conditions import (
    add_or_update_taint,
    get_condition,
    remove_taint,
    taint_exists,
    update_pod_condition,
)
from kubetaint.core.matching import taint_to_string
from kubetaint.store.events import EventRecorder
from kubetaint.store.interface import JSON, Store

log = logging.getLogger(__name__)

UPDATE_TAINT_STEPS = 5

TaintEdit = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], tuple[list[Mapping[str, Any]], bool]]


def _patch_taints(store: Store, node_name: str, taints: Sequence[Mapping[str, Any]], edit: TaintEdit) -> None:
    """GET the node, apply `edit` for each taint, write spec.taints with a resourceVersion
    precondition; retry on conflict."""
    for attempt in range(UPDATE_TAINT_STEPS):
        node = store.get("nodes", "", node_name)
        spec = node.get("spec") or {}
        current: Sequence[Mapping[str, Any]] = spec.get("taints") or []
        updated = False
        for taint in taints:
            current, changed = edit(current, taint)
            updated = updated or changed
        if not updated:
            return
        new_spec = {k: v for k, v in spec.items() if k != "taints"}
        if current:
            new_spec["taints"] = [dict(t) for t in current]
        try:
            store.update("nodes", {**node, "spec": new_spec})
            return
        except StatusError as err:
            if err.code != 409 or attempt + 1 == UPDATE_TAINT_STEPS:
                raise


def add_or_update_taint_on_node(store: Store, node_name: str, taints: Sequence[Mapping[str, Any]]) -> None:
    """AddOrUpdateTaintOnNode."""
    if taints:
        _patch_taints(store, node_name, taints, add_or_update_taint)


def remove_taint_off_node(
    store: Store, node_name: str, node: Mapping[str, Any] | None, taints: Sequence[Mapping[str, Any]]
) -> None:
    """RemoveTaintOffNode: no request when `node` (possibly stale) has none of the taints."""
    if not taints:
        return
    if node is not None:
        existing = (node.get("spec") or {}).get("taints") or []
        if not any(taint_exists(existing, taint) for taint in taints):
            return
    _patch_taints(store, node_name, taints, remove_taint)


def swap_node_controller_taint(
    store: Store,
    clock: Clock,
    to_add: Sequence[Mapping[str, Any]],
    to_remove: Sequence[Mapping[str, Any]],
    node: Mapping[str, Any],
) -> bool:
    """SwapNodeControllerTaint: add `to_add` with timeAdded = now, then remove `to_remove`."""
    name = str((node.get("metadata") or {}).get("name") or "")
    stamped = [{**taint, "timeAdded": format_time(clock.now())} for taint in to_add]
    try:
        add_or_update_taint_on_node(store, name, stamped)
    except StatusError as err:
        log.error(
            "unable to taint %s unresponsive Node %r: %s",
            [taint_to_string(t) for t in stamped],
            name,
            err.message,
        )
        return False
    try:
        remove_taint_off_node(store, name, node, to_remove)
    except StatusError as err:
        log.error(
            "unable to remove %s unneeded taint from unresponsive Node %r: %s",
            [taint_to_string(t) for t in to_remove],
            name,
            err.message,
        )
        return False
    return True


def mark_pods_not_ready(
    store: Store,
    clock: Clock,
    recorder: EventRecorder,
    pods: Sequence[Mapping[str, Any]],
    node_name: str,
) -> bool:
    """MarkPodsNotReady: set each pod's Ready condition to False (when it has one) and record a
    Warning `NodeNotReady` "Node is not ready" event. Returns False if some update failed."""

    ok = True
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName") != node_name:
            continue
        ready = get_condition(pod, "Ready")
        if ready is None:
            continue
        new_status, changed = update_pod_condition(
            pod.get("status"), {**ready, "status": "False"}, format_time(clock.now())
        )
        if not changed:
            continue
        try:
            store.update("pods", {**pod, "status": new_status})
        except StatusError as err:
            if err.code == 404:
                continue
            log.info("Failed to update status for pod %s: %s", _pod_key(pod), err.message)
            ok = False
        recorder.event(pod, "Warning", "NodeNotReady", "Node is not ready", kind="Pod")
    return ok


def record_node_event(
    recorder: EventRecorder, node: Mapping[str, Any], event_type: str, reason: str, event: str
) -> None:
    """RecordNodeEvent: message `Node <name> event: <event>`."""
    name = (node.get("metadata") or {}).get("name", "")
    recorder.event(_node_ref(node), event_type, reason, f"Node {name} event: {event}", kind="Node")


def record_node_status_change(recorder: EventRecorder, node: Mapping[str, Any], new_status: str) -> None:
    """RecordNodeStatusChange: Normal `<status>` "Node <name> status is now: <status>"."""
    name = (node.get("metadata") or {}).get("name", "")
    recorder.event(
        _node_ref(node), "Normal", new_status, f"Node {name} status is now: {new_status}", kind="Node"
    )


def _node_ref(node: Mapping[str, Any]) -> JSON:
    meta = node.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": meta.get("name", ""), "uid": meta.get("uid", "")},
    }


def _pod_key(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"
