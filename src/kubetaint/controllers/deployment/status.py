"""Deployment status and conditions (mirrors pkg/controller/deployment/sync.go calculateStatus,
progress.go syncRolloutStatus and util/deployment_util.go SetDeploymentCondition,
DeploymentComplete, DeploymentProgressing, DeploymentTimedOut, with the upstream reasons and
messages).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.clock.base import format_time, parse_time
from kubetaint.controllers.deployment import util

JSON = dict[str, Any]
RS = Mapping[str, Any]
AVAILABLE = "Available"
PROGRESSING = "Progressing"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"


def progress_deadline(deployment: Mapping[str, Any]) -> int | None:
    """spec.progressDeadlineSeconds (default 600); None when it is MaxInt32 (no deadline)."""
    value = util.spec_of(deployment).get("progressDeadlineSeconds", util.DEFAULT_PROGRESS_DEADLINE)
    return None if value is None or int(value) == util.MAX_INT32 else int(value)


def condition(status: Mapping[str, Any], kind: str) -> JSON | None:
    return next((dict(c) for c in status.get("conditions") or [] if c.get("type") == kind), None)


def new_condition(kind: str, status: str, reason: str, message: str, now: float) -> JSON:
    stamp = format_time(now)
    return {
        "type": kind,
        "status": status,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def set_condition(status: JSON, cond: JSON) -> None:
    """SetDeploymentCondition: same status and reason is a no-op; same status keeps the
    transition time; the condition moves to the end."""
    current = condition(status, cond["type"])
    if (
        current is not None
        and current["status"] == cond["status"]
        and current.get("reason") == cond["reason"]
    ):
        return
    if current is not None and current["status"] == cond["status"]:
        cond = {**cond, "lastTransitionTime": current.get("lastTransitionTime")}
    remove_condition(status, cond["type"])
    status["conditions"] = [*status.get("conditions", []), cond]


def remove_condition(status: JSON, kind: str) -> None:
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != kind]


def calculate(
    deployment: Mapping[str, Any], all_sets: Sequence[RS | None], new_rs: RS | None, now: float
) -> JSON:
    """calculateStatus."""
    available = util.status_sum(all_sets, "availableReplicas")
    old = deployment.get("status") or {}
    status: JSON = {
        "observedGeneration": (deployment.get("metadata") or {}).get("generation", 1),
        "replicas": util.status_sum(all_sets, "replicas"),
        "updatedReplicas": util.status_sum([new_rs], "replicas"),
        "readyReplicas": util.status_sum(all_sets, "readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": max(0, util.spec_replicas_sum(all_sets) - available),
        "conditions": [dict(c) for c in old.get("conditions") or []],
    }
    if "collisionCount" in old:
        status["collisionCount"] = old["collisionCount"]
    if available >= util.replicas(deployment) - util.max_unavailable(deployment):
        cond = new_condition(AVAILABLE, "True", MIN_AVAILABLE, "Deployment has minimum availability.", now)
    else:
        message = "Deployment does not have minimum availability."
        cond = new_condition(AVAILABLE, "False", MIN_UNAVAILABLE, message, now)
    set_condition(status, cond)
    return status


def complete(deployment: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """DeploymentComplete."""
    want = util.replicas(deployment)
    generation = (deployment.get("metadata") or {}).get("generation", 1)
    return (
        int(status.get("updatedReplicas") or 0) == want
        and int(status.get("replicas") or 0) == want
        and int(status.get("availableReplicas") or 0) == want
        and int(status.get("observedGeneration") or 0) >= int(generation)
    )


def progressing(deployment: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """DeploymentProgressing: more updated, ready or available replicas, or fewer old ones."""
    old = deployment.get("status") or {}

    def get(s: Mapping[str, Any], field: str) -> int:
        return int(s.get(field) or 0)

    old_old = get(old, "replicas") - get(old, "updatedReplicas")
    new_old = get(new, "replicas") - get(new, "updatedReplicas")
    return (
        get(new, "updatedReplicas") > get(old, "updatedReplicas")
        or new_old < old_old
        or get(new, "readyReplicas") > get(old, "readyReplicas")
        or get(new, "availableReplicas") > get(old, "availableReplicas")
    )


def timed_out(deployment: Mapping[str, Any], status: Mapping[str, Any], now: float) -> bool:
    """DeploymentTimedOut: the Progressing condition was last updated over the deadline ago."""
    deadline = progress_deadline(deployment)
    cond = condition(status, PROGRESSING)
    if deadline is None or cond is None or cond.get("reason") == NEW_RS_AVAILABLE:
        return False
    if cond.get("reason") == TIMED_OUT:
        return True
    return parse_time(str(cond["lastUpdateTime"])) + deadline < now


def rollout_status(
    deployment: Mapping[str, Any], all_sets: Sequence[RS | None], new_rs: RS | None, now: float
) -> JSON:
    """syncRolloutStatus: calculateStatus plus the Progressing condition."""
    status = calculate(deployment, all_sets, new_rs, now)
    name = (deployment.get("metadata") or {}).get("name")
    subject = (
        f'ReplicaSet "{(new_rs.get("metadata") or {}).get("name")}"' if new_rs else f'Deployment "{name}"'
    )
    if progress_deadline(deployment) is None:
        remove_condition(status, PROGRESSING)
        return status
    current = condition(deployment.get("status") or {}, PROGRESSING)
    finished = (
        status["replicas"] == status["updatedReplicas"]
        and current is not None
        and current.get("reason") == NEW_RS_AVAILABLE
    )
    if finished:
        return status
    if complete(deployment, status):
        set_condition(
            status,
            new_condition(
                PROGRESSING, "True", NEW_RS_AVAILABLE, f"{subject} has successfully progressed.", now
            ),
        )
    elif progressing(deployment, status):
        cond = new_condition(PROGRESSING, "True", RS_UPDATED, f"{subject} is progressing.", now)
        if current is not None:
            if current.get("status") == "True":
                cond["lastTransitionTime"] = current.get("lastTransitionTime")
            remove_condition(status, PROGRESSING)
        set_condition(status, cond)
    elif timed_out(deployment, status, now):
        set_condition(
            status,
            new_condition(PROGRESSING, "False", TIMED_OUT, f"{subject} has timed out progressing.", now),
        )
    return status


def requeue_after(deployment: Mapping[str, Any], status: Mapping[str, Any], now: float) -> float | None:
    """requeueStuckDeployment: when to look again for a progress deadline, if at all."""
    deadline = progress_deadline(deployment)
    cond = condition(status, PROGRESSING)
    if deadline is None or cond is None or complete(deployment, status):
        return None
    if cond.get("reason") in (NEW_RS_AVAILABLE, TIMED_OUT):
        return None
    return max(0.0, parse_time(str(cond["lastUpdateTime"])) + deadline - now) + 1.0
