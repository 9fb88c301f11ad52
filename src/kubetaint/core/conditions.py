"""Node conditions → taints, taint-set edits and pod/node condition updates, as pure functions.

Mirrors pkg/controller/nodelifecycle/node_lifecycle_controller.go (nodeConditionToTaintKeyStatusMap,
taintKeyToNodeConditionMap, the NoExecute templates, the condition part of tryUpdateNodeHealth),
pkg/util/taints/taints.go (TaintExists, TaintSetDiff, AddOrUpdateTaint, RemoveTaint) and
pkg/api/v1/pod/util.go (UpdatePodCondition). Timestamps are RFC 3339 strings chosen by the caller.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.core.matching import NO_EXECUTE, NO_SCHEDULE, match_taint

JSONDict = dict[str, Any]

TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_NODE_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_NODE_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_NODE_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"
TAINT_NODE_PID_PRESSURE = "node.kubernetes.io/pid-pressure"

#: UnreachableTaintTemplate and NotReadyTaintTemplate (mutually exclusive, rate limited per zone).
UNREACHABLE_TAINT_TEMPLATE: Mapping[str, str] = {"key": TAINT_NODE_UNREACHABLE, "effect": NO_EXECUTE}
NOT_READY_TAINT_TEMPLATE: Mapping[str, str] = {"key": TAINT_NODE_NOT_READY, "effect": NO_EXECUTE}

#: nodeConditionToTaintKeyStatusMap: {condition type: {status: taint key}} (NoSchedule taints).
NODE_CONDITION_TO_TAINT_KEY: Mapping[str, Mapping[str, str]] = {
    "Ready": {"False": TAINT_NODE_NOT_READY, "Unknown": TAINT_NODE_UNREACHABLE},
    "MemoryPressure": {"True": TAINT_NODE_MEMORY_PRESSURE},
    "DiskPressure": {"True": TAINT_NODE_DISK_PRESSURE},
    "NetworkUnavailable": {"True": TAINT_NODE_NETWORK_UNAVAILABLE},
    "PIDPressure": {"True": TAINT_NODE_PID_PRESSURE},
}

#: taintKeyToNodeConditionMap.
TAINT_KEY_TO_NODE_CONDITION: Mapping[str, str] = {
    TAINT_NODE_NOT_READY: "Ready",
    TAINT_NODE_UNREACHABLE: "Ready",
    TAINT_NODE_NETWORK_UNAVAILABLE: "NetworkUnavailable",
    TAINT_NODE_MEMORY_PRESSURE: "MemoryPressure",
    TAINT_NODE_DISK_PRESSURE: "DiskPressure",
    TAINT_NODE_PID_PRESSURE: "PIDPressure",
}

#: The conditions tryUpdateNodeHealth sets to Unknown (never NetworkUnavailable).
CONDITIONS_SET_UNKNOWN = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


# taint sets -----------------------------------------------------------------------------------


def taint_exists(taints: Sequence[Mapping[str, Any]] | None, taint: Mapping[str, Any]) -> bool:
    """TaintExists: some taint has the same key and effect."""
    return any(match_taint(taint, existing) for existing in taints or ())


def taint_set_diff(
    new: Sequence[Mapping[str, Any]], old: Sequence[Mapping[str, Any]]
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """TaintSetDiff: (in `new` but not `old`, in `old` but not `new`), by key and effect."""
    to_add = [taint for taint in new if not taint_exists(old, taint)]
    to_remove = [taint for taint in old if not taint_exists(new, taint)]
    return to_add, to_remove


def add_or_update_taint(
    taints: Sequence[Mapping[str, Any]] | None, taint: Mapping[str, Any]
) -> tuple[list[Mapping[str, Any]], bool]:
    """AddOrUpdateTaint: replace the taint with the same key and effect (unchanged when equal),
    else append. Returns (taints, updated)."""
    result: list[Mapping[str, Any]] = []
    updated = False
    for existing in taints or ():
        if match_taint(taint, existing):
            if _taint_equal(taint, existing):
                return list(taints or ()), False
            result.append(dict(taint))
            updated = True
            continue
        result.append(existing)
    if not updated:
        result.append(dict(taint))
    return result, True


def remove_taint(
    taints: Sequence[Mapping[str, Any]] | None, taint: Mapping[str, Any]
) -> tuple[list[Mapping[str, Any]], bool]:
    """RemoveTaint: drop every taint with the same key and effect. Returns (taints, removed)."""
    kept = [existing for existing in taints or () if not match_taint(taint, existing)]
    return kept, len(kept) != len(taints or ())


def _taint_equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return all(
        (a.get(field) or "") == (b.get(field) or "") for field in ("key", "value", "effect", "timeAdded")
    )


# conditions → NoSchedule taints -------------------------------------------------------------


def condition_taints(node: Mapping[str, Any]) -> list[JSONDict]:
    """The NoSchedule taints doNoScheduleTaintingPass wants, in condition order, then unschedulable."""
    taints: list[JSONDict] = []
    for condition in (node.get("status") or {}).get("conditions") or ():
        key = NODE_CONDITION_TO_TAINT_KEY.get(condition.get("type", ""), {}).get(condition.get("status", ""))
        if key is not None:
            taints.append({"key": key, "effect": NO_SCHEDULE})
    if (node.get("spec") or {}).get("unschedulable"):
        taints.append({"key": TAINT_NODE_UNSCHEDULABLE, "effect": NO_SCHEDULE})
    return taints


def controller_no_schedule_taints(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The node's existing NoSchedule taints whose key the controller manages."""
    return [
        taint
        for taint in (node.get("spec") or {}).get("taints") or ()
        if taint.get("effect") == NO_SCHEDULE
        and (taint.get("key") == TAINT_NODE_UNSCHEDULABLE or taint.get("key") in TAINT_KEY_TO_NODE_CONDITION)
    ]


def no_schedule_taint_changes(
    node: Mapping[str, Any],
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """(taints to add, taints to remove) for doNoScheduleTaintingPass."""
    return taint_set_diff(condition_taints(node), controller_no_schedule_taints(node))


# node and pod conditions --------------------------------------------------------------------


def get_condition(obj: Mapping[str, Any] | None, condition_type: str) -> Mapping[str, Any] | None:
    """GetNodeCondition / GetPodCondition on an object's status (None when absent)."""
    if obj is None:
        return None
    for condition in (obj.get("status") or {}).get("conditions") or ():
        if condition.get("type") == condition_type:
            return condition  # type: ignore[no-any-return]
    return None


def get_status_condition(status: Mapping[str, Any] | None, condition_type: str) -> Mapping[str, Any] | None:
    """GetNodeCondition on a bare status."""
    for condition in (status or {}).get("conditions") or ():
        if condition.get("type") == condition_type:
            return condition  # type: ignore[no-any-return]
    return None


def mark_conditions_unknown(
    conditions: Sequence[Mapping[str, Any]], creation_timestamp: str, now: str
) -> list[JSONDict]:
    """tryUpdateNodeHealth past the grace period: Ready and the pressure conditions become Unknown
    (reason NodeStatusUnknown, unless already Unknown); missing ones are added with reason
    NodeStatusNeverUpdated. Returns the new condition list (input untouched)."""
    result = [dict(condition) for condition in conditions]
    for condition_type in CONDITIONS_SET_UNKNOWN:
        current = next((c for c in result if c.get("type") == condition_type), None)
        if current is None:
            result.append(
                {
                    "type": condition_type,
                    "status": "Unknown",
                    "lastHeartbeatTime": creation_timestamp,
                    "lastTransitionTime": now,
                    "reason": "NodeStatusNeverUpdated",
                    "message": "Kubelet never posted node status.",
                }
            )
        elif current.get("status") != "Unknown":
            current["status"] = "Unknown"
            current["reason"] = "NodeStatusUnknown"
            current["message"] = "Kubelet stopped posting node status."
            current["lastTransitionTime"] = now
    return result


def with_disruption_target(status: Mapping[str, Any] | None, reason: str, message: str, now: str) -> JSONDict:
    """A copy of a pod's `status` whose DisruptionTarget condition, replaced and listed last, is
    True for `reason` since `now` (what the scheduler's preemption and the Eviction API write
    before deleting a pod)."""
    conditions = [c for c in (status or {}).get("conditions") or [] if c.get("type") != "DisruptionTarget"]
    conditions.append(
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": reason,
            "message": message,
            "lastTransitionTime": now,
        }
    )
    return {**(status or {}), "conditions": conditions}


def update_pod_condition(
    status: Mapping[str, Any] | None, condition: Mapping[str, Any], now: str
) -> tuple[JSONDict, bool]:
    """UpdatePodCondition: set `condition` (lastTransitionTime = now unless the status is unchanged)
    in a copy of `status`. Returns (new status, changed)."""
    new_status: JSONDict = dict(status or {})
    conditions = [dict(c) for c in new_status.get("conditions") or ()]
    wanted: JSONDict = {**condition, "lastTransitionTime": now}
    index = next((i for i, c in enumerate(conditions) if c.get("type") == wanted.get("type")), None)
    if index is None:
        new_status["conditions"] = [*conditions, wanted]
        return new_status, True
    old = conditions[index]
    if wanted.get("status") == old.get("status"):
        wanted["lastTransitionTime"] = old.get("lastTransitionTime")
    fields = ("status", "reason", "message", "lastProbeTime", "lastTransitionTime")
    equal = all((wanted.get(f) or None) == (old.get(f) or None) for f in fields)
    conditions[index] = {k: v for k, v in wanted.items() if v is not None}
    new_status["conditions"] = conditions
    return new_status, not equal
