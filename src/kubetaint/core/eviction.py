"""Taint-based eviction decisions, as pure functions.

Mirrors pkg/controller/tainteviction/taint_eviction.go: getNoExecuteTaints, getMinTolerationTime,
the change filters of PodUpdated/NodeUpdated and the timer decision of processPodOnNode. The
controller (kubetaint.controllers.tainteviction) applies the decisions to its timer queue.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubetaint.core.matching import NO_EXECUTE, get_matching_tolerations

#: getMinTolerationTime's "tolerated forever" answer.
FOREVER = -1.0
_INT64_MAX = 2**63 - 1
_UINT64_MASK = 2**64 - 1


def no_execute_taints(taints: Sequence[Mapping[str, Any]] | None) -> list[Mapping[str, Any]]:
    """getNoExecuteTaints: the NoExecute taints, in node order."""
    return [taint for taint in taints or () if taint.get("effect") == NO_EXECUTE]


def node_no_execute_taints(node: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The NoExecute taints of a node object (none for a missing node)."""
    if node is None:
        return []
    return no_execute_taints((node.get("spec") or {}).get("taints"))


def min_toleration_seconds(used: Sequence[Mapping[str, Any]]) -> float:
    """getMinTolerationTime: 0 for no tolerations or any `tolerationSeconds <= 0`, FOREVER (-1)
    when every toleration leaves the seconds unset (or at math.MaxInt64, the function's starting
    minimum), else the smallest value as `time.Duration(seconds) * time.Second`, which wraps
    around past ~292 years; a wrapped negative duration reads as FOREVER, as processPodOnNode does."""
    if not used:
        return 0.0
    smallest = _INT64_MAX
    for toleration in used:
        seconds = toleration.get("tolerationSeconds")
        if seconds is None:
            continue
        value = int(seconds)
        if value <= 0:
            return 0.0
        smallest = min(smallest, value)
    if smallest == _INT64_MAX:
        return FOREVER
    nanoseconds = (smallest * 1_000_000_000) & _UINT64_MASK
    if nanoseconds > _INT64_MAX:
        return FOREVER
    return nanoseconds / 1e9


def pod_update_needs_processing(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """PodUpdated's filter: skip an update whose tolerations (Semantic.DeepEqual) and nodeName are
    unchanged; additions and deletions always count."""
    if old is None or new is None:
        return True
    old_spec = old.get("spec") or {}
    new_spec = new.get("spec") or {}
    same_tolerations = (old_spec.get("tolerations") or []) == (new_spec.get("tolerations") or [])
    return not (same_tolerations and old_spec.get("nodeName", "") == new_spec.get("nodeName", ""))


def node_update_needs_processing(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """NodeUpdated's filter: only the NoExecute taints count, compared as an ordered list (so a
    reordering or a new `timeAdded` counts as a change)."""
    if old is None or new is None:
        return True
    return node_no_execute_taints(old) != node_no_execute_taints(new)


@dataclass(frozen=True, slots=True)
class TimerDecision:
    """What processPodOnNode does with a pod's eviction timer.

    `cancel`: cancel the existing work (an event is emitted only for a real timer).
    `add`: then AddWork(created_at, fire_at) (a no-op when the key is still present).
    """

    cancel: bool = False
    add: tuple[float, float] | None = None


def decide_timer(
    taints: Sequence[Mapping[str, Any]],
    tolerations: Sequence[Mapping[str, Any]],
    now: float,
    existing_created_at: float | None,
    *,
    enable_comparison: bool = False,
) -> TimerDecision:
    """processPodOnNode as a decision.

    `existing_created_at` is the CreatedAt of the pod's pending timer (None when there is none, or
    only a running immediate deletion). Deadlines count from `now`, the processing time; once a
    timer exists, a later tolerated update never moves it (not even at the same virtual instant).
    """
    cancel_first = not taints
    if cancel_first:
        existing_created_at = None  # upstream cancels before looking the timer up
    all_tolerated, used = get_matching_tolerations(taints, tolerations, enable_comparison)
    if not all_tolerated:
        return TimerDecision(cancel=True, add=(now, now))
    minimum = min_toleration_seconds(used)
    if minimum < 0:
        return TimerDecision(cancel=True)
    start = now
    trigger = now + minimum
    if existing_created_at is not None:
        start = existing_created_at
        # Upstream keeps the timer when `created + min < now + min`. Its clock always moves between
        # two handlings; a virtual clock does not, so a timer from this same instant counts as older.
        if start <= now:
            return TimerDecision(cancel=cancel_first)
        return TimerDecision(cancel=True, add=(start, trigger))
    return TimerDecision(cancel=cancel_first, add=(start, trigger))
