"""Pure helpers of the Job controller: conditions (ensureJobConditionStatus, newCondition,
IsJobFinished), completion indexes (orderedIntervals, firstPendingIndexes, getCompletionIndex),
the pod failure back-off (backoffRecord.getRemainingTime) and the pod counts upstream takes from
pods (isPodFailed, pastBackoffLimitOnFailure, CountTerminatingPods).

Mirrors pkg/controller/job/job_controller.go, indexed_job_utils.go, backoff_utils.go and
pkg/controller/job/util/utils.go.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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


def is_indexed(job: Mapping[str, Any]) -> bool:
    return (job.get("spec") or {}).get("completionMode") == "Indexed"


def completion_index(pod: Mapping[str, Any]) -> int:
    """getCompletionIndex: the pod's completion index annotation, -1 when absent or invalid."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(COMPLETION_INDEX_ANNOTATION)
    if raw is None:
        return -1
    text = str(raw)
    if not text.isdigit() or (len(text) > 1 and text[0] == "0"):
        return -1
    return int(text)


def parse_indexes(text: str, completions: int) -> list[int]:
    """parseIndexesFromString: the indexes of a "1,3-5" list below `completions`, sorted."""
    result: set[int] = set()
    for part in (text or "").split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        try:
            low = int(first)
            high = int(last) if last else low
        except ValueError:
            continue
        result.update(range(low, min(high, completions - 1) + 1))
    return sorted(i for i in result if 0 <= i < completions)


def format_indexes(indexes: Iterable[int]) -> str:
    """orderedIntervals.String: runs of three or more as "a-b", a pair as "a,b"."""
    ordered = sorted(set(indexes))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        first, last = ordered[i], ordered[j]
        if first == last:
            parts.append(str(first))
        elif first + 1 == last:
            parts.append(f"{first},{last}")
        else:
            parts.append(f"{first}-{last}")
        i = j + 1
    return ",".join(parts)


def first_pending_indexes(
    active: Sequence[Mapping[str, Any]], succeeded: set[int], count: int, completions: int
) -> list[int]:
    """firstPendingIndexes: the lowest `count` indexes neither succeeded nor held by an active pod."""
    taken = set(succeeded)
    for pod in active:
        index = completion_index(pod)
        if index >= 0:
            taken.add(index)
    result: list[int] = []
    index = 0
    while len(result) < count and index < completions:
        if index not in taken:
            result.append(index)
        index += 1
    return result


def pod_generate_name(job_name: str, index: int | None) -> str:
    """The pod name prefix: `<job>-` or, for an index, podGenerateNameWithIndex `<job>-<index>-`."""
    appendix = "-" if index is None else f"-{index}-"
    return job_name[: MAX_GENERATED_NAME_LENGTH - len(appendix)] + appendix


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


def with_completion_index_env(spec: JSON) -> JSON:
    """addCompletionIndexEnvVariables: JOB_COMPLETION_INDEX from the index annotation in every
    container and init container that lacks it."""
    spec = dict(spec)
    env_var = {
        "name": COMPLETION_INDEX_ENV,
        "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"}},
    }
    for field in ("initContainers", "containers"):
        containers = spec.get(field)
        if not containers:
            continue
        copied = []
        for container in containers:
            env = list(container.get("env") or [])
            if not any(e.get("name") == COMPLETION_INDEX_ENV for e in env):
                env.append(env_var)
            copied.append({**container, "env": env})
        spec[field] = copied
    return spec


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


def duplicated_index_pods_for_removal(
    pods: Sequence[JSON], completions: int
) -> tuple[list[JSON], list[JSON]]:
    """appendDuplicatedIndexPodsForRemoval: (to remove, to keep). Pods without a valid index or
    with one at or past `completions` are removed; of several pods with one index, the most
    advanced (ActivePods order) is kept."""
    ordered = sorted(pods, key=completion_index)  # byCompletionIndex (stable)
    remove: list[JSON] = []
    keep: list[JSON] = []
    groups: dict[int, list[JSON]] = {}
    beyond: list[JSON] = []
    for i, pod in enumerate(ordered):
        index = completion_index(pod)
        if index >= completions:
            beyond = ordered[i:]
            break
        groups.setdefault(index, []).append(pod)
    for index in sorted(groups):
        same = groups[index]
        if index < 0:
            remove.extend(same)
        elif len(same) == 1:
            keep.append(same[0])
        else:
            same = sorted(same, key=active_stage)
            remove.extend(same[:-1])
            keep.append(same[-1])
    remove.extend(beyond)
    return remove, keep


def active_pods_for_removal(job: Mapping[str, Any], pods: Sequence[JSON], at_least: int) -> list[JSON]:
    """activePodsForRemoval: an Indexed Job's duplicate or invalid indexes first, then the
    earliest-stage pods (ActivePods order) until `at_least` are chosen."""
    remove: list[JSON] = []
    left = list(pods)
    if is_indexed(job):
        remove, left = duplicated_index_pods_for_removal(
            pods, int((job.get("spec") or {}).get("completions") or 0)
        )
    if len(remove) < at_least:
        left.sort(key=active_stage)
        remove.extend(left[: at_least - len(remove)])
    return remove
