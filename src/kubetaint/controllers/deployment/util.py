"""Deployment arithmetic and annotations (mirrors pkg/controller/deployment/util/deployment_util.go:
ResolveFenceposts, MaxSurge, MaxUnavailable, NewRSNewReplicas, IsSaturated, GetProportion,
SetNewReplicaSetAnnotations, SetReplicasAnnotations, the replica counts, FindNewReplicaSet,
FindActiveOrLatest, and controller_utils.go's ReplicaSet orderings).

Everything here is pure: Deployments and ReplicaSets are Kubernetes JSON dicts, read only.
Absent fields take the apps/v1 defaults (replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit
10, progressDeadlineSeconds 600), as SetDefaults_Deployment would have stored them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.api.semantic import semantic

JSON = dict[str, Any]
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
#: annotationsToSkip: never copied from a Deployment onto its ReplicaSets.
SKIPPED_ANNOTATIONS = frozenset(
    {LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, ROLLBACK_TO}
)
MAX_REV_HISTORY_CHARS = 2000
DEFAULT_SURGE = DEFAULT_UNAVAILABLE = "25%"
DEFAULT_REVISION_HISTORY_LIMIT = 10
DEFAULT_PROGRESS_DEADLINE = 600
MAX_INT32 = 2**31 - 1


def spec_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def status_int(obj: Mapping[str, Any], field: str) -> int:
    return int((obj.get("status") or {}).get(field) or 0)


def replicas(obj: Mapping[str, Any]) -> int:
    """spec.replicas (default 1)."""
    value = spec_of(obj).get("replicas")
    return 1 if value is None else int(value)


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


# maxSurge / maxUnavailable -------------------------------------------------------------------


def scaled_value(value: int | str, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent; ValueError for a string that is not `N%`."""
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise ValueError("invalid value for IntOrString: invalid type: string is not a percentage")
    try:
        percent = int(value[:-1])
    except ValueError:
        raise ValueError(f"invalid value for IntOrString: invalid value {value!r}") from None
    exact = percent * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def resolve_fenceposts(
    max_surge: int | str | None, max_unavailable: int | str | None, desired: int
) -> tuple[int, int]:
    """ResolveFenceposts: surge rounds up, unavailable down; both 0 makes unavailable 1."""
    surge = scaled_value(0 if max_surge is None else max_surge, desired, True)
    unavailable = scaled_value(0 if max_unavailable is None else max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def is_rolling_update(deployment: Mapping[str, Any]) -> bool:
    return bool((spec_of(deployment).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate")


def _fenceposts(deployment: Mapping[str, Any]) -> tuple[int, int]:
    rolling = (spec_of(deployment).get("strategy") or {}).get("rollingUpdate") or {}
    surge = rolling.get("maxSurge", DEFAULT_SURGE)
    unavailable = rolling.get("maxUnavailable", DEFAULT_UNAVAILABLE)
    return resolve_fenceposts(surge, unavailable, replicas(deployment))


def max_surge(deployment: Mapping[str, Any]) -> int:
    return _fenceposts(deployment)[0] if is_rolling_update(deployment) else 0


def max_unavailable(deployment: Mapping[str, Any]) -> int:
    desired = replicas(deployment)
    if not is_rolling_update(deployment) or desired == 0:
        return 0
    return min(_fenceposts(deployment)[1], desired)


# replica counts --------------------------------------------------------------------------


def spec_replicas_sum(sets: Sequence[Mapping[str, Any] | None]) -> int:
    """GetReplicaCountForReplicaSets."""
    return sum(replicas(rs) for rs in sets if rs is not None)


def status_sum(sets: Sequence[Mapping[str, Any] | None], field: str) -> int:
    """GetActual/Ready/AvailableReplicaCountForReplicaSets (`replicas`, `readyReplicas`, ...)."""
    return sum(status_int(rs, field) for rs in sets if rs is not None)


def active(sets: Sequence[Mapping[str, Any] | None]) -> list[Mapping[str, Any]]:
    """FilterActiveReplicaSets: those with spec.replicas > 0."""
    return [rs for rs in sets if rs is not None and replicas(rs) > 0]


def new_rs_new_replicas(
    deployment: Mapping[str, Any], all_sets: Sequence[Mapping[str, Any] | None], new_rs: Mapping[str, Any]
) -> int:
    """NewRSNewReplicas: how far the new ReplicaSet may grow now."""
    desired = replicas(deployment)
    if not is_rolling_update(deployment):
        return desired
    current = spec_replicas_sum(all_sets)
    max_total = desired + max_surge(deployment)
    if current >= max_total:
        return replicas(new_rs)
    scale_up = min(max_total - current, desired - replicas(new_rs))
    return replicas(new_rs) + scale_up


def is_saturated(deployment: Mapping[str, Any], rs: Mapping[str, Any] | None) -> bool:
    if rs is None:
        return False
    try:
        desired = int(annotations_of(rs).get(DESIRED_REPLICAS, ""))
    except ValueError:
        return False
    want = replicas(deployment)
    return replicas(rs) == want and desired == want and status_int(rs, "availableReplicas") == want


def _go_round(value: float) -> int:
    """math.Round: halves away from zero."""
    return math.floor(value + 0.5) if value >= 0 else -math.floor(-value + 0.5)


def rs_fraction(rs: Mapping[str, Any], deployment: Mapping[str, Any]) -> int:
    """getReplicaSetFraction: the replicas `rs` gains (or loses) in proportional scaling."""
    desired = replicas(deployment)
    if desired == 0:
        return -replicas(rs)
    max_now = desired + max_surge(deployment)
    try:
        before = int(annotations_of(rs).get(MAX_REPLICAS, ""))
    except ValueError:
        before = 0
    if before == 0:
        before = status_int(deployment, "replicas")
        if before == 0:
            return 0
    return _go_round(replicas(rs) * max_now / before) - replicas(rs)


def proportion(rs: Mapping[str, Any] | None, deployment: Mapping[str, Any], to_add: int, added: int) -> int:
    """GetProportion."""
    if rs is None or replicas(rs) == 0 or to_add in (0, added):
        return 0
    fraction = rs_fraction(rs, deployment)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


# annotations -----------------------------------------------------------------------------


def replicas_annotations(desired: int, max_replicas: int) -> dict[str, str]:
    return {DESIRED_REPLICAS: str(desired), MAX_REPLICAS: str(max_replicas)}


def replicas_annotations_need_update(rs: Mapping[str, Any], desired: int, max_replicas: int) -> bool:
    current = annotations_of(rs)
    return any(current.get(k) != v for k, v in replicas_annotations(desired, max_replicas).items())


def revision(obj: Mapping[str, Any] | None) -> int:
    """The revision annotation as a number (0 when absent or malformed)."""
    if obj is None:
        return 0
    try:
        return int(annotations_of(obj).get(REVISION, "0"))
    except ValueError:
        return 0


def max_revision(sets: Sequence[Mapping[str, Any]]) -> int:
    return max((revision(rs) for rs in sets), default=0)


def new_rs_annotations(
    deployment: Mapping[str, Any], rs: Mapping[str, Any], new_revision: int, exists: bool
) -> dict[str, str] | None:
    """SetNewReplicaSetAnnotations: the ReplicaSet's annotations after the Deployment's are copied
    and its revision raised to `new_revision` (keeping history on a rollback), or None if
    unchanged."""
    result = dict(annotations_of(rs))
    for key, value in annotations_of(deployment).items():
        if key not in SKIPPED_ANNOTATIONS:
            result[key] = value
    old_text = result.get(REVISION)
    try:
        old = int(old_text) if old_text is not None else 0
    except ValueError:
        return None  # a malformed revision is left alone (upstream returns without changes)
    if old < new_revision:
        result[REVISION] = str(new_revision)
        if old_text is not None:
            history = _append_history(result.get(REVISION_HISTORY, ""), old_text)
            if history is not None:
                result[REVISION_HISTORY] = history
    if not exists:
        desired = replicas(deployment)
        result.update(replicas_annotations(desired, desired + max_surge(deployment)))
    return None if result == dict(annotations_of(rs)) else result


def _append_history(history: str, old_revision: str) -> str | None:
    revisions = history.split(",")
    if not revisions[0]:
        return old_revision
    total = len(history) + len(old_revision) + 1
    start = 0
    while total > MAX_REV_HISTORY_CHARS and start < len(revisions):
        total -= len(revisions[start]) + 1
        start += 1
    if total > MAX_REV_HISTORY_CHARS:
        return None
    return ",".join([*revisions[start:], old_revision])


# templates and orderings -----------------------------------------------------------------


def without_hash(template: Mapping[str, Any]) -> JSON:
    meta = dict(template.get("metadata") or {})
    meta["labels"] = {k: v for k, v in (meta.get("labels") or {}).items() if k != HASH_LABEL}
    result: JSON = semantic({**template, "metadata": meta})
    return result


def equal_ignore_hash(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return without_hash(a) == without_hash(b)


def created_key(rs: Mapping[str, Any]) -> tuple[str, str]:
    """ReplicaSetsByCreationTimestamp (RFC 3339 UTC strings sort as times), then name."""
    meta = rs.get("metadata") or {}
    return (str(meta.get("creationTimestamp") or ""), str(meta.get("name") or ""))


def by_size_newer(sets: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """ReplicaSetsBySizeNewer: larger first, then newer first."""
    newest_first = sorted(sets, key=created_key, reverse=True)
    return sorted(newest_first, key=replicas, reverse=True)


def by_size_older(sets: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """ReplicaSetsBySizeOlder: larger first, then older first."""
    return sorted(sorted(sets, key=created_key), key=replicas, reverse=True)


def by_revision(sets: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """ReplicaSetsByRevision: lower revision first, then older first."""
    return sorted(sets, key=lambda rs: (revision(rs), created_key(rs)))


def find_new_replica_set(
    deployment: Mapping[str, Any], sets: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's."""
    template = spec_of(deployment).get("template") or {}
    for rs in sorted(sets, key=created_key):
        if equal_ignore_hash(spec_of(rs).get("template") or {}, template):
            return rs
    return None


def find_active_or_latest(
    new_rs: Mapping[str, Any] | None, old: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """FindActiveOrLatest: the only active ReplicaSet, else the new or newest one if none is active."""
    if new_rs is None and not old:
        return None
    newest_first = sorted(old, key=created_key, reverse=True)
    live = active([*newest_first, new_rs])
    if not live:
        return new_rs if new_rs is not None else newest_first[0]
    return live[0] if len(live) == 1 else None
