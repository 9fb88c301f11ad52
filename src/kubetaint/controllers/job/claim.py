"""A Job's claim of its pods, as controller.PodControllerRefManager.ClaimPods does for
job_controller.go's getPodsForJob: an orphan pod matching the Job's selector (neither it nor the
Job being deleted) is adopted with a controller reference and the tracking finalizer; a pod the
Job controls whose labels no longer match is released (its controller reference removed) unless
the Job is being deleted. Decisions only: the controller writes the adoptions and releases."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetaint.api.selectors import LabelSelector

JSON = dict[str, Any]


@dataclass
class Claim:
    """The pods a Job keeps, adopts and releases."""

    adopt: list[JSON] = field(default_factory=list)
    release: list[JSON] = field(default_factory=list)


def claim_pods(
    job: Mapping[str, Any], selector: LabelSelector, owned: Iterable[JSON], orphans: Iterable[JSON]
) -> Claim:
    """ClaimObject over the Job's controlled pods and the namespace's orphan pods."""
    meta = job.get("metadata") or {}
    deleting = bool(meta.get("deletionTimestamp"))
    result = Claim()
    for pod in owned:
        if not selector.matches((pod.get("metadata") or {}).get("labels")) and not deleting:
            result.release.append(pod)
    if deleting:
        return result
    for pod in orphans:
        pod_meta = pod.get("metadata") or {}
        if pod_meta.get("deletionTimestamp") or pod_meta.get("namespace") != meta.get("namespace"):
            continue
        if selector.matches(pod_meta.get("labels")):
            result.adopt.append(pod)
    return result


def adopted(pod: JSON, job: Mapping[str, Any], finalizer: str) -> JSON:
    """The pod with the Job's controller reference added and the tracking finalizer (AdoptPod's
    patch)."""
    meta = dict(pod.get("metadata") or {})
    job_meta = job.get("metadata") or {}
    ref = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": job_meta.get("name"),
        "uid": job_meta.get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    meta["ownerReferences"] = [*(meta.get("ownerReferences") or []), ref]
    finalizers = list(meta.get("finalizers") or [])
    if finalizer not in finalizers:
        finalizers.append(finalizer)
    meta["finalizers"] = finalizers
    return {**pod, "metadata": meta}


def released(pod: JSON, uid: str) -> JSON:
    """The pod without its owner reference to `uid` (ReleasePod's patch)."""
    meta = dict(pod.get("metadata") or {})
    refs = [r for r in meta.get("ownerReferences") or [] if not (isinstance(r, dict) and r.get("uid") == uid)]
    if refs:
        meta["ownerReferences"] = refs
    else:
        meta.pop("ownerReferences", None)
    return {**pod, "metadata": meta}
