"""Pod helpers shared by the workload controllers: controller references, active/ready pods,
pods from templates with apiserver-style generated names, and the deletion ranking.

Mirrors pkg/controller/controller_utils.go (FilterActivePods, GetPodFromTemplate,
ActivePodsWithRanks with LogarithmicScaleDown), pkg/api/v1/pod/util.go (IsPodReady,
IsPodAvailable) and apiserver names.SimpleNameGenerator.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cmp_to_key
from typing import Any

from kubetaint.clock.base import parse_time
from kubetaint.core.names import RANDOM_LENGTH
from kubetaint.speed.reference import reference_mode

JSON = dict[str, Any]
#: utilrand alphanums: no vowels (no words) and no confusable characters.
DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def key_of(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    namespace, name = meta.get("namespace"), meta.get("name")
    # strings as they are (the usual case, asked millions of times), anything else as str() made it
    return (
        namespace if type(namespace) is str else str(namespace or ""),
        name if type(name) is str else str(name or ""),
    )


def controller_of(obj: Mapping[str, Any]) -> JSON | None:
    """metav1.GetControllerOf: the ownerReference with controller=true."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def controller_ref_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """controller_of without the copy, for reading only (informer handlers ask for every event)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def controller_ref(owner: Mapping[str, Any], api_version: str, kind: str) -> JSON:
    meta = owner.get("metadata") or {}
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def is_terminal(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_active(pod: Mapping[str, Any]) -> bool:
    """FilterActivePods: not terminal and not being deleted."""
    return not is_terminal(pod) and not (pod.get("metadata") or {}).get("deletionTimestamp")


def ready_condition(pod: Mapping[str, Any]) -> JSON | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return dict(cond)
    return None


def is_ready(pod: Mapping[str, Any]) -> bool:
    # ready_condition without its copy: asked for every pod a view or a ranking looks at
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


def ready_since(pod: Mapping[str, Any]) -> float | None:
    cond = ready_condition(pod)
    if cond is None or cond.get("status") != "True" or not cond.get("lastTransitionTime"):
        return None
    return parse_time(str(cond["lastTransitionTime"]))


def is_available(pod: Mapping[str, Any], min_ready_seconds: int, now: float) -> bool:
    """IsPodAvailable: ready, and ready for at least minReadySeconds."""
    if not is_ready(pod):
        return False
    if min_ready_seconds == 0:
        return True
    since = ready_since(pod)
    return since is not None and since + min_ready_seconds <= now


def pod_from_template(template: Mapping[str, Any], owner: Mapping[str, Any], ref: JSON, name: str) -> JSON:
    """GetPodFromTemplate: template labels, annotations and spec; the owner's namespace.

    The pods of one template share its labels object (read-only: a stored template's), so that
    what is worked out from a pod's labels object can be reused for the next pod's (off with
    KUBETAINT_REFERENCE=1: each pod gets a copy)."""
    tmeta = template.get("metadata") or {}
    labels = tmeta.get("labels")
    meta: JSON = {
        "name": name,
        "generateName": name[:-RANDOM_LENGTH],
        "namespace": (owner.get("metadata") or {}).get("namespace", "default"),
        "labels": labels if type(labels) is dict and not reference_mode() else dict(labels or {}),
        "ownerReferences": [ref],
    }
    if tmeta.get("annotations"):
        meta["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        meta["finalizers"] = list(tmeta["finalizers"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": dict(template.get("spec") or {})}


def _deletion_cost(pod: Mapping[str, Any]) -> int:
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(DELETION_COST_ANNOTATION)
    try:
        return int(raw) if raw is not None else 0
    except ValueError:
        return 0


def _restarts(pod: Mapping[str, Any]) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return max((int(s.get("restartCount") or 0) for s in statuses), default=0)


def _log_rank(then: float, now: float) -> int:
    delta = (now - then) * 1e9
    return int(math.log2(delta)) if delta > 0 else -1


def _newer_first(t1: float | None, t2: float | None, uid1: str, uid2: str, now: float) -> int:
    """Zero times first, then logarithmic buckets of age (younger first), then UID."""
    if t1 is None or t2 is None:
        if t1 is None and t2 is None:
            return 0
        return -1 if t1 is None else 1
    if t1 == t2:
        return 0
    diff = _log_rank(t1, now) - _log_rank(t2, now)
    if diff == 0:
        return -1 if uid1 < uid2 else (1 if uid1 > uid2 else 0)
    return -1 if diff < 0 else 1


def _created(pod: Mapping[str, Any]) -> float | None:
    stamp = (pod.get("metadata") or {}).get("creationTimestamp")
    return parse_time(str(stamp)) if stamp else None


def rank_for_deletion(pods: Sequence[JSON], ranks: Sequence[int], now: float) -> list[JSON]:
    """ActivePodsWithRanks order: the pods to delete first come first."""

    def compare(a: tuple[JSON, int], b: tuple[JSON, int]) -> int:
        p1, r1 = a
        p2, r2 = b
        n1, n2 = bool((p1.get("spec") or {}).get("nodeName")), bool((p2.get("spec") or {}).get("nodeName"))
        if n1 != n2:
            return -1 if not n1 else 1
        ph1 = _PHASE_ORDINAL.get((p1.get("status") or {}).get("phase") or "", 0)
        ph2 = _PHASE_ORDINAL.get((p2.get("status") or {}).get("phase") or "", 0)
        if ph1 != ph2:
            return -1 if ph1 < ph2 else 1
        if is_ready(p1) != is_ready(p2):
            return -1 if not is_ready(p1) else 1
        c1, c2 = _deletion_cost(p1), _deletion_cost(p2)
        if c1 != c2:
            return -1 if c1 < c2 else 1
        if r1 != r2:
            return -1 if r1 > r2 else 1
        uid1 = str((p1.get("metadata") or {}).get("uid") or "")
        uid2 = str((p2.get("metadata") or {}).get("uid") or "")
        if is_ready(p1) and is_ready(p2):
            order = _newer_first(ready_since(p1), ready_since(p2), uid1, uid2, now)
            if order:
                return order
        restarts1, restarts2 = _restarts(p1), _restarts(p2)
        if restarts1 != restarts2:
            return -1 if restarts1 > restarts2 else 1
        return _newer_first(_created(p1), _created(p2), uid1, uid2, now)

    ranked = sorted(zip(pods, ranks, strict=True), key=cmp_to_key(compare))
    return [pod for pod, _ in ranked]


def ranks_by_colocation(pods: Sequence[JSON], related: Sequence[JSON]) -> list[int]:
    """getPodsRankedByRelatedPodsOnSameNode: how many related active pods share each pod's node."""
    per_node: dict[str, int] = {}
    for pod in related:
        if is_active(pod):
            node = str((pod.get("spec") or {}).get("nodeName") or "")
            per_node[node] = per_node.get(node, 0) + 1
    return [per_node.get(str((p.get("spec") or {}).get("nodeName") or ""), 0) for p in pods]
