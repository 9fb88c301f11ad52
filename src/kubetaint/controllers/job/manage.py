"""manageJob, as job_controller.go's: the pods a Job needs created (up to parallelism, never more
than the completions still needed; for an Indexed Job the lowest pending indexes) or deleted (too
many, duplicate indexes, a suspended Job), after the pod failure back-off (per index with
`backoffLimitPerIndex`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubetaint.controllers.job import backoff, indexed_job_utils, util
from kubetaint.controllers.job.context import SyncJobCtx
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.podcontrol import create_owned_pod, delete_owned_pod

if TYPE_CHECKING:
    from kubetaint.controllers.job.controller import JobController

JSON = dict[str, Any]


def manage_job(jc: JobController, ctx: SyncJobCtx) -> int:
    """manageJob: the number of active pods after its creates or deletes (`ctx.terminating` and
    `ctx.ready` follow the deletes)."""
    job = ctx.job
    spec = job.get("spec") or {}
    key = podutil.key_of(job)
    active = len(ctx.active_pods)
    parallelism = int(spec.get("parallelism") or 0) if spec.get("parallelism") is not None else 1
    if spec.get("suspend"):
        return active - _delete(jc, ctx, active_pods_for_removal(job, ctx.active_pods, active))
    completions = spec.get("completions")
    if completions is None:
        want = active if ctx.succeeded > 0 else parallelism
    else:
        want = max(0, min(int(completions) - ctx.succeeded, parallelism))
    remove = active_pods_for_removal(job, ctx.active_pods, max(0, active - want))[
        : util.MAX_POD_CREATE_DELETE_PER_SYNC
    ]
    if remove:
        return active - _delete(jc, ctx, remove)
    held = ctx.terminating if util.only_replace_failed_pods(job) else 0
    diff = want - held - active
    if diff <= 0:
        return active
    now = jc.clock.now()
    per_index = indexed_job_utils.has_backoff_limit_per_index(job)
    remaining = (
        0.0 if per_index else util.remaining_backoff(ctx.backoff.failures, ctx.backoff.last_failure, now)
    )
    if remaining > 0:
        jc.queue.add_after(key, remaining)
        return 0
    diff = min(diff, util.MAX_POD_CREATE_DELETE_PER_SYNC)
    indexes: list[int | None] = [None] * diff
    if indexed_job_utils.is_indexed(job):
        pending = indexed_job_utils.first_pending_indexes(ctx, diff)
        if per_index:
            pending, remaining = _creatable_indexes(pending, ctx.pods_with_delayed_deletion, now)
            if remaining > 0:
                jc.queue.add_after(key, remaining)
                return 0
        indexes = list(pending)
    return active + _create(jc, ctx, indexes)


def _creatable_indexes(indexes: list[int], delayed: dict[int, JSON], now: float) -> tuple[list[int], float]:
    """getPodCreationInfoForIndependentIndexes: the indexes past their back-off, or (none) the
    shortest back-off left."""
    ready: list[int] = []
    shortest: float | None = None
    for index in indexes:
        last = delayed.get(index)
        absolute = indexed_job_utils.absolute_failure_count(last) if last is not None else 0
        remaining = backoff.remaining_time_per_index(last, now, absolute)
        if remaining == 0:
            ready.append(index)
        elif shortest is None or remaining < shortest:
            shortest = remaining
    if ready:
        return ready, 0.0
    return ready, shortest or 0.0


def _create(jc: JobController, ctx: SyncJobCtx, indexes: list[int | None]) -> int:
    """The pods of `indexes` (None: a NonIndexed pod): returns how many were created."""
    job = ctx.job
    spec = job.get("spec") or {}
    template = dict(spec.get("template") or {})
    tmeta = dict(template.get("metadata") or {})
    finalizers = list(tmeta.get("finalizers") or [])
    if util.TRACKING_FINALIZER not in finalizers:
        finalizers.append(util.TRACKING_FINALIZER)
    tmeta["finalizers"] = finalizers
    tspec = dict(template.get("spec") or {})
    if indexed_job_utils.is_indexed(job):
        tspec = indexed_job_utils.with_completion_index_env(tspec)
    per_index = indexed_job_utils.has_backoff_limit_per_index(job)
    name = str(job["metadata"]["name"])
    created = 0
    for index in indexes:
        meta = dict(tmeta)
        pod_spec = tspec
        if index is not None:
            annotations = {**(meta.get("annotations") or {}), util.COMPLETION_INDEX_ANNOTATION: str(index)}
            if per_index:
                replaced = ctx.pods_with_delayed_deletion.get(index)
                annotations.update(indexed_job_utils.index_failure_count_annotations(job, replaced))
            meta["annotations"] = annotations
            meta["labels"] = {**(meta.get("labels") or {}), util.COMPLETION_INDEX_LABEL: str(index)}
            pod_spec = {**tspec, "hostname": f"{name}-{index}"}
        pod = create_owned_pod(
            jc.store,
            jc.recorder,
            jc.rng,
            job,
            kind="Job",
            api_version="batch/v1",
            template={"metadata": meta, "spec": pod_spec},
            base=indexed_job_utils.pod_generate_name(name, index),
        )
        if pod is not None:
            created += 1
    return created


def _delete(jc: JobController, ctx: SyncJobCtx, pods: list[JSON]) -> int:
    """deleteJobPods: returns how many were deleted; they count as terminating from now on."""
    deleted, deleted_ready = delete_pods(jc, ctx.job, pods)
    ctx.terminating += deleted
    ctx.ready -= deleted_ready
    return deleted


def delete_pods(jc: JobController, job: JSON, pods: list[JSON]) -> tuple[int, int]:
    """deleteActivePods / deleteJobPods: (deleted, of which ready); a pod already gone counts."""
    deleted = deleted_ready = 0
    for pod in pods:
        if delete_owned_pod(jc.store, jc.recorder, job, pod) or jc.pods.get(*podutil.key_of(pod)) is None:
            deleted += 1
            deleted_ready += podutil.is_ready(pod)
    return deleted, deleted_ready


def active_pods_for_removal(job: Mapping[str, Any], pods: Sequence[JSON], at_least: int) -> list[JSON]:
    """activePodsForRemoval: an Indexed Job's duplicate or invalid indexes first, then the
    earliest-stage pods (ActivePods order) until `at_least` are chosen."""
    remove: list[JSON] = []
    left = list(pods)
    if indexed_job_utils.is_indexed(job):
        remove, left = indexed_job_utils.duplicated_index_pods_for_removal(
            pods, int((job.get("spec") or {}).get("completions") or 0)
        )
    if len(remove) < at_least:
        left.sort(key=util.active_stage)
        remove.extend(left[: at_least - len(remove)])
    return remove
