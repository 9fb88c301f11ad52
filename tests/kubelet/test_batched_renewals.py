"""A pool's heartbeat rounds write the same store history whether its store takes field writes
(renewals told that only renewTime moves) or only updates (SQLite, etcd, remote stores): the
same writes, resourceVersions and objects in the same order, through stops, recoveries, leases
deleted or taken over by someone else, and status posts in between."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from kubelet.builders import node_config
from kubetaint.admission import AdmissionChain
from kubetaint.clock import VirtualClock
from kubetaint.kubelet import HollowNodePool
from kubetaint.kubelet.lease import LEASE_NAMESPACE, LEASE_RESOURCE
from kubetaint.registry import Registry
from kubetaint.speed.reference import reference_mode
from kubetaint.store.changes import each_event
from kubetaint.store.interface import (
    JSON,
    Result,
    SetField,
    Store,
    WatchEvent,
    WriteOp,
    as_updates,
    with_field,
)
from kubetaint.store.memory import MemoryStore


def with_namespaces(store: MemoryStore, *names: str) -> MemoryStore:
    """The namespaces NamespaceLifecycle must find for the objects written in them."""
    for name in names:
        store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return store


class UpdatesOnly:
    """A store without field writes: renewals reach it as updates."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def commit(self, ops: list[WriteOp], *, stop_at_failure: bool = False) -> list[Result]:
        updates: list[WriteOp] = [u for op in ops for u in (as_updates(op) if type(op) is SetField else [op])]
        return self._store.commit(updates, stop_at_failure=stop_at_failure)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def take_over(store: Store, name: str) -> None:
    lease = store.get(LEASE_RESOURCE, LEASE_NAMESPACE, name)
    store.update(LEASE_RESOURCE, with_field(lease, ("spec", "holderIdentity"), "someone-else"))


def delete_lease(store: Store, name: str) -> None:
    store.delete(LEASE_RESOURCE, LEASE_NAMESPACE, name)


def touch_lease(store: Store, name: str) -> None:
    lease = store.get(LEASE_RESOURCE, LEASE_NAMESPACE, name)
    store.update(LEASE_RESOURCE, {**lease, "metadata": {**lease["metadata"], "labels": {"x": "y"}}})


#: at each listed second: an action on the pool or the store behind it
Action = Callable[[HollowNodePool, Store], None]
SCRIPTS = [
    pytest.param({}, id="plain heartbeats"),
    pytest.param(
        {15: lambda p, s: p.fault(["n2"], "stop"), 55: lambda p, s: p.fault(["n2"], "recover")},
        id="a node stops and recovers",
    ),
    pytest.param({15: lambda p, s: take_over(s, "n2")}, id="someone else takes a lease over"),
    pytest.param({15: lambda p, s: delete_lease(s, "n3")}, id="a lease is deleted"),
    pytest.param(
        {15: lambda p, s: touch_lease(s, "n1"), 25: lambda p, s: touch_lease(s, "n4")},
        id="leases are changed in between: conflicts",
    ),
    pytest.param({15: lambda p, s: p.fault(["n2", "n3"], "not-ready")}, id="status posts cut batches"),
]


def history(
    script: dict[int, Action], registry: bool, field_writes: bool, told: list[int] | None = None
) -> list[tuple[Any, ...]]:
    """Every event of the run; `told` gets the size of each field write the store took."""
    clock = VirtualClock()
    counter = itertools.count()
    memory = MemoryStore(clock, uid_factory=lambda: f"uid-{next(counter):05d}")
    if told is not None:
        real = memory._field_write

        def spy(resource: str, objects: list[JSON], *args: Any, **kw: Any) -> Any:
            told.append(len(objects))
            return real(resource, objects, *args, **kw)

        memory._field_write = spy  # type: ignore[method-assign]
    store: Store = (
        Registry(with_namespaces(memory, LEASE_NAMESPACE), admission=AdmissionChain()) if registry else memory
    )
    if not field_writes:
        store = UpdatesOnly(store)  # type: ignore[assignment]
    seen: list[WatchEvent] = []
    memory.subscribe(each_event(seen.append))
    pool = HollowNodePool(store, clock, [node_config(f"n{i}") for i in range(1, 6)])
    pool.start()
    for second in range(1, 120):
        action = script.get(second)
        if action is not None:
            action(pool, memory)
        clock.advance(1)
    return [(e.type, e.resource, e.resource_version, json.dumps(e.object)) for e in seen]


@pytest.mark.usefixtures("default_mode")
@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("registry", [True, False], ids=["through a registry", "straight to the store"])
def test_field_writes_and_updates_write_the_same_history(script: dict[int, Action], registry: bool) -> None:
    told: list[int] = []
    fast = history(script, registry, field_writes=True, told=told)
    assert fast == history(script, registry, field_writes=False)
    if not (registry and reference_mode()):  # (a registry in reference mode commits one update at a time)
        assert sum(told) >= 4 * 10 and max(told) >= 4, "the store was told of most renewals, in batches"
    renewals = [e for e in fast if e[0] == "MODIFIED" and e[1] == LEASE_RESOURCE]
    assert len(renewals) >= 5 * 10, "every round renews"


QUIET_SCRIPTS = [
    *SCRIPTS,
    pytest.param(
        {
            15: lambda p, s: p.fault(["n1"], "memory-pressure", available="100Mi"),
            35: lambda p, s: p.fault(["n1"], "relieve"),
            45: lambda p, s: p.fault(["n4"], "network-unavailable"),
        },
        id="conditions change: the status is due",
    ),
    pytest.param(
        {
            15: lambda p, s: setattr(p["n2"], "ready", False),
            16: lambda p, s: setattr(p["n3"], "ready", False),
        },
        id="the kubelet's view changes without a post: the status is due at the next heartbeat",
    ),
]


@pytest.mark.parametrize("script", QUIET_SCRIPTS)
def test_a_quiet_renewal_is_the_renewable_lease_of_a_heartbeat_without_status(
    script: dict[int, Action],
) -> None:
    clock = VirtualClock()
    store = MemoryStore(clock)
    pool = HollowNodePool(store, clock, [node_config(f"n{i}") for i in range(1, 6)])
    pool.start()
    quiet = 0
    for second in range(1, 400):
        action = script.get(second)
        if action is not None:
            action(pool, store)
        for kubelet in pool.kubelets.values():
            lease = kubelet.quiet_renewal(clock.now())
            if lease is not None:
                quiet += 1
                assert lease is kubelet.renewable_lease() and not kubelet.status_due()
        clock.advance(1)
    assert quiet > 5 * 300, "most heartbeats are quiet renewals"


def quiet_rounds_taken(script: dict[int, Action]) -> tuple[list[tuple[Any, ...]], int]:
    """The history of a run straight to a memory store, and how many rounds took the quiet way."""
    taken = 0
    real = HollowNodePool._quiet_round

    def spy(pool: HollowNodePool, group: Any) -> bool:
        nonlocal taken
        done = real(pool, group)
        taken += done
        return done

    HollowNodePool._quiet_round = spy  # type: ignore[method-assign]
    try:
        return history(script, registry=True, field_writes=True), taken
    finally:
        HollowNodePool._quiet_round = real  # type: ignore[method-assign]


@pytest.mark.usefixtures("default_mode")
@pytest.mark.parametrize("script", QUIET_SCRIPTS)
def test_quiet_rounds_write_what_each_kubelet_asked_in_turn_writes(
    script: dict[int, Action], switch_reference_mode: Callable[[bool], None]
) -> None:
    fast, taken = quiet_rounds_taken(script)
    assert taken >= 5, "most rounds renew the leases the last round wrote"
    switch_reference_mode(True)
    assert fast == history(script, registry=True, field_writes=True)


@pytest.mark.usefixtures("default_mode")
def test_a_fault_gives_each_kubelet_of_a_quiet_group_the_lease_last_written() -> None:
    clock = VirtualClock()
    store = MemoryStore(clock)
    pool = HollowNodePool(store, clock, [node_config(f"n{i}") for i in range(1, 4)])
    pool.start()
    clock.advance(45)  # a round asking each kubelet, then quiet rounds
    before = store.get(LEASE_RESOURCE, LEASE_NAMESPACE, "n1")["spec"]["renewTime"]
    clock.advance(10)
    assert store.get(LEASE_RESOURCE, LEASE_NAMESPACE, "n1")["spec"]["renewTime"] > before
    pool.fault(["n2"], "not-ready")
    for name in ("n1", "n2", "n3"):
        assert pool[name].renewable_lease() is store.get(LEASE_RESOURCE, LEASE_NAMESPACE, name)
