"""Leader election on a coordination.k8s.io/v1 Lease, on the injected clock (mirrors client-go
tools/leaderelection/leaderelection.go with resourcelock.LeaseLock).

A candidate tries to acquire the lease every `retry_period` (jittered by 1.2 as JitterUntil
does); it may take it when the lease is free, or when the record it last observed has not
changed for `lease_duration` of its own time. The leader renews every `retry_period` and gives
up leadership when no renewal succeeded for `renew_deadline`. `release()` (ReleaseOnCancel)
empties holderIdentity so a successor need not wait for the lease to expire.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubetaint.api import componentconfig
from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle, format_micro_time
from kubetaint.store.interface import JSON, Store, StoreError

log = logging.getLogger(__name__)

LEASES = "leases.coordination.k8s.io"
#: kube-scheduler's and kube-controller-manager's --leader-elect-* defaults and lease names.
LEASE_DURATION = componentconfig.LEASE_DURATION
RENEW_DEADLINE = componentconfig.RENEW_DEADLINE
RETRY_PERIOD = componentconfig.RETRY_PERIOD
JITTER_FACTOR = 1.2
LEASE_NAMESPACE = "kube-system"
SCHEDULER_LEASE = "kube-scheduler"
CONTROLLER_MANAGER_LEASE = "kube-controller-manager"


@dataclass(frozen=True)
class ElectionConfig:
    """LeaderElectionConfig: the lock and the three durations (seconds)."""

    name: str
    identity: str
    namespace: str = LEASE_NAMESPACE
    lease_duration: float = LEASE_DURATION
    renew_deadline: float = RENEW_DEADLINE
    retry_period: float = RETRY_PERIOD

    def check(self) -> None:
        """NewLeaderElector's validation, with upstream's messages."""
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if self.lease_duration < 1 or self.renew_deadline < 1 or self.retry_period < 1e-3:
            raise ValueError("leaseDuration, renewDeadline and retryPeriod must be positive")
        if not self.identity:
            raise ValueError("Lock identity is empty")


def _record(spec: dict[str, Any]) -> tuple[Any, ...]:
    keys = ("holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime", "leaseTransitions")
    return tuple(spec.get(k) for k in keys)


class LeaderElector:
    """Runs one candidate's election loop on `clock` (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        config: ElectionConfig,
        *,
        on_started_leading: Callable[[], None],
        on_stopped_leading: Callable[[], None],
        on_new_leader: Callable[[str], None] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        config.check()
        self.store = store
        self.clock = clock
        self.config = config
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._rng = rng or random.Random(0)
        self._observed: tuple[Any, ...] | None = None
        self._observed_time = 0.0
        self._last_renew = 0.0
        self._handle: Handle | None = None
        self.leader = False
        self.reported_leader = ""
        self.running = False

    # loop ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Begin acquiring (the first attempt runs at once, as wait.JitterUntil's does)."""
        self.running = True
        self._handle = self.clock.call_soon(self._tick)

    def stop(self) -> None:
        """Cancel the loop (without releasing the lease)."""
        self.running = False
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        self._handle = None
        if not self.running:
            return
        now = self.clock.now()
        ok = self.try_acquire_or_renew()
        if self.leader:
            if ok:
                self._last_renew = now
            elif now - self._last_renew >= self.config.renew_deadline:
                log.info("failed to renew lease %s/%s: timed out", self.config.namespace, self.config.name)
                self.leader = False
                self.running = False
                self._on_stopped()
                return
            delay = self.config.retry_period
        elif ok:
            self.leader = True
            self._last_renew = now
            log.info("successfully acquired lease %s/%s", self.config.namespace, self.config.name)
            self._on_started()
            delay = self.config.retry_period
        else:
            delay = self.config.retry_period * (1 + self._rng.random() * JITTER_FACTOR)
        if self.running:
            self._handle = self.clock.call_later(delay, self._tick)

    # one attempt -----------------------------------------------------------------------------

    def try_acquire_or_renew(self) -> bool:
        """tryAcquireOrRenew: True when this candidate holds the lease afterwards."""
        now = self.clock.now()
        stamp = format_micro_time(now)
        wanted: JSON = {
            "holderIdentity": self.config.identity,
            "leaseDurationSeconds": int(self.config.lease_duration),
            "acquireTime": stamp,
            "renewTime": stamp,
            "leaseTransitions": 0,
        }
        try:
            lease = self.store.get(LEASES, self.config.namespace, self.config.name)
        except StatusError as err:
            if err.code != 404:
                return False
            return self._create(wanted, now)
        except StoreError as err:
            log.info("error retrieving lease %s: %s", self.config.name, err)
            return False
        spec = dict(lease.get("spec") or {})
        record = _record(spec)
        if record != self._observed:
            self._observed, self._observed_time = record, now
            self._report(str(spec.get("holderIdentity") or ""))
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or self.config.lease_duration)
        held_by_us = holder == self.config.identity
        if holder and not held_by_us and self._observed_time + duration > now:
            return False
        if held_by_us:
            wanted["acquireTime"] = spec.get("acquireTime") or stamp
            wanted["leaseTransitions"] = int(spec.get("leaseTransitions") or 0)
        else:
            wanted["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        try:
            self.store.update(LEASES, {**lease, "spec": {**spec, **wanted}})
        except (StatusError, StoreError) as err:
            log.info("failed to update lease %s: %s", self.config.name, err)
            return False
        self._observed, self._observed_time = _record({**spec, **wanted}), now
        self._report(self.config.identity)
        return True

    def _create(self, spec: JSON, now: float) -> bool:
        lease: JSON = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.config.name, "namespace": self.config.namespace},
            "spec": spec,
        }
        try:
            self.store.create(LEASES, lease)
        except (StatusError, StoreError) as err:
            log.info("error initially creating lease %s: %s", self.config.name, err)
            return False
        self._observed, self._observed_time = _record(spec), now
        self._report(self.config.identity)
        return True

    def _report(self, holder: str) -> None:
        if holder != self.reported_leader:
            self.reported_leader = holder
            if self._on_new_leader is not None and holder:
                self._on_new_leader(holder)

    def release(self) -> bool:
        """ReleaseOnCancel: hand the lease back (holderIdentity empty, leaseDurationSeconds 1)."""
        self.stop()
        if not self.leader:
            return True
        self.leader = False
        try:
            lease = self.store.get(LEASES, self.config.namespace, self.config.name)
            spec = dict(lease.get("spec") or {})
            if spec.get("holderIdentity") != self.config.identity:
                return True
            stamp = format_micro_time(self.clock.now())
            spec.update(holderIdentity="", leaseDurationSeconds=1, renewTime=stamp, acquireTime=stamp)
            self.store.update(LEASES, {**lease, "spec": spec})
        except (StatusError, StoreError) as err:
            log.info("failed to release lease %s: %s", self.config.name, err)
            return False
        return True
