"""Indexed Jobs, as pkg/controller/job/indexed_job_utils.go: a pod's completion index, its name,
the JOB_COMPLETION_INDEX variable, the duplicate indexes to remove, the succeeded and failed indexes
(`status.completedIndexes`, `status.failedIndexes`), the indexes still to create, and the
per-index failure counts of `backoffLimitPerIndex` (the `batch.kubernetes.io/job-index-failure-count`
annotations a replacement pod carries)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.controllers.job import backoff, intervals, util
from kubetaint.controllers.job.context import SyncJobCtx
from kubetaint.controllers.job.intervals import Intervals
from kubetaint.controllers.job.pod_failure_policy import FAIL_INDEX, match_pod_failure_policy
from kubetaint.controllers.job.util import (
    COMPLETION_INDEX_ANNOTATION,
    COMPLETION_INDEX_ENV,
    COMPLETION_INDEX_LABEL,
    JSON,
    MAX_GENERATED_NAME_LENGTH,
    active_stage,
)

INDEX_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-failure-count"
INDEX_IGNORED_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-ignored-failure-count"
_MAX_INT32 = 2**31 - 1


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


def pod_generate_name(job_name: str, index: int | None) -> str:
    """The pod name prefix: `<job>-` or, for an index, podGenerateNameWithIndex `<job>-<index>-`."""
    appendix = "-" if index is None else f"-{index}-"
    return job_name[: MAX_GENERATED_NAME_LENGTH - len(appendix)] + appendix


def with_completion_index_env(spec: JSON) -> JSON:
    """addCompletionIndexEnvVariables: JOB_COMPLETION_INDEX from the index label (PodIndexLabel
    is on) in every container and init container that lacks it."""
    spec = dict(spec)
    env_var = {
        "name": COMPLETION_INDEX_ENV,
        "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{COMPLETION_INDEX_LABEL}']"}},
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


def has_backoff_limit_per_index(job: Mapping[str, Any]) -> bool:
    """hasBackoffLimitPerIndex (JobBackoffLimitPerIndex is GA)."""
    return (job.get("spec") or {}).get("backoffLimitPerIndex") is not None


def completions(job: Mapping[str, Any]) -> int:
    return int((job.get("spec") or {}).get("completions") or 0)


def _valid_index(pod: Mapping[str, Any], job: Mapping[str, Any]) -> int | None:
    index = completion_index(pod)
    return index if 0 <= index < completions(job) else None


def calculate_succeeded_indexes(job: Mapping[str, Any], pods: Sequence[JSON]) -> tuple[Intervals, Intervals]:
    """calculateSucceededIndexes: (the indexes of `status.completedIndexes`, those with the
    succeeded pods still holding their finalizer added)."""
    previous = intervals.parse(str((job.get("status") or {}).get("completedIndexes") or ""), completions(job))
    new = {
        index
        for pod in pods
        if (pod.get("status") or {}).get("phase") == "Succeeded"
        and util.has_tracking_finalizer(pod)
        and (index := _valid_index(pod, job)) is not None
    }
    return previous, intervals.with_indexes(previous, new)


def calculate_failed_indexes(job: Mapping[str, Any], pods: Sequence[JSON]) -> Intervals:
    """calculateFailedIndexes: `status.failedIndexes` with the indexes whose pod (still holding its
    finalizer) failed them added."""
    failed_text = (job.get("status") or {}).get("failedIndexes")
    previous = intervals.parse(str(failed_text), completions(job)) if failed_text is not None else []
    new = {
        index
        for pod in pods
        if util.has_tracking_finalizer(pod)
        and (index := _valid_index(pod, job)) is not None
        and is_index_failed(job, pod)
    }
    return intervals.with_indexes(previous, new)


def is_index_failed(job: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """isIndexFailed: the pod failed and matched a FailIndex rule, or its counted failure reaches
    backoffLimitPerIndex."""
    counted = False
    if util.is_pod_failed(pod, job):
        policy = (job.get("spec") or {}).get("podFailurePolicy")
        if policy is not None:
            match = match_pod_failure_policy(policy, pod)
            if match.action == FAIL_INDEX:
                return True
            counted = match.count_failed
        else:
            counted = True
    limit = int((job.get("spec") or {}).get("backoffLimitPerIndex") or 0)
    return counted and index_failure_count(pod) >= limit


def first_pending_indexes(ctx: SyncJobCtx, count: int) -> list[int]:
    """firstPendingIndexes: the lowest `count` indexes below completions neither succeeded, held by
    an active pod (or a terminating one when only failed pods are replaced), nor failed."""
    if count == 0:
        return []
    total = completions(ctx.job)
    taken = _indexes(ctx.active_pods)
    if util.only_replace_failed_pods(ctx.job):
        taken |= _indexes([p for p in ctx.pods if util.is_terminating(p)])
    non_pending = intervals.with_indexes(ctx.succeeded_indexes, taken)
    if ctx.failed_indexes is not None:
        non_pending = intervals.merge(non_pending, ctx.failed_indexes)
    result: list[int] = []
    candidate = 0
    for first, last in non_pending:
        while candidate < total and len(result) < count and candidate < first:
            result.append(candidate)
            candidate += 1
        candidate = max(candidate, last + 1)
    while candidate < total and len(result) < count:
        result.append(candidate)
        candidate += 1
    return result


def _indexes(pods: Sequence[Mapping[str, Any]]) -> set[int]:
    """getIndexes."""
    return {index for pod in pods if (index := completion_index(pod)) >= 0}


def pods_with_delayed_deletion_per_index(ctx: SyncJobCtx, valid: Sequence[JSON]) -> dict[int, JSON]:
    """getPodsWithDelayedDeletionPerIndex: per index neither succeeded, failed nor active, the
    failed pod (of `valid`, the pods still counted) with the most failures, latest finished, whose
    finalizer stays until its replacement carries its failure count."""
    active = _indexes(ctx.active_pods)
    failed = ctx.failed_indexes or []
    result: dict[int, JSON] = {}
    for pod in valid:
        if not util.is_pod_failed(pod, ctx.job):
            continue
        index = _valid_index(pod, ctx.job)
        if index is None:
            continue
        if intervals.has(ctx.succeeded_indexes, index) or intervals.has(failed, index) or index in active:
            continue
        last = result.get(index)
        if last is None or (
            absolute_failure_count(last) <= absolute_failure_count(pod)
            and backoff.finished_time(pod) >= backoff.finished_time(last)
        ):
            result[index] = pod
    return result


def new_index_failure_counts(job: Mapping[str, Any], replaced: Mapping[str, Any] | None) -> tuple[int, int]:
    """getNewIndexFailureCounts: (failures, ignored failures) of the index for the pod replacing
    `replaced`."""
    if replaced is None:
        return 0, 0
    failures = index_failure_count(replaced)
    ignored = _annotation_int(replaced, INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)
    policy = (job.get("spec") or {}).get("podFailurePolicy")
    if policy is None or match_pod_failure_policy(policy, replaced).count_failed:
        failures += 1
    else:
        ignored += 1
    return failures, ignored


def index_failure_count_annotations(
    job: Mapping[str, Any], replaced: Mapping[str, Any] | None
) -> dict[str, str]:
    """addIndexFailureCountAnnotation: the annotations of a new pod of the index."""
    failures, ignored = new_index_failure_counts(job, replaced)
    result = {INDEX_FAILURE_COUNT_ANNOTATION: str(failures)}
    if ignored > 0:
        result[INDEX_IGNORED_FAILURE_COUNT_ANNOTATION] = str(ignored)
    return result


def index_failure_count(pod: Mapping[str, Any]) -> int:
    """getIndexFailureCount: the failure-count annotation, 0 when absent or not an int32 ≥ 0."""
    return _annotation_int(pod, INDEX_FAILURE_COUNT_ANNOTATION)


def absolute_failure_count(pod: Mapping[str, Any]) -> int:
    """getIndexAbsoluteFailureCount: counted and ignored failures."""
    return index_failure_count(pod) + _annotation_int(pod, INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)


def _annotation_int(pod: Mapping[str, Any], name: str) -> int:
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(name)
    if raw is None:
        return 0
    text = str(raw)
    if not intervals.is_atoi(text):
        return 0
    value = int(text)
    return value if 0 <= value <= _MAX_INT32 else 0
