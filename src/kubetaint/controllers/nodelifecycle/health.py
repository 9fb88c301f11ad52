"""Node health from Ready heartbeats and Lease renewals (mirrors tryUpdateNodeHealth and
nodeHealthData in pkg/controller/nodelifecycle/node_lifecycle_controller.go).

The controller keeps, per node, the local time it last saw a heartbeat (`probe_timestamp`): a new
Ready `lastHeartbeatTime`, a Lease `renewTime` later than the saved one, or the first observation.
Past the grace period (nodeMonitorGracePeriod, or nodeStartupGracePeriod for a node that never
posted Ready) Ready and the pressure conditions become Unknown and the status is written.
"""

from __future__ import annotations

import logging
from collections.abc import Container, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from itertools import repeat
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, format_time, parse_time
from kubetaint.controllers.nodelifecycle.settings import NodeLifecycleSettings
from kubetaint.core.conditions import get_status_condition, mark_conditions_unknown
from kubetaint.store.informer import Informer
from kubetaint.store.interface import JSON, Store

log = logging.getLogger(__name__)

NODE_LEASE_NAMESPACE = "kube-node-lease"
LEASES = "leases.coordination.k8s.io"


@dataclass(slots=True)
class NodeHealth:
    """nodeHealthData: local times (clock seconds) plus the last status and lease seen (slots:
    lease renewals move `lease` and `probe_timestamp` of a record ~1.2 M times an hour at 5,000
    nodes)."""

    probe_timestamp: float
    ready_transition_timestamp: float
    status: Mapping[str, Any] | None
    lease: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class HealthResult:
    """What tryUpdateNodeHealth returns: the (possibly updated) node copy, the Ready condition
    observed before this pass changed it, and the current one (None when the node has none)."""

    node: JSON
    observed_ready: Mapping[str, Any]
    current_ready: Mapping[str, Any] | None
    wrote: bool = False


_EMPTY: Mapping[str, Any] = {}


def renew_text(lease: Mapping[str, Any] | None) -> str | None:
    """A lease's spec.renewTime as written (None when absent or empty)."""
    return ((lease or {}).get("spec") or {}).get("renewTime") or None


def renewed_after(newer: str | None, older: str | None) -> bool:
    """Whether renewTime `older` is before `newer` (False when either is missing). Two MicroTimes
    in the canonical form (`2006-01-02T15:04:05.000000Z`, what kubelets write) compare as text,
    which orders them as times; anything else is parsed."""
    if not newer or not older:
        return False
    if _canonical(newer) and _canonical(older):
        return older < newer
    return parse_time(older) < parse_time(newer)


def _canonical(text: str) -> bool:
    """Whether a renewTime is a MicroTime in the canonical form (compared as text)."""
    return len(text) == 27 and text[26] == "Z" and text[19] == "."


class NodeHealthTracker:
    """nodeHealthMap plus tryUpdateNodeHealth."""

    def __init__(self, store: Store, clock: Clock, settings: NodeLifecycleSettings, leases: Informer) -> None:
        self._store = store
        self._clock = clock
        self._settings = settings
        self._leases = leases
        self._records: dict[str, NodeHealth] = {}
        #: leases a heartbeat round renewed that `observe_leases` observed in bulk at the time in
        #: `_observed_at`, not yet entered in their records (`_record` enters one when read)
        self._observed: dict[str, Mapping[str, Any]] = {}
        self._observed_at: dict[str, float] = {}
        #: a canonical renewTime no saved lease is later than ("": no lease saved yet; None: not
        #: known): a round renewing to a later one is observed for every node (`_observe_renewed`)
        self._renew_bound: str | None = ""

    @property
    def healths(self) -> dict[str, NodeHealth]:
        """nodeHealthMap: each node's record (the caller may change them)."""
        for name in list(self._observed):
            self._record(name)
        self._renew_bound = None  # (a record may change)
        return self._records

    def _record(self, name: str) -> NodeHealth | None:
        """The record of `name`, the lease observed in bulk for it entered."""
        record = self._records.get(name)
        observed = self._observed.pop(name, None)
        if observed is not None:
            at = self._observed_at.pop(name)
            if record is not None:
                record.lease = observed
                record.probe_timestamp = at
        return record

    def _saved(self, lease: Mapping[str, Any] | None) -> None:
        """`lease` is saved in a record: keep `_renew_bound` a bound."""
        bound = self._renew_bound
        if lease is None or bound is None:
            return
        renew = renew_text(lease)
        if renew is None or not _canonical(renew):
            self._renew_bound = None
        elif renew > bound:
            self._renew_bound = renew

    def get(self, name: str) -> NodeHealth | None:
        return self._record(name)

    def probe_timestamp(self, name: str) -> float | None:
        """The record's probe_timestamp (None: no record), read without entering a lease observed
        in bulk."""
        at = self._observed_at.get(name)
        if at is not None and name in self._records:
            return at
        record = self._records.get(name)
        return None if record is None else record.probe_timestamp

    def reset_probes(self, names: list[str], now: float) -> None:
        """On leaving full-disruption mode every node gets a fresh grace period."""
        for name in names:
            health = self._record(name)
            if health is not None:
                health.probe_timestamp = now
                health.ready_transition_timestamp = now

    def try_update_node_health(self, node: Mapping[str, Any]) -> HealthResult:
        """tryUpdateNodeHealth on a copy of `node`; raises StatusError when the status write fails."""
        now = self._clock.now()
        meta = node.get("metadata") or {}
        name = str(meta.get("name") or "")
        created_text = str(meta.get("creationTimestamp") or format_time(now))
        status: JSON = dict(node.get("status") or {})
        copy: JSON = {**node, "status": status}
        health = self._record(name)
        current = get_status_condition(status, "Ready")
        if current is None:
            observed: Mapping[str, Any] = {
                "type": "Ready",
                "status": "Unknown",
                "lastHeartbeatTime": created_text,
                "lastTransitionTime": created_text,
            }
            grace = self._settings.node_startup_grace_period
            if health is not None:
                health = replace(health, status=status)
            else:
                created = parse_time(created_text)
                health = NodeHealth(created, created, status)
        else:
            observed = dict(current)
            grace = self._settings.node_monitor_grace_period
        # Upstream compares against the lease saved before this pass, and a refreshed health
        # record starts without one (so the next pass counts the lease as renewed).
        saved_lease = health.lease if health is not None else None
        health = self._observe_status(health, status, current, now)
        observed_lease = self.current_lease(name)
        if observed_lease is not None and (
            saved_lease is None or renewed_after(renew_text(observed_lease), renew_text(saved_lease))
        ):
            health.lease = observed_lease
            health.probe_timestamp = now
            self._saved(observed_lease)
        self._records[name] = health

        if now > health.probe_timestamp + grace:
            conditions = mark_conditions_unknown(
                status.get("conditions") or [], created_text, format_time(now)
            )
            status["conditions"] = conditions
            current = get_status_condition(status, "Ready")
            if current != observed:
                self._store.update("nodes", copy)
                self._records[name] = NodeHealth(health.probe_timestamp, now, status, observed_lease)
                self._saved(observed_lease)
                return HealthResult(copy, observed, current, wrote=True)
        return HealthResult(copy, observed, current)

    def observe_leases(
        self,
        leases: Iterable[tuple[str, Mapping[str, Any] | None]],
        names: Container[str],
        now: float,
        renew: str | None = None,
    ) -> None:
        """The lease step of try_update_node_health alone, for the nodes of `names` whose object did
        not change, given the current leases as (node name, lease) pairs, a name at most once
        (thousands at each pass: inlined, and a group of leases renewed together compares its
        renewTimes once). `renew`: the renewTime every lease holds (a heartbeat round's)."""
        empty = _EMPTY
        if renew:
            self._observe_renewed(leases, names, now, renew)
            return
        record = self._record if self._observed else self._records.get
        last_newer: object = None
        last_older: object = None
        later = False
        for name, lease in leases:
            if lease is None or name not in names:
                continue
            health = record(name)
            if health is None:
                continue
            saved = health.lease
            if saved is not None:
                newer = (lease.get("spec") or empty).get("renewTime") or None
                older = (saved.get("spec") or empty).get("renewTime") or None
                if newer != last_newer or older != last_older:
                    last_newer, last_older, later = newer, older, renewed_after(newer, older)
                if not later:
                    continue
            health.lease = lease
            health.probe_timestamp = now
            self._saved(lease)

    def observe_round(
        self,
        names: list[str],
        leases: Sequence[Mapping[str, Any]],
        eligible: AbstractSet[str],
        now: float,
        renew: str,
    ) -> None:
        """`observe_leases` of a heartbeat round's leases (`leases[i]` the node `names[i]`'s, each
        renewed to `renew`) for the nodes of `eligible`.

        Speeds up the usual round (off in reference mode, where no pass keeps a round): when every
        node of the round is eligible and `renew` is later than every lease
        saved (`_renew_bound`), each lease counts as renewed, and the leases are kept as they are
        with the time of this pass, each entered in its record when the record is read (a node
        without a record has nothing to enter: its observation is dropped, as the lease step of
        a node without a record does nothing)."""
        bound = self._renew_bound
        if bound is None:
            bound = self._renew_bound = self._bound()
        if bound is not None and _canonical(renew) and renew > bound and eligible >= set(names):
            self._observed.update(zip(names, leases, strict=True))
            self._observed_at.update(zip(names, repeat(now)))
            self._renew_bound = renew
            return
        self._observe_renewed(zip(names, leases, strict=True), eligible, now, renew)

    def _bound(self) -> str | None:
        """The latest renewTime the saved leases hold ("": none saved; None: one is not canonical)."""
        bound = ""
        for name in list(self._observed):
            self._record(name)
        for record in self._records.values():
            renew = renew_text(record.lease) if record.lease is not None else ""
            if renew is None or (renew and not _canonical(renew)):
                return None
            bound = max(bound, renew)
        return bound

    def _observe_renewed(
        self,
        leases: Iterable[tuple[str, Mapping[str, Any] | None]],
        names: Container[str],
        now: float,
        renew: str,
    ) -> None:
        """`observe_leases` of leases that all hold renewTime `renew`."""
        empty = _EMPTY
        record = self._record if self._observed else self._records.get
        last_older: object = None
        later = False
        observed = None
        for name, lease in leases:
            if name not in names:
                continue
            health = record(name)
            if health is None:
                continue
            saved = health.lease
            if saved is not None:
                older = (saved.get("spec") or empty).get("renewTime") or None
                if older != last_older:
                    last_older, later = older, renewed_after(renew, older)
                if not later:
                    continue
            health.lease = observed = lease
            health.probe_timestamp = now
        self._saved(observed)

    def observe_status_post(self, name: str, node: Mapping[str, Any], now: float) -> bool:
        """tryUpdateNodeHealth on `node` when its Ready condition moved only its heartbeat since
        the one recorded (a kubelet's status post on a node whose Ready status stays): the record
        made afresh at `now`, then the lease step, as a visit makes them (the grace period cannot
        run out: the probe is now). False, with nothing done, for any other node."""
        health = self._record(name)
        status = node.get("status")
        if health is None or type(status) is not dict:
            return False
        saved = get_status_condition(health.status, "Ready")
        current = get_status_condition(status, "Ready")
        if (
            saved is None
            or current is None
            or saved.get("status") != current.get("status")
            or saved.get("lastTransitionTime") != current.get("lastTransitionTime")
            or saved.get("lastHeartbeatTime") == current.get("lastHeartbeatTime")
        ):
            return False
        record = NodeHealth(now, health.ready_transition_timestamp, dict(status))
        observed = self.current_lease(name)
        if observed is not None and (
            health.lease is None or renewed_after(renew_text(observed), renew_text(health.lease))
        ):
            record.lease = observed
            self._saved(observed)
        self._records[name] = record
        return True

    def current_lease(self, name: str) -> Mapping[str, Any] | None:
        """The node's Lease as the lease informer holds it."""
        return self._leases.get(NODE_LEASE_NAMESPACE, name)

    def would_observe(self, name: str, lease: Mapping[str, Any] | None) -> bool:
        """Whether observing `lease` now counts as a renewal (a later renewTime than the saved
        lease's, or no saved lease)."""
        health = self._record(name)
        if health is None or lease is None:
            return False
        if health.lease is None:
            return True
        return renewed_after(renew_text(lease), renew_text(health.lease))

    def _observe_status(
        self,
        health: NodeHealth | None,
        status: Mapping[str, Any],
        current: Mapping[str, Any] | None,
        now: float,
    ) -> NodeHealth:
        saved = get_status_condition(health.status, "Ready") if health is not None else None
        if health is None:
            log.info("Missing timestamp for Node. Assuming now as a timestamp")
            return NodeHealth(now, now, status)
        if saved is None and current is not None:
            return NodeHealth(now, now, status)
        if saved is not None and current is None:
            log.error("ReadyCondition was removed from Status of Node")
            return NodeHealth(now, now, status)
        if (
            saved is not None
            and current is not None
            and saved.get("lastHeartbeatTime") != current.get("lastHeartbeatTime")
        ):
            transition = health.ready_transition_timestamp
            if saved.get("lastTransitionTime") != current.get("lastTransitionTime"):
                transition = now
            return NodeHealth(now, transition, status)
        return health


__all__ = ["HealthResult", "NodeHealth", "NodeHealthTracker", "StatusError"]
