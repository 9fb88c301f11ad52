"""Rollout arithmetic (mirrors pkg/controller/deployment/rolling.go reconcileNewReplicaSet,
reconcileOldReplicaSets, cleanupUnhealthyReplicas, scaleDownOldReplicaSetsForRollingUpdate, and
sync.go's proportional `scale`).

Pure plans: each function returns the new sizes, keyed by ReplicaSet name, and the caller
writes them; so the upstream test tables apply as data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.controllers.deployment import util

RS = Mapping[str, Any]


def _name(rs: RS) -> str:
    return str((rs.get("metadata") or {}).get("name") or "")


def reconcile_new(deployment: RS, all_sets: Sequence[RS | None], new_rs: RS) -> int | None:
    """reconcileNewReplicaSet: the new ReplicaSet's next size, or None when it stays."""
    desired = util.replicas(deployment)
    current = util.replicas(new_rs)
    if current == desired:
        return None
    if current > desired:
        return desired
    target = util.new_rs_new_replicas(deployment, all_sets, new_rs)
    return None if target == current else target


def max_scaled_down(
    deployment: RS, all_sets: Sequence[RS | None], old: Sequence[RS], new_rs: RS | None
) -> int:
    """reconcileOldReplicaSets' budget: how many old replicas may go without dropping below
    the minimum available (counting the new ReplicaSet's unavailable pods against it)."""
    if util.spec_replicas_sum(old) == 0:
        return 0
    min_available = util.replicas(deployment) - util.max_unavailable(deployment)
    new_unavailable = 0
    if new_rs is not None:
        new_unavailable = util.replicas(new_rs) - util.status_int(new_rs, "availableReplicas")
    return util.spec_replicas_sum(all_sets) - min_available - new_unavailable


def cleanup_unhealthy(old: Sequence[RS], max_cleanup: int) -> dict[str, int]:
    """cleanupUnhealthyReplicas: scale old ReplicaSets down by their unavailable replicas,
    oldest first, at most `max_cleanup` in all."""
    sizes: dict[str, int] = {}
    total = 0
    for rs in sorted(old, key=util.created_key):
        if total >= max_cleanup:
            break
        size, available = util.replicas(rs), util.status_int(rs, "availableReplicas")
        if size in (0, available):
            continue
        count = min(max_cleanup - total, size - available)
        sizes[_name(rs)] = size - count
        total += count
    return sizes


def scale_down_old(deployment: RS, all_sets: Sequence[RS | None], old: Sequence[RS]) -> dict[str, int]:
    """scaleDownOldReplicaSetsForRollingUpdate: scale old ReplicaSets down, oldest first, by the
    available replicas above the minimum available."""
    min_available = util.replicas(deployment) - util.max_unavailable(deployment)
    available = util.status_sum(all_sets, "availableReplicas")
    if available <= min_available:
        return {}
    budget = available - min_available
    sizes: dict[str, int] = {}
    total = 0
    for rs in sorted(old, key=util.created_key):
        if total >= budget:
            break
        size = util.replicas(rs)
        if size == 0:
            continue
        count = min(size, budget - total)
        sizes[_name(rs)] = size - count
        total += count
    return sizes


def proportional(deployment: RS, new_rs: RS | None, old: Sequence[RS]) -> tuple[dict[str, int], str]:
    """sync.go `scale` for a rolling Deployment whose size changed mid-rollout: spread the change
    over the active ReplicaSets in proportion to their size (leftovers to the largest).
    Returns the sizes and the scaling operation ("up", "down" or "")."""
    sets = util.active([*old, new_rs])
    desired = util.replicas(deployment)
    allowed = desired + util.max_surge(deployment) if desired > 0 else 0
    to_add = allowed - util.spec_replicas_sum(sets)
    operation = ""
    if to_add > 0:
        sets, operation = util.by_size_newer(sets), "up"
    elif to_add < 0:
        sets, operation = util.by_size_older(sets), "down"
    sizes: dict[str, int] = {}
    added = 0
    for rs in sets:
        share = util.proportion(rs, deployment, to_add, added) if to_add else 0
        sizes[_name(rs)] = util.replicas(rs) + share
        added += share
    if sets and to_add:
        first = _name(sets[0])
        sizes[first] = max(0, sizes[first] + to_add - added)
    return sizes, operation
