"""trackJobStatusAndRemoveFinalizers with flushUncountedAndRemoveFinalizers, enactJobFinished and
recordJobFinished, as job_controller.go's: finished pods go to `status.uncountedTerminatedPods`
(a failure an `Ignore` rule of the pod failure policy matches is not counted), their tracking
finalizers are removed, the counters and indexes follow, and the Job gets its terminal condition
once nothing is uncounted or terminating."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import format_time
from kubetaint.controllers.job import indexed_job_utils, intervals, tracking, ttl_after_finished, util
from kubetaint.controllers.job.context import SyncJobCtx
from kubetaint.controllers.job.pod_failure_policy import match_pod_failure_policy
from kubetaint.controllers.replicaset import podutil

if TYPE_CHECKING:
    from kubetaint.controllers.job.controller import JobController

JSON = dict[str, Any]
RESOURCE = "jobs.batch"
log = logging.getLogger(__name__)


def can_remove_finalizer(ctx: SyncJobCtx, pod: Mapping[str, Any], considered_failed: bool) -> bool:
    """canRemoveFinalizer: the Job is deleting or finished, the pod succeeded, or it failed and is
    not the failed pod an index keeps until its replacement carries its failure count."""
    if (
        ctx.job["metadata"].get("deletionTimestamp")
        or ctx.finished_condition is not None
        or tracking.phase(pod) == "Succeeded"
    ):
        return True
    if not considered_failed:
        return False
    if indexed_job_utils.has_backoff_limit_per_index(ctx.job):
        index = indexed_job_utils.completion_index(pod)
        delayed = ctx.pods_with_delayed_deletion.get(index)
        if delayed is not None and (delayed.get("metadata") or {}).get("uid") == (
            pod.get("metadata") or {}
        ).get("uid"):
            return False
    return True


def track_status_and_remove_finalizers(jc: JobController, ctx: SyncJobCtx, needs_flush: bool) -> None:
    """trackJobStatusAndRemoveFinalizers."""
    job = ctx.job
    status = job["status"]
    spec = job.get("spec") or {}
    policy = spec.get("podFailurePolicy")
    indexed = indexed_job_utils.is_indexed(job)
    completions = int(spec.get("completions") or 0)
    now = jc.clock.now()
    pods = ctx.pods
    uncounted = ctx.uncounted
    uncounted_succeeded = list((status.get("uncountedTerminatedPods") or {}).get("succeeded") or [])
    uncounted_failed = list((status.get("uncountedTerminatedPods") or {}).get("failed") or [])
    with_finalizer = {str(p["metadata"].get("uid")) for p in pods if util.has_tracking_finalizer(p)}
    if tracking.clean_uncounted(status, uncounted_succeeded, uncounted_failed, with_finalizer):
        uncounted_succeeded = list(status["uncountedTerminatedPods"].get("succeeded") or [])
        uncounted_failed = list(status["uncountedTerminatedPods"].get("failed") or [])
        needs_flush = True
    to_remove: list[JSON] = []
    new_indexes: list[int] = []
    finished_condition = ctx.finished_condition
    success_met = finished_condition is not None and finished_condition.get("type") == "SuccessCriteriaMet"
    for pod in pods:
        if not util.has_tracking_finalizer(pod):
            continue
        pod_uid = str(pod["metadata"].get("uid") or "")
        failed = util.is_pod_failed(pod, job)
        if not can_remove_finalizer(ctx, pod, failed):
            continue
        to_remove.append(pod)
        if tracking.phase(pod) == "Succeeded" and pod_uid not in uncounted["failed"]:
            if indexed:
                index = indexed_job_utils.completion_index(pod)
                if 0 <= index < completions and not intervals.has(ctx.prev_succeeded_indexes, index):
                    new_indexes.append(index)
                    needs_flush = True
            elif pod_uid not in uncounted["succeeded"]:
                uncounted_succeeded.append(pod_uid)
                uncounted["succeeded"].add(pod_uid)
                needs_flush = True
        elif failed or (finished_condition is not None and not success_met):
            # once the Job is finished, every pod not terminated counts as failed
            index = indexed_job_utils.completion_index(pod)
            if (
                pod_uid not in uncounted["failed"]
                and (not indexed or 0 <= index < completions)
                and (policy is None or match_pod_failure_policy(policy, pod).count_failed)
            ):
                uncounted_failed.append(pod_uid)
                uncounted["failed"].add(pod_uid)
                needs_flush = True
    status["uncountedTerminatedPods"] = tracking.uncounted_pods(uncounted_succeeded, uncounted_failed)
    if indexed:
        ctx.succeeded_indexes = intervals.with_indexes(ctx.succeeded_indexes, new_indexes)
        text = intervals.to_string(ctx.succeeded_indexes)
        if text != (status.get("completedIndexes") or ""):
            needs_flush = True
        status["succeeded"] = intervals.total(ctx.succeeded_indexes)
        status["completedIndexes"] = text
        failed_text = intervals.to_string(ctx.failed_indexes) if ctx.failed_indexes is not None else None
        if failed_text != status.get("failedIndexes"):
            status["failedIndexes"] = failed_text
            needs_flush = True
    conditions: list[JSON] = status["conditions"]
    if finished_condition is not None and finished_condition["type"] == "FailureTarget":
        # the interim FailureTarget first, the Failed condition once the finalizers are gone
        conditions.append(finished_condition)
        needs_flush = True
        finished_condition = util.new_condition(
            "Failed", "True", finished_condition.get("reason", ""), finished_condition.get("message", ""), now
        )
    if finished_condition is not None and finished_condition["type"] == "SuccessCriteriaMet":
        if util.find_condition(conditions, "SuccessCriteriaMet") is None:
            conditions.append(finished_condition)
            needs_flush = True
        finished_condition = util.new_condition(
            "Complete",
            "True",
            finished_condition.get("reason", ""),
            finished_condition.get("message", ""),
            now,
        )
    if needs_flush:
        written = write_status(jc, job)
        if written is None:
            return
        job = {**written, "spec": job["spec"]}
        status = job["status"]
        needs_flush = False
    removed = {str(p["metadata"].get("uid")) for p in to_remove if jc.remove_finalizer(p)}
    jc.forget_vanished(podutil.key_of(job), removed)
    if tracking.clean_uncounted(
        status,
        list((status.get("uncountedTerminatedPods") or {}).get("succeeded") or []),
        list((status.get("uncountedTerminatedPods") or {}).get("failed") or []),
        with_finalizer - removed,
    ):
        needs_flush = True
    finished = _enact_finished(job, finished_condition, now)
    if finished or needs_flush:
        written = write_status(jc, job)
        if written is not None and finished and finished_condition is not None:
            _record_finished(jc, written, finished_condition)


def _enact_finished(job: JSON, finished_condition: JSON | None, now: float) -> bool:
    """enactJobFinished: the Complete or Failed condition once nothing is uncounted or terminating."""
    if finished_condition is None:
        return False
    status = job["status"]
    uncounted = status.get("uncountedTerminatedPods") or {}
    if uncounted.get("succeeded") or uncounted.get("failed") or status.get("terminating"):
        return False
    status["conditions"], _ = util.ensure_condition_status(
        list(status.get("conditions") or []),
        finished_condition["type"],
        finished_condition["status"],
        str(finished_condition.get("reason") or ""),
        str(finished_condition.get("message") or ""),
        now=now,
    )
    if finished_condition["type"] == "Complete":
        status["completionTime"] = format_time(now)
    return True


def _record_finished(jc: JobController, job: JSON, finished_condition: Mapping[str, Any]) -> None:
    """recordJobFinished: Completed (and TooManySucceededPods), or the failure reason."""
    spec = job.get("spec") or {}
    if finished_condition["type"] == "Complete":
        completions = spec.get("completions")
        if completions is not None and int((job.get("status") or {}).get("succeeded") or 0) > int(
            completions
        ):
            jc.recorder.event(
                job,
                "Warning",
                "TooManySucceededPods",
                "Too many succeeded pods running after completion count reached",
            )
        jc.recorder.event(job, "Normal", "Completed", "Job completed")
    else:
        jc.recorder.event(
            job,
            "Warning",
            str(finished_condition.get("reason") or ""),
            str(finished_condition.get("message") or ""),
        )
    ttl_after_finished.sync(jc.store, jc.queue.add_after, jc.clock.now(), job)


def write_status(jc: JobController, job: JSON) -> JSON | None:
    """UpdateStatus of the Job as stored (its spec without the defaults read); a conflict
    requeues the Job (its next sync reads the current one)."""
    # (active, succeeded and failed are omitempty counters; ready and terminating pointers)
    status = {
        k: v
        for k, v in job["status"].items()
        if v is not None
        and not (v == 0 and k in ("active", "succeeded", "failed"))
        and not (k == "conditions" and not v)
    }
    try:
        return jc.store.update(RESOURCE, {**job, "status": status})
    except StatusError as err:
        if err.code != 404:
            jc.queue.add_after(podutil.key_of(job), 0.001)
            log.info("job controller: status of %s: %s", podutil.key_of(job), err.message)
        return None
