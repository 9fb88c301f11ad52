"""The Job controller's pod failure back-off, as pkg/controller/job/backoff_utils.go: the record of
failures since the last success, when a pod finished, and (for `backoffLimitPerIndex`) the back-off
of one index."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.clock.base import parse_time
from kubetaint.controllers.job import util


class Backoff:
    """backoffRecord: failures since the last success and when the last one finished."""

    __slots__ = ("failures", "last_failure")

    def __init__(self) -> None:
        self.failures = 0
        self.last_failure: float | None = None


def finished_time(pod: Mapping[str, Any]) -> float:
    """getFinishedTime: the latest finishedAt of its containers when all terminated, else the
    Ready=False transition, else the deletion time less its grace period, else its creation."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    latest: float | None = None
    statuses = status.get("containerStatuses") or []
    for container in statuses:
        finished = ((container.get("state") or {}).get("terminated") or {}).get("finishedAt")
        if not finished:
            latest = None
            break
        stamp = parse_time(str(finished))
        latest = stamp if latest is None else max(latest, stamp)
    if latest is not None:
        return latest
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Ready":
            if condition.get("status") == "False" and condition.get("lastTransitionTime"):
                return parse_time(str(condition["lastTransitionTime"]))
            break
    if meta.get("deletionTimestamp"):
        return parse_time(str(meta["deletionTimestamp"])) - float(meta.get("deletionGracePeriodSeconds") or 0)
    created = meta.get("creationTimestamp")
    return parse_time(str(created)) if created else 0.0


def remaining_time_per_index(
    last_failed: Mapping[str, Any] | None, now: float, absolute_failures: int
) -> float:
    """getRemainingTimePerIndex: the back-off of an index whose last failed pod had
    `absolute_failures` failures before it, counted from when that pod finished."""
    if last_failed is None:
        return 0.0
    return util.remaining_backoff(absolute_failures + 1, finished_time(last_failed), now)
