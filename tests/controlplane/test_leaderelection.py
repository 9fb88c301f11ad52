"""Leader election on a Lease (client-go leaderelection semantics) on a virtual clock over a
memory store: one leader among candidates, renewals, failover after the lease expires, release,
lost leadership after the renew deadline, the Lease's fields and the config checks."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.clock.base import parse_time
from kubetaint.controlplane.leaderelection import LEASES, ElectionConfig, LeaderElector
from kubetaint.store.interface import JSON, StoreError
from kubetaint.store.memory import MemoryStore

LEASE = "kube-scheduler"


class Candidate:
    """One elector and what its callbacks saw."""

    def __init__(self, store: Any, clock: VirtualClock, identity: str, **durations: float) -> None:
        self.events: list[str] = []
        self.elector = LeaderElector(
            store,
            clock,
            ElectionConfig(LEASE, identity, **durations),
            on_started_leading=lambda: self.events.append("started"),
            on_stopped_leading=lambda: self.events.append("stopped"),
            on_new_leader=lambda who: self.events.append(f"leader {who}"),
        )


class FlakyStore:
    """A store that stops answering when `down` (the API server unreachable)."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.down = False

    def __getattr__(self, name: str) -> Any:
        if self.down and name in ("get", "update", "create"):
            raise StoreError("cannot reach the API server")
        return getattr(self.store, name)


def lease(store: MemoryStore) -> JSON:
    spec: JSON = store.get(LEASES, "kube-system", LEASE)["spec"]
    return spec


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def store(clock: VirtualClock) -> MemoryStore:
    return MemoryStore(clock)


def test_the_first_candidate_creates_the_lease_and_leads(clock: VirtualClock, store: MemoryStore) -> None:
    one = Candidate(store, clock, "one")
    one.elector.start()
    clock.run_pending()
    assert one.events == ["leader one", "started"]
    spec = lease(store)
    assert spec["holderIdentity"] == "one"
    assert spec["leaseDurationSeconds"] == 15
    assert spec["leaseTransitions"] == 0
    assert parse_time(spec["acquireTime"]) == pytest.approx(clock.now())
    assert spec["acquireTime"].endswith("Z") and "." in spec["acquireTime"]


def test_two_candidates_one_leader_and_renewals_move_only_renew_time(
    clock: VirtualClock, store: MemoryStore
) -> None:
    one, two = Candidate(store, clock, "one"), Candidate(store, clock, "two")
    one.elector.start()
    clock.run_pending()
    two.elector.start()
    acquired = lease(store)["acquireTime"]
    clock.advance(60)
    assert one.elector.leader and not two.elector.leader
    assert two.events == ["leader one"]
    spec = lease(store)
    assert spec["holderIdentity"] == "one"
    assert spec["acquireTime"] == acquired
    assert parse_time(spec["renewTime"]) >= clock.now() - 2.0
    assert spec["leaseTransitions"] == 0


def test_a_stopped_leader_is_replaced_after_the_lease_duration(
    clock: VirtualClock, store: MemoryStore
) -> None:
    one, two = Candidate(store, clock, "one"), Candidate(store, clock, "two")
    one.elector.start()
    clock.run_pending()
    two.elector.start()
    clock.advance(10)
    one.elector.stop()  # killed: no release
    stopped_at = clock.now()
    clock.advance(14)
    assert not two.elector.leader, "the lease has not expired yet in two's eyes"
    clock.advance(15)
    assert two.elector.leader
    spec = lease(store)
    assert spec["holderIdentity"] == "two"
    assert spec["leaseTransitions"] == 1
    assert parse_time(spec["acquireTime"]) - stopped_at >= 15
    assert two.events == ["leader one", "leader two", "started"]


def test_release_hands_the_lease_over_at_the_next_retry(clock: VirtualClock, store: MemoryStore) -> None:
    one, two = Candidate(store, clock, "one"), Candidate(store, clock, "two")
    one.elector.start()
    clock.run_pending()
    two.elector.start()
    clock.advance(5)
    assert one.elector.release()
    assert lease(store)["holderIdentity"] == ""
    assert lease(store)["leaseDurationSeconds"] == 1
    clock.advance(2.0 * 2.2)
    assert two.elector.leader
    assert lease(store)["leaseTransitions"] == 1


def test_a_leader_that_cannot_renew_stops_leading_after_the_renew_deadline(
    clock: VirtualClock, store: MemoryStore
) -> None:
    flaky = FlakyStore(store)
    one = Candidate(flaky, clock, "one")
    one.elector.start()
    clock.run_pending()
    flaky.down = True
    clock.advance(8)
    assert one.elector.leader
    clock.advance(4)
    assert not one.elector.leader
    assert one.events == ["leader one", "started", "stopped"]


def test_a_lease_updated_by_someone_else_is_never_taken_while_it_keeps_changing(
    clock: VirtualClock, store: MemoryStore
) -> None:
    store.create(
        LEASES,
        {
            "metadata": {"name": LEASE, "namespace": "kube-system"},
            "spec": {"holderIdentity": "other", "leaseDurationSeconds": 15, "leaseTransitions": 3},
        },
    )
    two = Candidate(store, clock, "two")
    two.elector.start()
    for i in range(10):
        clock.advance(5)
        current = store.get(LEASES, "kube-system", LEASE)
        store.update(LEASES, {**current, "spec": {**current["spec"], "renewTime": f"renewal-{i}"}})
    assert not two.elector.leader
    clock.advance(16)
    assert two.elector.leader
    assert lease(store)["leaseTransitions"] == 4


def test_a_lost_update_race_does_not_make_two_leaders(clock: VirtualClock, store: MemoryStore) -> None:
    candidates = [Candidate(store, clock, f"c{i}") for i in range(5)]
    for candidate in candidates:
        candidate.elector.start()
    for _ in range(50):
        clock.advance(1)
        assert sum(c.elector.leader for c in candidates) <= 1
    assert sum(c.elector.leader for c in candidates) == 1


@pytest.mark.parametrize(
    ("durations", "message"),
    [
        pytest.param(
            {"lease_duration": 10, "renew_deadline": 10},
            "leaseDuration must be greater than renewDeadline",
            id="lease duration not above the renew deadline",
        ),
        pytest.param(
            {"renew_deadline": 2, "retry_period": 2},
            r"renewDeadline must be greater than retryPeriod\*JitterFactor",
            id="renew deadline within a jittered retry",
        ),
    ],
)
def test_invalid_durations_are_refused(durations: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ElectionConfig(LEASE, "x", **durations).check()


def test_an_empty_identity_is_refused() -> None:
    with pytest.raises(ValueError, match="Lock identity is empty"):
        ElectionConfig(LEASE, "").check()


def test_a_forbidden_lease_read_is_a_failed_attempt(clock: VirtualClock, store: MemoryStore) -> None:
    class Forbidden(FlakyStore):
        def get(self, resource: str, namespace: str, name: str) -> JSON:
            raise StatusError(403, "Forbidden", "leases is forbidden")

    one = Candidate(Forbidden(store), clock, "one")
    one.elector.start()
    clock.advance(10)
    assert not one.elector.leader and one.events == []
