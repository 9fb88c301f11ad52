"""A monitor pass observes the leases changed since the last pass, each node's last one: a
heartbeat round alone since the last pass is read from its own lists (MonitorWork keeps it as it
is), and a round mixed with other lease changes (another round, a lease written on its own, a
lease deleted) gives the pass what it gives when every change is entered by name."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kubetaint.clock import VirtualClock
from kubetaint.clock.base import format_time
from kubetaint.controllers.nodelifecycle.health import (
    LEASES,
    NODE_LEASE_NAMESPACE,
    NodeHealth,
    NodeHealthTracker,
)
from kubetaint.controllers.nodelifecycle.monitor_work import MonitorWork, Settled, SettledNode
from kubetaint.controllers.nodelifecycle.settings import NodeLifecycleSettings
from kubetaint.store.informer import Changes, Informer
from kubetaint.store.interface import JSON, SetField, until_failure
from kubetaint.store.memory import MemoryStore

NAMES = ["node-a", "node-b", "node-c"]
RENEW = ("spec", "renewTime")


def lease(name: str) -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": NODE_LEASE_NAMESPACE},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": stamp(0)},
    }


def stamp(seconds: float) -> str:
    return format_time(seconds).replace("Z", ".000000Z")


class Cluster:
    """Leases in a memory store, the lease informer and a MonitorWork told its changes, the nodes
    settled and last probed at 0 with their first leases."""

    def __init__(self, *, entered: bool) -> None:
        self.clock = VirtualClock()
        self.store = MemoryStore(self.clock)
        self.leases = [self.store.create(LEASES, lease(name)) for name in NAMES]
        informer = Informer(self.store, LEASES, namespace=NODE_LEASE_NAMESPACE)
        self.health = NodeHealthTracker(self.store, self.clock, NodeLifecycleSettings(), informer)
        self.work = MonitorWork(self.health, grace_period=40.0)
        for name, obj in zip(NAMES, self.leases, strict=True):
            self.health.healths[name] = NodeHealth(0.0, 0.0, None, obj)
            self.work.settle(name, SettledNode(Settled.READY, "zone", True, name, 40.0))
        informer.add_handlers(self._entered if entered else self.work.leases_changed)
        informer.start()

    def _entered(self, changes: Changes) -> None:
        """Every change entered by name (what the pass reads when a round is not alone)."""
        for kind, (_, name), _, obj in changes:
            self.work.changed_leases[name] = None if kind == "DELETED" else obj

    def renew(self, names: list[str], seconds: float) -> None:
        objects = [self.store.get(LEASES, NODE_LEASE_NAMESPACE, name) for name in names]
        _, err = until_failure(self.store.commit((SetField(LEASES, objects, RENEW, stamp(seconds)),)))
        assert err is None

    def observed(self, now: float) -> list[tuple[str, float, str]]:
        self.clock.advance(now - self.clock.now())
        self.work.begin_pass(now)
        return [
            (name, record.probe_timestamp, (record.lease or {})["spec"]["renewTime"])
            for name, record in sorted(self.health.healths.items())
        ]


Step = Callable[[Cluster], None]


def a_round(names: list[str], seconds: float) -> Step:
    return lambda cluster: cluster.renew(names, seconds)


def rewritten(name: str, seconds: float) -> Step:
    def step(cluster: Cluster) -> None:
        obj = cluster.store.get(LEASES, NODE_LEASE_NAMESPACE, name)
        cluster.store.update(LEASES, {**obj, "spec": {**obj["spec"], "renewTime": stamp(seconds)}})

    return step


def deleted(name: str) -> Step:
    return lambda cluster: cluster.store.delete(LEASES, NODE_LEASE_NAMESPACE, name)


@pytest.mark.parametrize(
    "passes",
    [
        pytest.param([[a_round(NAMES, 10)], [a_round(NAMES, 20)]], id="one round between passes"),
        pytest.param([[a_round(NAMES, 10), a_round(NAMES[1:], 12)]], id="two rounds before a pass"),
        pytest.param([[a_round(NAMES, 10), rewritten("node-b", 11)]], id="a round then one lease"),
        pytest.param([[rewritten("node-b", 11), a_round(NAMES, 10)]], id="one lease then a round"),
        pytest.param([[a_round(NAMES, 10), deleted("node-c")]], id="a round then a lease deleted"),
        pytest.param([[a_round(["node-a"], 10)], [], [a_round(NAMES, 20)]], id="a pass with nothing"),
        pytest.param(
            [[rewritten("node-b", 30)], [a_round(NAMES, 20)]], id="a round earlier than a lease already seen"
        ),
    ],
)
@pytest.mark.usefixtures("default_mode")
def test_a_pass_observes_each_nodes_last_lease_as_when_every_change_is_entered(
    passes: list[list[Step]],
) -> None:
    kept, entered = Cluster(entered=False), Cluster(entered=True)
    for i, steps in enumerate(passes, start=1):
        for step in steps:
            step(kept)
            step(entered)
        assert kept.observed(15.0 * i) == entered.observed(15.0 * i)
    assert kept.work.changed_leases == {} and kept.work._renewed is None


@pytest.mark.usefixtures("default_mode")
def test_leases_outside_the_node_lease_namespace_are_no_nodes_heartbeats() -> None:
    clock = VirtualClock()
    store = MemoryStore(clock)
    node_leases = [store.create(LEASES, lease(name)) for name in NAMES]
    others = [
        store.create(LEASES, {**lease(name), "metadata": {"name": name, "namespace": "default"}})
        for name in NAMES
    ]
    informer = Informer(store, LEASES)  # every namespace: the controller manager's shared informer
    health = NodeHealthTracker(store, clock, NodeLifecycleSettings(), informer)
    work = MonitorWork(health, grace_period=40.0)
    for name, obj in zip(NAMES, node_leases, strict=True):
        health.healths[name] = NodeHealth(0.0, 0.0, None, obj)
        work.settle(name, SettledNode(Settled.READY, "zone", True, name, 40.0))
    informer.add_handlers(work.leases_changed)
    informer.start()
    _, err = until_failure(store.commit((SetField(LEASES, others, RENEW, stamp(10)),)))
    assert err is None
    other = store.get(LEASES, "default", "node-a")
    store.update(LEASES, {**other, "spec": {**other["spec"], "renewTime": stamp(11)}})
    clock.advance(15)
    work.begin_pass(15.0)
    assert {name: record.probe_timestamp for name, record in health.healths.items()} == dict.fromkeys(
        NAMES, 0.0
    )
    _, err = until_failure(store.commit((SetField(LEASES, node_leases, RENEW, stamp(20)),)))
    assert err is None
    clock.advance(15)
    work.begin_pass(30.0)
    assert {name: record.probe_timestamp for name, record in health.healths.items()} == dict.fromkeys(
        NAMES, 30.0
    )
