"""Which pods a StatefulSet's RollingUpdate deletes in one sync (stateful_set_control.go at
v1.35): with the MaxUnavailableStatefulSet gate (beta, on by default in 1.35)
updateStatefulSetAfterInvariantEstablished, up to maxUnavailable minus the unavailable replicas
from the highest ordinal down to the partition; without it the loop of updateStatefulSet, one
pod at a time, waiting on an unavailable pod above. `replicas` holds the set's pods by index from
its start ordinal, None where a pod does not exist; the partition counts indexes, as upstream's
`updateMin`."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.controllers.statefulset import pods as stspods

JSON = dict[str, Any]
_INT = re.compile(r"^[+-]?[0-9]+$")


def max_unavailable(value: Any, replica_count: int) -> int:
    """getStatefulSetMaxUnavailable: maxUnavailable (1 when unset) scaled against the replicas, a
    percentage rounded down, at least 1. ValueError for a value that is neither an integer nor a
    percentage (intstr.GetScaledValueFromIntOrPercent's errors)."""
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        scaled = value
    elif not value.endswith("%"):
        raise ValueError("invalid type: string is not a percentage")
    elif not _INT.match(value[:-1]):
        raise ValueError(f'invalid value for IntOrString: invalid value "{value}"')
    else:
        scaled = math.floor(int(value[:-1]) * replica_count / 100)
    return max(scaled, 1)


def is_unavailable(pod: Mapping[str, Any] | None, min_ready_seconds: int, now: float) -> bool:
    """isUnavailable: not running and available for minReadySeconds, or terminating (a pod not
    created yet is unavailable)."""
    if pod is None:
        return True
    return not stspods.is_running_and_available(pod, min_ready_seconds, now) or stspods.is_terminating(pod)


def _outdated(pod: Mapping[str, Any] | None, update_revision: str) -> bool:
    return pod is not None and stspods.revision_of(pod) != update_revision and not stspods.is_terminating(pod)


def with_max_unavailable(
    replicas: Sequence[JSON | None],
    update_revision: str,
    partition: int,
    *,
    most: int,
    min_ready_seconds: int,
    now: float,
) -> list[JSON]:
    """updateStatefulSetAfterInvariantEstablished: nothing while the unavailable replicas (over
    the whole replica range) are `most` or more; else up to `most` minus them of the pods not at
    the update revision and not terminating, from the highest index down to `partition`."""
    unavailable = sum(1 for pod in replicas if is_unavailable(pod, min_ready_seconds, now))
    if unavailable >= most:
        return []
    budget = most - unavailable
    chosen: list[JSON] = []
    for target in range(len(replicas) - 1, partition - 1, -1):
        if len(chosen) >= budget:
            break
        pod = replicas[target]
        if pod is not None and _outdated(pod, update_revision):
            chosen.append(pod)
    return chosen


def one_at_a_time(
    replicas: Sequence[JSON | None],
    update_revision: str,
    partition: int,
    *,
    min_ready_seconds: int,
    now: float,
) -> list[JSON]:
    """updateStatefulSet's loop without the gate: the highest pod not at the update revision and
    not terminating, unless an unavailable pod above it (or it missing) comes first."""
    for target in range(len(replicas) - 1, partition - 1, -1):
        pod = replicas[target]
        if pod is not None and _outdated(pod, update_revision):
            return [pod]
        if is_unavailable(pod, min_ready_seconds, now):
            return []
    return []
