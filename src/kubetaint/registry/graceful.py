"""Graceful pod deletion (mirrors apiserver pkg/registry/rest/delete.go `BeforeDelete` and
pkg/registry/core/pod/strategy.go `CheckGracefulDelete`).

Deleting a pod that is bound to a node and not finished does not remove it: the pod gets
`metadata.deletionTimestamp` (now + the grace period) and `deletionGracePeriodSeconds`, shows as
Terminating, and the kubelet on its node removes it (a delete with grace period 0 and a UID
precondition) once its containers stopped. A pod whose node is gone or unreachable therefore
stays Terminating, as on a real cluster. A pod with finalizers is never removed by a delete: it
stays Terminating (deletionGracePeriodSeconds 0) until an update removes its last finalizer.

The grace period is the request's `gracePeriodSeconds`, else the pod's
`spec.terminationGracePeriodSeconds`, else 30 (the API default that SetDefaults_PodSpec would
have written); it is 0 for a pod not bound to a node or already Succeeded/Failed, and a negative
request counts as 1. A pod already terminating only lets a shorter grace period through (the
deletion timestamp moves earlier by the difference); a grace period of 0 deletes at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubetaint.clock.base import Clock, format_time, parse_time
from kubetaint.store.interface import JSON, Store
from kubetaint.store.mutation import check_delete_preconditions

#: SetDefaults_PodSpec's terminationGracePeriodSeconds.
DEFAULT_TERMINATION_GRACE_PERIOD = 30
_UINT64_MASK = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class DeletePlan:
    """What a delete request does to a pod: remove it now, or store `updated` (the pod marked
    for graceful deletion), or nothing (a graceful deletion is already pending)."""

    immediate: bool
    updated: JSON | None = None


def go_seconds(period: int) -> float:
    """`time.Second * time.Duration(period)` in seconds, as BeforeDelete computes the deletion
    timestamp: an int64 count of nanoseconds that wraps around past ~292 years (a grace period of
    2^63-1 seconds puts the deletion timestamp one second in the past)."""
    nanoseconds = (period * 1_000_000_000) & _UINT64_MASK
    if nanoseconds > _INT64_MAX:
        nanoseconds -= 1 << 64
    return nanoseconds / 1e9


def pod_grace_period(pod: Mapping[str, Any], requested: int | None) -> int:
    """CheckGracefulDelete: the grace period a delete of `pod` gets."""
    if requested is not None:
        period = requested
    else:
        spec_period = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        period = spec_period if isinstance(spec_period, int) else DEFAULT_TERMINATION_GRACE_PERIOD
    if not (pod.get("spec") or {}).get("nodeName"):
        period = 0
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        period = 0
    return 1 if period < 0 else period


def plan_pod_delete(pod: Mapping[str, Any], requested: int | None, now: float) -> DeletePlan:
    """BeforeDelete for a pod at time `now`."""
    if requested is not None and requested < 0:
        requested = 1
    meta = pod.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return _plan_for_terminating(pod, requested)
    period = pod_grace_period(pod, requested)
    if period == 0:
        return DeletePlan(immediate=True)
    marked = {
        **meta,
        "deletionTimestamp": format_time(now + go_seconds(period)),
        "deletionGracePeriodSeconds": period,
    }
    return DeletePlan(immediate=False, updated={**pod, "metadata": marked})


def _plan_with_finalizers(pod: Mapping[str, Any], requested: int | None, now: float) -> DeletePlan:
    """A delete that would remove a pod at once while it has finalizers only marks it (the generic
    registry's updateForGracefulDeletionAndFinalizers): deletionGracePeriodSeconds 0 and the
    deletion timestamp BeforeDelete computes (now, or a pending one moved earlier by its grace
    period) or, for a pod already at grace period 0, markAsDeleting's (now unless earlier). The
    pod goes once an update removes its last finalizer (ShouldDeleteDuringUpdate). `updated` is
    None when the pod is already marked so."""
    meta = pod.get("metadata") or {}
    current = meta.get("deletionGracePeriodSeconds")
    stamp = meta.get("deletionTimestamp")
    if not stamp:
        deadline = now
    elif isinstance(current, int) and current > 0:
        deadline = parse_time(str(stamp)) - go_seconds(current)  # shortened to 0
    else:
        deadline = min(parse_time(str(stamp)), now)
    marked = {**meta, "deletionTimestamp": format_time(deadline), "deletionGracePeriodSeconds": 0}
    if marked == meta:
        return DeletePlan(immediate=False)
    return DeletePlan(immediate=False, updated={**pod, "metadata": marked})


def _plan_for_terminating(pod: Mapping[str, Any], requested: int | None) -> DeletePlan:
    meta = pod.get("metadata") or {}
    current = meta.get("deletionGracePeriodSeconds")
    if not isinstance(current, int) or current <= 0:
        return DeletePlan(immediate=True)  # an earlier deletion left no grace period: finish it
    if requested is None or requested >= current:
        return DeletePlan(immediate=False)  # pending: only a shorter grace period changes anything
    if requested == 0:
        return DeletePlan(immediate=True)
    deadline = parse_time(str(meta["deletionTimestamp"])) - go_seconds(current) + go_seconds(requested)
    marked = {**meta, "deletionTimestamp": format_time(deadline), "deletionGracePeriodSeconds": requested}
    return DeletePlan(immediate=False, updated={**pod, "metadata": marked})


def delete_pod(
    store: Store,
    clock: Clock,
    namespace: str,
    name: str,
    *,
    grace_period_seconds: int | None = None,
    resource_version: str | None = None,
    uid: str | None = None,
    dry_run: bool = False,
    current: JSON | None = None,
) -> JSON:
    """Delete a pod the way kube-apiserver does: mark it for graceful deletion, or remove it.
    Returns the pod as it is afterwards (the removed object when it is gone)."""
    pod = current if current is not None else store.get("pods", namespace, name)
    check_delete_preconditions("pods", name, pod, resource_version, uid)
    plan = plan_pod_delete(pod, grace_period_seconds, clock.now())
    if plan.immediate and (pod.get("metadata") or {}).get("finalizers"):
        plan = _plan_with_finalizers(pod, grace_period_seconds, clock.now())
        if plan.updated is None:
            return pod
    if plan.immediate:
        return store.delete(
            "pods", namespace, name, resource_version=resource_version, uid=uid, dry_run=dry_run
        )
    if plan.updated is None:
        return pod
    marked = plan.updated
    # the update carries the read resourceVersion: a concurrent change makes it a 409 Conflict
    return store.update("pods", marked, dry_run=dry_run)
