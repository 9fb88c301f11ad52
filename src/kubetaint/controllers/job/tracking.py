"""The Job controller's accounting of finished pods, as pkg/controller/job/tracking_utils.go and
the status helpers of job_controller.go: pods counted through `status.uncountedTerminatedPods`
until their tracking finalizer is gone, and when a pod or a Job finished."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.clock.base import parse_time

JSON = dict[str, Any]


def phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def finish_time(job: Mapping[str, Any]) -> float | None:
    """jobFinishTime: the lastTransitionTime of the Complete or Failed condition."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            stamp = condition.get("lastTransitionTime")
            return parse_time(str(stamp)) if stamp else None
    return None


def with_vanished(uncounted: Mapping[str, Any], vanished: list[tuple[str, bool]]) -> JSON:
    """The uncounted pods with those removed while tracked (as succeeded or failed) added."""
    succeeded = list(uncounted.get("succeeded") or [])
    failed = list(uncounted.get("failed") or [])
    for uid, did_succeed in vanished:
        if uid in succeeded or uid in failed:
            continue
        (succeeded if did_succeed else failed).append(uid)
    return uncounted_pods(succeeded, failed)


def uncounted_pods(succeeded: list[str], failed: list[str]) -> JSON:
    result: JSON = {}
    if succeeded:
        result["succeeded"] = succeeded
    if failed:
        result["failed"] = failed
    return result


def clean_uncounted(status: JSON, succeeded: list[str], failed: list[str], with_finalizer: set[str]) -> bool:
    """cleanUncountedPodsWithoutFinalizers: uncounted pods whose finalizer is gone move to the counters."""
    kept_succeeded = [uid for uid in succeeded if uid in with_finalizer]
    kept_failed = [uid for uid in failed if uid in with_finalizer]
    if len(kept_succeeded) == len(succeeded) and len(kept_failed) == len(failed):
        status["uncountedTerminatedPods"] = uncounted_pods(succeeded, failed)
        return False
    status["succeeded"] = int(status.get("succeeded") or 0) + len(succeeded) - len(kept_succeeded)
    status["failed"] = int(status.get("failed") or 0) + len(failed) - len(kept_failed)
    status["uncountedTerminatedPods"] = uncounted_pods(kept_succeeded, kept_failed)
    return True
