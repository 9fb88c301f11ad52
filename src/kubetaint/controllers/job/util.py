"""Pure helpers of the Job controller: conditions (ensureJobConditionStatus, newCondition,
IsJobFinished), the pod failure back-off (backoffRecord.getRemainingTime), the pod counts upstream
takes from pods (isPodFailed, pastBackoffLimitOnFailure, CountTerminatingPods) and the ActivePods
order. Completion indexes are indexed_job_utils.py's.

Mirrors pkg/controller/job/job_controller.go, backoff_utils.go and pkg/controller/job/util/utils.go.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubetaint.clock.base import format_time

JSON = dict[str, Any]
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
COMPLETION_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
#: DefaultJobPodFailureBackOff and MaxJobPodFailureBackOff.
POD_FAILURE_BACKOFF = 10.0
MAX_POD_FAILURE_BACKOFF = 600.0
#: MaxPodCreateDeletePerSync.
MAX_POD_CREATE_DELETE_PER_SYNC = 500
#: The generated name's prefix is cut to this length (apiserver MaxGeneratedNameLength).
MAX_GENERATED_NAME_LENGTH = 58

REASON_BACKOFF_LIMIT = "BackoffLimitExceeded"
MESSAGE_BACKOFF_LIMIT = "Job has reached the specified backoff limit"
REASON_DEADLINE = "DeadlineExceeded"
MESSAGE_DEADLINE = "Job was active longer than specified deadline"
REASON_COMPLETIONS_REACHED = "CompletionsReached"
MESSAGE_COMPLETIONS_REACHED = "Reached expected number of succeeded pods"


def new_condition(ctype: str, status: str, reason: str, message: str, now: float) -> JSON:
    """newCondition: lastProbeTime and lastTransitionTime now; reason and message omitted when empty."""
    stamp = format_time(now)
    condition: JSON = {"type": ctype, "status": status, "lastProbeTime": stamp, "lastTransitionTime": stamp}
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    return condition


def find_condition(conditions: Iterable[Mapping[str, Any]], ctype: str) -> Mapping[str, Any] | None:
    for condition in conditions:
        if condition.get("type") == ctype:
            return condition
    return None


def ensure_condition_status(
    conditions: list[JSON], ctype: str, status: str, reason: str, message: str, *, now: float
) -> tuple[list[JSON], bool]:
    """ensureJobConditionStatus: update the condition of that type when its status, reason or
    message differ; append it unless its status is False. Returns (conditions, changed)."""
    for i, condition in enumerate(conditions):
        if condition.get("type") == ctype:
            if (
                condition.get("status") != status
                or (condition.get("reason") or "") != reason
                or (condition.get("message") or "") != message
            ):
                conditions = list(conditions)
                conditions[i] = new_condition(ctype, status, reason, message, now)
                return conditions, True
            return conditions, False
    if status != "False":
        return [*conditions, new_condition(ctype, status, reason, message, now)], True
    return conditions, False


def finished_condition(job: Mapping[str, Any]) -> str | None:
    """IsJobFinished / FinishedCondition: "Complete" or "Failed" when that condition is True."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return str(condition["type"])
    return None


def has_tracking_finalizer(pod: Mapping[str, Any]) -> bool:
    return TRACKING_FINALIZER in ((pod.get("metadata") or {}).get("finalizers") or ())


def only_replace_failed_pods(job: Mapping[str, Any]) -> bool:
    spec = job.get("spec") or {}
    return spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy") is not None


def is_pod_failed(pod: Mapping[str, Any], job: Mapping[str, Any]) -> bool:
    """isPodFailed: phase Failed, or (all but the Failed replacement policy) being deleted while
    not Succeeded."""
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Failed":
        return True
    if only_replace_failed_pods(job):
        return False
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and phase != "Succeeded"


def is_terminating(pod: Mapping[str, Any]) -> bool:
    """CountTerminatingPods: being deleted and not terminal."""
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and (pod.get("status") or {}).get(
        "phase"
    ) not in ("Succeeded", "Failed")


def past_backoff_limit_on_failure(job: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> bool:
    """pastBackoffLimitOnFailure: restartPolicy OnFailure and the container restarts of running or
    pending pods reach backoffLimit (exceed it when it is 0)."""
    spec = job.get("spec") or {}
    if ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") != "OnFailure":
        return False
    total = 0
    for pod in pods:
        status = pod.get("status") or {}
        if status.get("phase") in ("Running", "Pending"):
            for key in ("initContainerStatuses", "containerStatuses"):
                total += sum(int(s.get("restartCount") or 0) for s in status.get(key) or [])
    limit = int(spec.get("backoffLimit") or 0)
    return total > 0 if limit == 0 else total >= limit


def remaining_backoff(failures_after_success: int, last_failure: float | None, now: float) -> float:
    """backoffRecord.getRemainingTime: 10 s doubling per failure since the last success, at most
    10 minutes, counted from the last failure."""
    if failures_after_success == 0 or last_failure is None:
        return 0.0
    backoff = POD_FAILURE_BACKOFF
    for _ in range(failures_after_success - 1):
        backoff *= 2
        if backoff >= MAX_POD_FAILURE_BACKOFF:
            backoff = MAX_POD_FAILURE_BACKOFF
            break
    elapsed = now - last_failure
    return 0.0 if backoff < elapsed else backoff - elapsed


def active_stage(pod: Mapping[str, Any]) -> tuple[bool, int, bool]:
    """controller.ActivePods order, first criteria: unscheduled, pending, not ready come first."""
    order = {"Pending": 0, "Unknown": 1, "Running": 2}
    return (
        bool((pod.get("spec") or {}).get("nodeName")),
        order.get(str((pod.get("status") or {}).get("phase") or ""), 0),
        _ready(pod),
    )


def _ready(pod: Mapping[str, Any]) -> bool:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return False
