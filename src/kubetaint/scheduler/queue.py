"""The scheduling queue: activeQ, backoffQ and unschedulable pods on an injected clock
(mirrors pkg/scheduler/backend/queue/scheduling_queue.go and backoff_queue.go).

Timers follow upstream's periodic flushes (backoffQ every 1 s, leftover unschedulable pods every 30 s
after 5 minutes) but are only scheduled when a pod is waiting, so an idle virtual clock stays idle.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetaint.clock.base import Clock, Handle
from kubetaint.scheduler.events import (
    UNSCHEDULABLE_TIMEOUT,
    WILDCARD,
    ClusterEvent,
    ClusterEventWithHint,
)
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import Status

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_MAX_IN_UNSCHEDULABLE = 300.0
BACKOFF_FLUSH_PERIOD = 1.0
LEFTOVER_FLUSH_PERIOD = 30.0

ACTIVE, BACKOFF, UNSCHEDULABLE, IN_FLIGHT = "activeQ", "backoffQ", "unschedulablePods", "inFlight"


@dataclass
class QueuedPodInfo:
    """framework.QueuedPodInfo."""

    pod_info: PodInfo
    timestamp: float
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated: bool = False
    gating_status: Status | None = None


class SchedulingQueue:
    """PriorityQueue: pods wait in exactly one of activeQ, backoffQ or unschedulablePods."""

    def __init__(
        self,
        clock: Clock,
        *,
        sort_key: Callable[[QueuedPodInfo], Any],
        pre_enqueue: Callable[[PodInfo], Status],
        hints: Mapping[str, list[ClusterEventWithHint]] | None = None,
        on_active: Callable[[], None] | None = None,
        initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        max_in_unschedulable: float = DEFAULT_MAX_IN_UNSCHEDULABLE,
    ) -> None:
        self.clock = clock
        self.sort_key = sort_key
        self.pre_enqueue = pre_enqueue
        self.hints: Mapping[str, list[ClusterEventWithHint]] = hints or {}
        self.on_active = on_active
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self.start = clock.now()
        self.pods: dict[str, QueuedPodInfo] = {}
        self.where: dict[str, str] = {}
        self._active: list[tuple[Any, int, str]] = []
        self._seq = 0
        self._timers: dict[float, Handle] = {}
        self.moved_events: list[str] = []

    # ---- bookkeeping -------------------------------------------------------------------------
    def _push_active(self, qpi: QueuedPodInfo) -> None:
        key = qpi.pod_info.key
        self.where[key] = ACTIVE
        self._seq += 1
        heapq.heappush(self._active, (self.sort_key(qpi), self._seq, key))
        if self.on_active is not None:
            self.on_active()

    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        """0 before the first attempt, then initial * 2^(attempts-1) capped at max."""
        if qpi.attempts == 0:
            return 0.0
        duration = self.initial_backoff
        for _ in range(1, qpi.attempts):
            if duration > self.max_backoff - duration:
                return self.max_backoff
            duration += duration
        return min(duration, self.max_backoff)

    def backoff_expiry(self, qpi: QueuedPodInfo) -> float:
        return qpi.timestamp + self.backoff_duration(qpi)

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        return self.backoff_expiry(qpi) > self.clock.now()

    def _tick_after(self, when: float, period: float, strictly: bool) -> float:
        k = (when - self.start) / period
        ticks = math.floor(k) + 1 if strictly else math.ceil(k)
        return self.start + max(ticks, 0) * period

    def _timer(self, when: float, callback: Callable[[], None]) -> None:
        if when in self._timers and not self._timers[when].cancelled:
            return
        self._timers[when] = self.clock.call_at(when, callback)

    def _to_backoff(self, qpi: QueuedPodInfo) -> None:
        self.where[qpi.pod_info.key] = BACKOFF
        tick = self._tick_after(self.backoff_expiry(qpi), BACKOFF_FLUSH_PERIOD, strictly=False)
        self._timer(tick, self.flush_backoff_completed)

    def _to_unschedulable(self, qpi: QueuedPodInfo) -> None:
        self.where[qpi.pod_info.key] = UNSCHEDULABLE
        due = qpi.timestamp + self.max_in_unschedulable
        self._timer(
            self._tick_after(due, LEFTOVER_FLUSH_PERIOD, strictly=True), self.flush_unschedulable_leftover
        )

    # ---- host-facing operations ----------------------------------------------------------------
    def add(self, pi: PodInfo) -> None:
        """A new unscheduled pod: activeQ, or unschedulablePods when a PreEnqueue plugin gates it."""
        qpi = QueuedPodInfo(pi, self.clock.now())
        self.pods[pi.key] = qpi
        self._enqueue(qpi)

    def _enqueue(self, qpi: QueuedPodInfo) -> None:
        status = self.pre_enqueue(qpi.pod_info)
        if status.is_success():
            qpi.gated = False
            qpi.gating_status = None
            self._push_active(qpi)
        else:
            qpi.gated = True
            qpi.gating_status = status
            qpi.unschedulable_plugins = {status.plugin}
            self.where[qpi.pod_info.key] = UNSCHEDULABLE

    def update(self, pi: PodInfo, event: ClusterEvent | None, old: Mapping[str, Any] | None) -> None:
        """An unscheduled pod changed: refresh it and requeue it if its hints say the change helps."""
        qpi = self.pods.get(pi.key)
        if qpi is None:
            self.add(pi)
            return
        qpi.pod_info = pi
        place = self.where.get(pi.key)
        if place == ACTIVE:
            self._push_active(qpi)  # re-sort (stale heap entries are skipped on pop)
        elif place == UNSCHEDULABLE:
            if qpi.gated:
                self._enqueue(qpi)
            elif event is not None and self._worth_requeuing(qpi, event, old, pi.pod):
                self._requeue(qpi, event.label or "UnscheduledPodUpdate")

    def delete(self, key: str) -> None:
        self.pods.pop(key, None)
        self.where.pop(key, None)

    def pop(self) -> QueuedPodInfo | None:
        """The highest-priority active pod (now in flight), or None when activeQ is empty."""
        while self._active:
            _, _, key = heapq.heappop(self._active)
            if self.where.get(key) != ACTIVE:
                continue
            qpi = self.pods[key]
            # Skip stale heap entries left by updates (a later entry for the same pod exists).
            self.where[key] = IN_FLIGHT
            qpi.attempts += 1
            if qpi.initial_attempt_timestamp is None:
                qpi.initial_attempt_timestamp = self.clock.now()
            return qpi
        return None

    def done(self, key: str) -> None:
        """The pod was scheduled (or dropped): it leaves the queue."""
        self.delete(key)

    def add_unschedulable(self, qpi: QueuedPodInfo) -> None:
        """AddUnschedulableIfNotPresent after a failed attempt."""
        key = qpi.pod_info.key
        if key not in self.pods:
            return
        qpi.timestamp = self.clock.now()
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            self._to_backoff(qpi)  # an error, not a rejection: retry after backoff
        else:
            self._to_unschedulable(qpi)

    def add_after_binding_error(self, qpi: QueuedPodInfo) -> None:
        """AddUnschedulableIfNotPresent for a pod whose binding failed (it left the queue when it
        was assumed): with no rejecting plugin it is an error, retried after its backoff, which
        grows with its attempts (1 s doubling to 10 s)."""
        key = qpi.pod_info.key
        if key in self.pods:
            return
        self.pods[key] = qpi
        qpi.unschedulable_plugins = set()
        qpi.pending_plugins = set()
        self.add_unschedulable(qpi)

    def active_len(self) -> int:
        return sum(1 for w in self.where.values() if w == ACTIVE)

    def pending(self) -> dict[str, list[str]]:
        """Pending pod keys per queue (for hosts and tests)."""
        out: dict[str, list[str]] = {ACTIVE: [], BACKOFF: [], UNSCHEDULABLE: []}
        for key, place in self.where.items():
            if place in out:
                out[place].append(key)
        return out

    # ---- flushing and requeueing -----------------------------------------------------------------
    def flush_backoff_completed(self) -> None:
        now = self.clock.now()
        self._timers = {t: h for t, h in self._timers.items() if t > now}
        ready = [
            q for k, q in self.pods.items() if self.where.get(k) == BACKOFF and not self.is_backing_off(q)
        ]
        for qpi in sorted(ready, key=self.backoff_expiry):
            self._push_active(qpi)

    def flush_unschedulable_leftover(self) -> None:
        now = self.clock.now()
        self._timers = {t: h for t, h in self._timers.items() if t > now}
        stale = [
            q
            for k, q in self.pods.items()
            if self.where.get(k) == UNSCHEDULABLE
            and not q.gated
            and now - q.timestamp > self.max_in_unschedulable
        ]
        for qpi in stale:
            self._requeue(qpi, UNSCHEDULABLE_TIMEOUT.label)

    def _requeue(self, qpi: QueuedPodInfo, label: str) -> None:
        self.moved_events.append(label)
        if self.is_backing_off(qpi):
            self._to_backoff(qpi)
        else:
            self._push_active(qpi)

    def _worth_requeuing(
        self,
        qpi: QueuedPodInfo,
        event: ClusterEvent,
        old: Mapping[str, Any] | None,
        new: Mapping[str, Any] | None,
    ) -> bool:
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors or event.resource == WILDCARD:
            return True
        for plugin in rejectors:
            for registered in self.hints.get(plugin, ()):
                if registered.event.matches(event) and registered.hint(qpi.pod_info, old, new):
                    return True
        return False

    def move_on_event(
        self, event: ClusterEvent, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
    ) -> int:
        """MoveAllToActiveOrBackoffQueue: requeue unschedulable pods whose hints accept the event."""
        moved = 0
        for key, place in list(self.where.items()):
            if place != UNSCHEDULABLE:
                continue
            qpi = self.pods[key]
            if qpi.gated:
                continue
            if self._worth_requeuing(qpi, event, old, new):
                self._requeue(qpi, event.label or f"{event.resource}/{event.action!r}")
                moved += 1
        return moved
