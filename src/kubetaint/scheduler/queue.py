"""The scheduling queue: activeQ, backoffQ and unschedulable pods on an injected clock
(mirrors pkg/scheduler/backend/queue/scheduling_queue.go, active_queue.go and backoff_queue.go).

Timers follow upstream's periodic flushes (backoffQ every 1 s, leftover unschedulable pods every 30 s
after 5 minutes) but are only scheduled when a pod is waiting, so an idle virtual clock stays idle.

Backoff (1 s doubling to 10 s) counts the attempts a plugin rejected the pod
(UnschedulableCount), or its consecutive errors when its last attempt failed with one
(ConsecutiveErrorsCount). With SchedulerPopFromBackoffQ (beta, on by default in 1.35) a backoff
expires at the start of its 1-second ordering window, the backoffQ is flushed on whole seconds,
and when activeQ is empty the scheduler takes the head of the backoffQ of rejected pods (not
that of pods that failed with an error) at once: a pod an event requeues while backing off is
retried as soon as the scheduler is idle.

Unschedulable pods are indexed by the plugins that rejected them, so a cluster event looks only at
the pods whose rejecting plugins registered an event it matches (upstream's queueing hints ask
those plugins alone); pods are met in the order they entered the queue. Within one event, a hint
that declares a pod signature is asked once per signature.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetaint.clock.base import Clock, Handle
from kubetaint.scheduler.events import (
    ASSIGNED_POD,
    UNSCHEDULABLE_TIMEOUT,
    WILDCARD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
)
from kubetaint.scheduler.plugins.names import INTER_POD_AFFINITY, POD_TOPOLOGY_SPREAD
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import Status
from kubetaint.speed.reference import reference_mode

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
    #: the attempts a plugin rejected the pod (UnschedulableCount)
    unschedulable_count: int = 0
    #: the attempts in a row that failed with an error (ConsecutiveErrorsCount)
    consecutive_errors_count: int = 0
    #: when the backoff ends (BackoffExpiration), once worked out for this stay in the queue
    backoff_expiration: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated: bool = False


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
        pop_from_backoff: bool = True,
    ) -> None:
        self.clock = clock
        self.sort_key = sort_key
        self.pre_enqueue = pre_enqueue
        self.hints: Mapping[str, list[ClusterEventWithHint]] = hints or {}
        self.on_active = on_active
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        #: SchedulerPopFromBackoffQ
        self.pop_from_backoff = pop_from_backoff
        self.start = clock.now()
        self.pods: dict[str, QueuedPodInfo] = {}
        #: each queued pod's place (ACTIVE, BACKOFF, UNSCHEDULABLE or IN_FLIGHT), in queue order
        self.where: dict[str, str] = {}
        #: the position each key took in `where` (the order events and flushes meet pods in)
        self._position: dict[str, int] = {}
        self._next_position = 0
        #: unschedulable pods by rejecting plugin ("" for a pod no plugin rejected)
        self._by_plugin: dict[str, set[str]] = {}
        self._indexed: dict[str, frozenset[str]] = {}
        self._backoff: set[str] = set()
        #: the rejected pods' backoffQ as a heap (window, activeQ's order, queue position, key), for
        #: Pop when activeQ is empty; an entry is current while it is the pod's `_backoff_heads` one
        self._backoff_heap: list[tuple[float, Any, int, str]] = []
        self._backoff_heads: dict[str, tuple[float, Any, int, str]] = {}
        #: the plugins whose registered events match an event (by resource and action bits)
        self._interested: dict[tuple[str, int], frozenset[str]] = {}
        self._active: list[tuple[Any, int, str]] = []
        self._seq = 0
        self._timers: dict[float, Handle] = {}
        self.moved_events: list[str] = []

    # ---- bookkeeping -------------------------------------------------------------------------
    def _place(self, key: str, place: str) -> None:
        """Set the pod's place, keeping the unschedulable index and the backoff set."""
        where = self.where
        old = where.get(key)
        if old is None:
            self._position[key] = self._next_position
            self._next_position += 1
        where[key] = place
        if old == UNSCHEDULABLE:
            self._unindex(key)
        elif old == BACKOFF and place != BACKOFF:
            self._backoff.discard(key)
            self._backoff_heads.pop(key, None)
        if place == UNSCHEDULABLE:
            qpi = self.pods[key]
            plugins = frozenset(qpi.unschedulable_plugins | qpi.pending_plugins) or frozenset(("",))
            self._indexed[key] = plugins
            for plugin in plugins:
                keys = self._by_plugin.get(plugin)
                if keys is None:
                    keys = self._by_plugin[plugin] = set()
                keys.add(key)
        elif place == BACKOFF:
            self._backoff.add(key)

    def _unindex(self, key: str) -> None:
        for plugin in self._indexed.pop(key, ()):
            keys = self._by_plugin.get(plugin)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_plugin[plugin]

    def _in_order(self, keys: Iterable[str]) -> list[str]:
        return sorted(keys, key=self._position.__getitem__)

    def has_unschedulable(self) -> bool:
        """Whether some pod waits in unschedulablePods (else no cluster event can move one)."""
        return bool(self._indexed)

    def _push_active(self, qpi: QueuedPodInfo) -> None:
        key = qpi.pod_info.key
        self._place(key, ACTIVE)
        self._seq += 1
        heapq.heappush(self._active, (self.sort_key(qpi), self._seq, key))
        if self.on_active is not None:
            self.on_active()

    @staticmethod
    def backoff_count(qpi: QueuedPodInfo) -> int:
        """The count the backoff grows with: the consecutive errors after an error, else the
        rejections."""
        errors = qpi.consecutive_errors_count
        return errors if errors > 0 else qpi.unschedulable_count

    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        """calculateBackoffDuration: 0 before any failed attempt, then initial * 2^(count-1)
        capped at max."""
        count = self.backoff_count(qpi)
        if count == 0:
            return 0.0
        duration = self.initial_backoff
        for _ in range(1, count):
            if duration > self.max_backoff - duration:
                return self.max_backoff
            duration += duration
        return min(duration, self.max_backoff)

    def _align(self, when: float) -> float:
        """alignToWindow: the start of the 1-second ordering window (with SchedulerPopFromBackoffQ)."""
        return float(math.floor(when)) if self.pop_from_backoff else when

    def backoff_expiry(self, qpi: QueuedPodInfo) -> float | None:
        """getBackoffTime: when the backoff ends (aligned to its window), None when the pod owes
        none (no failed attempt yet)."""
        if self.backoff_count(qpi) == 0:
            return None
        expiry = qpi.backoff_expiration
        if expiry is None:
            expiry = qpi.backoff_expiration = self._align(qpi.timestamp + self.backoff_duration(qpi))
        return expiry

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """isPodBackingoff: the backoff ends in the current ordering window or later."""
        expiry = self.backoff_expiry(qpi)
        return expiry is not None and not expiry < self._align(self.clock.now())

    def _tick_after(self, when: float, period: float, strictly: bool, start: float | None = None) -> float:
        start = self.start if start is None else start
        k = (when - start) / period
        ticks = math.floor(k) + 1 if strictly else math.ceil(k)
        return start + max(ticks, 0) * period

    @staticmethod
    def _failed_with_error(qpi: QueuedPodInfo) -> bool:
        """Whether the pod is in the backoffQ of pods that failed with an error (podErrorBackoffQ)."""
        return not qpi.unschedulable_plugins and not qpi.pending_plugins

    def _timer(self, when: float, callback: Callable[[], None]) -> None:
        if when in self._timers and not self._timers[when].cancelled:
            return
        self._timers[when] = self.clock.call_at(when, callback)

    def _to_backoff(self, qpi: QueuedPodInfo) -> None:
        """moveToBackoffQ; with SchedulerPopFromBackoffQ a rejected pod there may be popped at
        once (the host is told, as upstream broadcasts to Pop)."""
        self._place(qpi.pod_info.key, BACKOFF)
        expiry = self.backoff_expiry(qpi)
        when = self.clock.now() if expiry is None else expiry
        # the first flush that finds it no longer backing off (whole seconds with the windows)
        start = 0.0 if self.pop_from_backoff else None
        tick = self._tick_after(when, BACKOFF_FLUSH_PERIOD, strictly=True, start=start)
        self._timer(tick, self.flush_backoff_completed)
        if self.pop_from_backoff and not self._failed_with_error(qpi):
            self._backoff_head(qpi)
            if self.on_active is not None:
                self.on_active()

    def _backoff_head(self, qpi: QueuedPodInfo) -> None:
        """(Re)place a rejected pod in the heap Pop takes backoffQ pods from."""
        key = qpi.pod_info.key
        entry = (self.backoff_expiry(qpi) or 0.0, self.sort_key(qpi), self._position[key], key)
        self._backoff_heads[key] = entry
        heapq.heappush(self._backoff_heap, entry)

    def _to_unschedulable(self, qpi: QueuedPodInfo) -> None:
        self._place(qpi.pod_info.key, UNSCHEDULABLE)
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
            self._push_active(qpi)
        else:
            qpi.gated = True
            qpi.unschedulable_plugins = {status.plugin}
            self._place(qpi.pod_info.key, UNSCHEDULABLE)

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
        elif place == BACKOFF and pi.key in self._backoff_heads:
            self._backoff_head(qpi)  # re-sort, as the backoffQ's AddOrUpdate
        elif place == UNSCHEDULABLE:
            if qpi.gated:
                self._enqueue(qpi)
            elif event is not None and self._worth_requeuing(qpi, event, old, pi.pod):
                self._requeue(qpi, event.label or "UnscheduledPodUpdate")

    def delete(self, key: str) -> None:
        self.pods.pop(key, None)
        place = self.where.pop(key, None)
        if place is not None:
            del self._position[key]
            if place == UNSCHEDULABLE:
                self._unindex(key)
            elif place == BACKOFF:
                self._backoff.discard(key)
                self._backoff_heads.pop(key, None)

    def pop(self) -> QueuedPodInfo | None:
        """The highest-priority active pod (now in flight); when activeQ is empty, with
        SchedulerPopFromBackoffQ, the head of the rejected pods' backoffQ; else None."""
        while self._active:
            _, _, key = heapq.heappop(self._active)
            if self.where.get(key) != ACTIVE:
                continue
            qpi = self.pods[key]
            # Skip stale heap entries left by updates (a later entry for the same pod exists).
            return self._in_flight(qpi)
        # activeQ is empty: the head of the rejected pods' backoffQ (popBackoff), backing off or
        # not: the earliest backoff window, then activeQ's order
        heap, heads = self._backoff_heap, self._backoff_heads
        while heap:
            entry = heapq.heappop(heap)
            key = entry[3]
            if heads.get(key) is entry:
                del heads[key]
                return self._in_flight(self.pods[key])
        return None

    def _in_flight(self, qpi: QueuedPodInfo) -> QueuedPodInfo:
        self._place(qpi.pod_info.key, IN_FLIGHT)
        qpi.attempts += 1
        qpi.backoff_expiration = None
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self.clock.now()
        return qpi

    def done(self, key: str) -> None:
        """The pod was scheduled (or dropped): it leaves the queue."""
        self.delete(key)

    def add_unschedulable(self, qpi: QueuedPodInfo) -> None:
        """AddUnschedulableIfNotPresent after a failed attempt."""
        key = qpi.pod_info.key
        if key not in self.pods:
            return
        if self._failed_with_error(qpi):
            qpi.consecutive_errors_count += 1
        else:
            qpi.unschedulable_count += 1
            qpi.consecutive_errors_count = 0
        qpi.timestamp = self.clock.now()
        qpi.backoff_expiration = None
        if self._failed_with_error(qpi):
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
        pods = self.pods
        ready = [q for k in self._in_order(self._backoff) if not self.is_backing_off(q := pods[k])]
        errors = [q for q in ready if self._failed_with_error(q)]
        rejected = [q for q in ready if not self._failed_with_error(q)]
        # podBackoffQ (by window, then activeQ's order with the windows), then podErrorBackoffQ
        by_window = (
            (lambda q: (self.backoff_expiry(q) or 0.0, self.sort_key(q))) if self.pop_from_backoff else None
        )
        for qpi in [*sorted(rejected, key=by_window or self._expiry), *sorted(errors, key=self._expiry)]:
            self._push_active(qpi)

    def _expiry(self, qpi: QueuedPodInfo) -> float:
        return self.backoff_expiry(qpi) or 0.0

    def flush_unschedulable_leftover(self) -> None:
        now = self.clock.now()
        self._timers = {t: h for t, h in self._timers.items() if t > now}
        pods = self.pods
        stale = [
            q
            for k in self._in_order(self._indexed)
            if not (q := pods[k]).gated and now - q.timestamp > self.max_in_unschedulable
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
        memo: dict[tuple[int, Hashable], bool] | None = None,
    ) -> bool:
        """isPodWorthRequeuing: a pod no plugin rejected, or a wildcard event, always; else whether a
        rejecting plugin's hint for a registered event matching this one says Queue. (`memo`: the
        answers of hints with a pod signature, for one event.)"""
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors or event.resource == WILDCARD:
            return True
        pi = qpi.pod_info
        for plugin in rejectors:
            for registered in self.hints.get(plugin, ()):
                if not registered.event.matches(event):
                    continue
                signature = registered.signature
                if signature is None or memo is None or reference_mode():
                    if registered.hint(pi, old, new):
                        return True
                    continue
                mark = (id(registered), signature(pi))
                answer = memo.get(mark)
                if answer is None:
                    answer = memo[mark] = registered.hint(pi, old, new)
                if answer:
                    return True
        return False

    def _interested_plugins(self, event: ClusterEvent) -> frozenset[str]:
        """The plugins with a registered event that matches `event`."""
        mark = (event.resource, int(event.action))
        plugins = self._interested.get(mark)
        if plugins is None:
            plugins = self._interested[mark] = frozenset(
                name
                for name, registered in self.hints.items()
                if any(r.event.matches(event) for r in registered)
            )
        return plugins

    def _move(
        self,
        keys: Iterable[str],
        event: ClusterEvent,
        old: Mapping[str, Any] | None,
        new: Mapping[str, Any] | None,
    ) -> int:
        """movePodsToActiveOrBackoffQueue of the given unschedulable pods, in queue order."""
        label = event.label or f"{event.resource}/{event.action!r}"
        memo: dict[tuple[int, Hashable], bool] = {}
        moved = 0
        pods = self.pods
        for key in self._in_order(keys):
            qpi = pods[key]
            if qpi.gated:
                continue
            if self._worth_requeuing(qpi, event, old, new, memo):
                self._requeue(qpi, label)
                moved += 1
        return moved

    def _cross_topology(self, pod: Mapping[str, Any]) -> set[str]:
        """getUnschedulablePodsWithCrossTopologyTerm, by rejecting plugin: the pods PodTopologySpread
        rejected in the pod's namespace and those InterPodAffinity rejected (their hints decide)."""
        by_plugin = self._by_plugin
        keys = set(by_plugin.get(INTER_POD_AFFINITY, ()))
        spread = by_plugin.get(POD_TOPOLOGY_SPREAD)
        if spread:
            namespace = (pod.get("metadata") or {}).get("namespace") or "default"
            keys.update(k for k in spread if self.pods[k].pod_info.namespace == namespace)
        return keys

    def cross_topology_waiting(self) -> bool:
        """Whether some unschedulable pod was rejected for its cross-topology terms (then an assigned
        pod's label change may help it)."""
        by_plugin = self._by_plugin
        return INTER_POD_AFFINITY in by_plugin or POD_TOPOLOGY_SPREAD in by_plugin

    def assigned_pod_added(self, pod: Mapping[str, Any]) -> int:
        """AssignedPodAdded: only a pod rejected for its cross-topology terms can be helped."""
        if not self._indexed:
            return 0
        keys = self._cross_topology(pod)
        return (
            self._move(keys, ClusterEvent(ASSIGNED_POD, ActionType.Add, "AssignedPodAdd"), None, pod)
            if keys
            else 0
        )

    def assigned_pod_updated(
        self, old: Mapping[str, Any], new: Mapping[str, Any], actions: ActionType
    ) -> int:
        """AssignedPodUpdated: a resource scale-down may help any pod (the hints decide); another
        change only the pods rejected for their cross-topology terms."""
        if not self._indexed:
            return 0
        event = ClusterEvent(ASSIGNED_POD, actions, "AssignedPodUpdate")
        if actions & ActionType.UpdatePodScaleDown:
            return self.move_on_event(event, old, new)
        keys = self._cross_topology(new)
        return self._move(keys, event, old, new) if keys else 0

    def move_on_event(
        self, event: ClusterEvent, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
    ) -> int:
        """MoveAllToActiveOrBackoffQueue: requeue unschedulable pods whose hints accept the event.

        Only the pods a plugin interested in the event rejected (or that no plugin rejected) are
        examined, in queue order."""
        if not self._indexed:
            return 0
        if event.resource == WILDCARD:
            keys: Iterable[str] = self._indexed
        else:
            by_plugin = self._by_plugin
            groups = [by_plugin[p] for p in self._interested_plugins(event) if p in by_plugin]
            if "" in by_plugin:
                groups.append(by_plugin[""])
            if not groups:
                return 0
            keys = groups[0] if len(groups) == 1 else set().union(*groups)
        return self._move(keys, event, old, new)
