"""The kubelet's pod view and admitted-pod tally (kubetaint.kubelet.running) against reading the
store back: over a memory store the pool's kubelets keep the pods routed to them and admit
against a running tally; over a store without synchronous delivery they read the store. Both must
write exactly the same statuses and events, and the tally must always equal the read-back sum."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelet.builders import container, make_store, node_config, pod
from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.kubelet import HollowNodePool
from kubetaint.kubelet.admission import PodUsage, predicate_admit
from kubetaint.kubelet.resources import StoredPodRequests, pod_requests
from kubetaint.kubelet.running import RunningPods
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]
NODES = ("n1", "n2")
CAPACITY = {"cpu": "1", "memory": "1Gi", "pods": "4"}


class ReadBackStore(MemoryStore):
    """A memory store that does not promise synchronous delivery: its kubelets read it back."""

    delivers_synchronously = False


def _pool(store_type: type[MemoryStore]) -> tuple[VirtualClock, MemoryStore, HollowNodePool]:
    clock = VirtualClock()
    store = make_store(clock)
    store.__class__ = store_type
    pool = HollowNodePool(store, clock, [node_config(n, capacity=dict(CAPACITY)) for n in NODES])
    return clock, store, pool


@dataclass(frozen=True)
class Create:
    name: str
    node: str
    cpu: str


@dataclass(frozen=True)
class Finish:
    name: str
    phase: str


@dataclass(frozen=True)
class Delete:
    name: str


@dataclass(frozen=True)
class Fault:
    node: str
    fault: str


@dataclass(frozen=True)
class Run:
    seconds: float


Step = Create | Finish | Delete | Fault | Run
_names = st.sampled_from(["a", "b", "c", "d", "e", "f"])
_steps: st.SearchStrategy[Step] = st.one_of(
    st.builds(Create, _names, st.sampled_from(NODES), st.sampled_from(["0", "100m", "300m", "600m"])),
    st.builds(Finish, _names, st.sampled_from(["Succeeded", "Failed", "Running"])),
    st.builds(Delete, _names),
    st.builds(
        Fault,
        st.sampled_from(NODES),
        st.sampled_from(["memory-pressure", "disk-pressure", "relieve", "stop", "recover"]),
    ),
    st.builds(Run, st.sampled_from([0.0, 10.0, 400.0])),
)


def _apply(store: MemoryStore, pool: HollowNodePool, clock: VirtualClock, step: Step) -> None:
    try:
        if isinstance(step, Create):
            cpu = None if step.cpu == "0" else step.cpu
            store.create("pods", pod(step.name, step.node, containers=[container(cpu=cpu)]))
        elif isinstance(step, Finish):
            current = store.get("pods", "default", step.name)
            status = {**(current.get("status") or {}), "phase": step.phase}
            store.update("pods", {**current, "status": status})
        elif isinstance(step, Delete):
            store.delete("pods", "default", step.name, grace_period_seconds=0)
        elif isinstance(step, Fault):
            pool.fault([step.node], step.fault)
        else:
            clock.run_until(clock.now() + step.seconds)
    except StatusError:
        pass  # the same refusal happens in both runs


def _outcome(store: MemoryStore) -> list[tuple[Any, ...]]:
    pods = [
        (p["metadata"]["name"], p["metadata"]["uid"], p["metadata"]["resourceVersion"], p.get("status"))
        for p in store.list("pods").items
    ]
    events = [
        (e["reason"], e.get("message"), e["involvedObject"].get("name")) for e in store.list("events").items
    ]
    return sorted(pods, key=repr) + sorted(events, key=repr)


def _assert_tally_matches_read_back(store: MemoryStore, pool: HollowNodePool) -> None:
    for kubelet in pool.kubelets.values():
        view = kubelet._admitted.view
        assert view is not None
        read_back = kubelet._admitted.pods(store)
        assert len(view) == len(read_back)
        expected: dict[str, int] = {}
        for p in read_back:
            for name, amount in pod_requests(p).items():
                expected[name] = expected.get(name, 0) + amount
        assert {k: v for k, v in view.used().items() if v} == {k: v for k, v in expected.items() if v}
        for key, known in view.objects.items():
            try:
                assert store.get("pods", *key) is known, "the view holds what a store read returns"
            except StatusError:
                pytest.fail(f"{key} is in the view but no longer stored")


@pytest.mark.usefixtures("default_mode")
@settings(max_examples=60, deadline=None)
@given(st.lists(_steps, max_size=25))
def test_the_pod_view_writes_what_reading_the_store_back_writes(steps: list[Step]) -> None:
    fast_clock, fast_store, fast_pool = _pool(MemoryStore)
    slow_clock, slow_store, slow_pool = _pool(ReadBackStore)
    fast_pool.start()
    slow_pool.start()
    assert fast_pool.kubelets["n1"]._admitted.view is not None
    assert slow_pool.kubelets["n1"]._admitted.view is None
    for step in [*steps, Run(10.0)]:
        _apply(fast_store, fast_pool, fast_clock, step)
        _apply(slow_store, slow_pool, slow_clock, step)
        fast_clock.run_pending()
        slow_clock.run_pending()
        _assert_tally_matches_read_back(fast_store, fast_pool)
        assert _outcome(fast_store) == _outcome(slow_store)


def test_only_stores_that_deliver_before_returning_enable_the_view() -> None:
    clock = VirtualClock()
    assert make_store(clock).delivers_synchronously
    _, _, pool = _pool(ReadBackStore)
    pool.start()
    assert all(k._admitted.view is None for k in pool.kubelets.values())


@pytest.mark.usefixtures("default_mode")
def test_a_pool_shut_down_stops_keeping_views_and_a_restart_starts_afresh() -> None:
    clock, store, pool = _pool(MemoryStore)
    pool.start()
    store.create("pods", pod("a", "n1", containers=[container(cpu="100m")]))
    clock.run_pending()
    pool.shutdown()
    assert pool.kubelets["n1"]._admitted.view is None
    store.delete("pods", "default", "a", grace_period_seconds=0)  # unobserved by the pool
    pool.start()
    view = pool.kubelets["n1"]._admitted.view
    assert view is not None
    assert ("default", "a") not in view.objects


@pytest.mark.usefixtures("default_mode")
def test_a_node_added_to_a_running_pool_sees_the_pods_already_bound_to_it() -> None:
    clock, store, pool = _pool(MemoryStore)
    pool.start()
    store.create("pods", pod("early", "n3", containers=[container(cpu="100m")]))
    kubelet = pool.add_node(node_config("n3", capacity=dict(CAPACITY)))
    clock.run_pending()
    view = kubelet._admitted.view
    assert view is not None
    assert ("default", "early") in view.objects
    assert store.get("pods", "default", "early")["status"]["phase"] == "Running"
    assert len(view) == 1


@pytest.mark.usefixtures("default_mode")
def test_a_pod_moved_off_its_node_turns_the_old_nodes_view_off() -> None:
    _, _, pool = _pool(MemoryStore)
    pool.start()
    old = pod("a", "n1")
    old["metadata"]["uid"] = "u1"
    new = {**old, "spec": {**old["spec"], "nodeName": "n2"}}
    pool._on_pod(old)
    pool._on_pod_update(old, new)
    assert pool.kubelets["n1"]._admitted.view is None
    assert pool.kubelets["n2"]._admitted.view is not None


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(
            lambda p: {**p, "metadata": {**p["metadata"], "ownerReferences": [{"kind": "ReplicaSet"}]}},
            id="an adoption keeping the spec object",
        ),
        pytest.param(
            lambda p: {**p, "status": {"phase": "Running"}}, id="a status change keeping the spec object"
        ),
        pytest.param(lambda p: {**p, "spec": dict(p["spec"])}, id="an equal copy of the spec"),
        pytest.param(lambda p: {**p, "spec": {**p["spec"], "nodeName": "n2"}}, id="a move to another node"),
    ],
)
def test_a_pod_update_reaches_the_kubelets_the_full_routing_reaches(change: Any) -> None:
    """The shortcut for an update keeping the spec object (the same node, so the same kubelet)
    leaves each kubelet's pending work and view as routing old and new pods afresh does."""

    def run(shortcut: bool) -> list[Any]:
        _, _, pool = _pool(MemoryStore)
        pool.start()
        old = pod("a", "n1")
        old["metadata"]["uid"] = "u1"
        new = change(old)
        if not shortcut:  # the same contents, another spec object: the full routing
            new = {**new, "spec": dict(new["spec"])} if new["spec"] is old["spec"] else new
        pool._on_pod(old)
        pool._on_pod_update(old, new)
        return [
            (name, sorted(k._pending), k._admitted.view is None, k._admitted.get(("default", "a")))
            for name, k in sorted(pool.kubelets.items())
        ]

    assert run(True) == run(False)


# the tally alone ---------------------------------------------------------------------------------


def _bound(name: str, uid: str, cpu: str, node: str = "n1", phase: str = "Running") -> JSON:
    body = pod(name, node, containers=[container(cpu=cpu)])
    body["metadata"]["uid"] = uid
    body["status"] = {"phase": phase}
    return body


@pytest.mark.parametrize(
    ("objects", "admitted", "count", "cpu"),
    [
        pytest.param([_bound("a", "u1", "1")], {"a": "u1"}, 1, 1000, id="an admitted running pod counts"),
        pytest.param([_bound("a", "u1", "1")], {"a": "u0"}, 0, 0, id="an earlier incarnation's uid does not"),
        pytest.param([_bound("a", "u1", "1", phase="Failed")], {"a": "u1"}, 0, 0, id="a failed pod does not"),
        pytest.param(
            [_bound("a", "u1", "1", phase="Succeeded")], {"a": "u1"}, 0, 0, id="nor a succeeded one"
        ),
        pytest.param([_bound("a", "u1", "1", node="n2")], {"a": "u1"}, 0, 0, id="nor one bound elsewhere"),
        pytest.param([_bound("a", "u1", "1")], {}, 0, 0, id="a pod never admitted does not"),
        pytest.param(
            [_bound("a", "u1", "1"), _bound("b", "u2", "250m")],
            {"a": "u1", "b": "u2"},
            2,
            1250,
            id="two admitted pods sum",
        ),
    ],
)
def test_the_tally_counts_what_reading_back_counts(
    objects: list[JSON], admitted: dict[str, str], count: int, cpu: int
) -> None:
    tally = RunningPods("n1", pod_requests)
    for obj in objects:
        key = ("default", obj["metadata"]["name"])
        tally.observe(key, obj, admitted.get(obj["metadata"]["name"]))
    assert len(tally) == count
    assert tally.used().get("cpu", 0) == cpu


def test_the_pod_being_admitted_is_left_out_of_its_own_tally() -> None:
    tally = RunningPods("n1", pod_requests)
    a, b = _bound("a", "u1", "1"), _bound("b", "u2", "250m")
    tally.observe(("default", "a"), a, "u1")
    tally.observe(("default", "b"), b, "u2")
    assert tally.usage_without(("default", "a"), "u1") == PodUsage(1, {"cpu": 250})
    assert tally.usage_without(("default", "a"), "u9") == PodUsage(2, {"cpu": 1250})
    assert tally.usage_without(("default", "z"), "u1") == PodUsage(2, {"cpu": 1250})
    assert len(tally) == 2, "leaving a pod out changes nothing kept"


def test_a_changed_object_replaces_its_requests_and_a_deletion_removes_them() -> None:
    tally = RunningPods("n1", pod_requests)
    tally.observe(("default", "a"), _bound("a", "u1", "1"), "u1")
    tally.observe(("default", "a"), _bound("a", "u1", "300m"), "u1")
    assert tally.used() == {"cpu": 300}
    tally.refresh(("default", "a"), None)
    assert len(tally) == 0
    tally.refresh(("default", "a"), "u1")
    assert tally.used() == {"cpu": 300}
    tally.deleted(("default", "a"))
    assert len(tally) == 0
    assert tally.used() == {"cpu": 0}
    assert ("default", "a") not in tally.objects


@pytest.mark.parametrize(
    ("others", "asked", "reason"),
    [
        pytest.param(["300m", "300m"], "300m", "", id="room left admits"),
        pytest.param(["600m", "300m"], "300m", "OutOfcpu", id="the summed others leave too little cpu"),
        pytest.param(["1m", "1m", "1m", "1m"], "0", "OutOfpods", id="a full node refuses even a free pod"),
        pytest.param([], "2", "OutOfcpu", id="a pod larger than the node is refused alone"),
    ],
)
def test_admission_on_a_usage_decides_as_on_the_pods(others: list[str], asked: str, reason: str) -> None:
    node: JSON = {"metadata": {"name": "n1"}, "status": {"allocatable": dict(CAPACITY)}}
    running = [_bound(f"o{i}", f"u{i}", cpu) for i, cpu in enumerate(others)]
    new = pod("new", "n1", containers=[container(cpu=None if asked == "0" else asked)])
    used: dict[str, int] = {}
    for p in running:
        for name, amount in pod_requests(p).items():
            used[name] = used.get(name, 0) + amount
    plain = predicate_admit(new, node, running)
    assert predicate_admit(new, node, PodUsage(len(running), used)) == plain
    assert plain.reason == reason


@pytest.mark.usefixtures("default_mode")
def test_pods_sharing_their_containers_share_their_remembered_requests() -> None:
    memo = StoredPodRequests()
    containers = [container(cpu="250m", memory="64Mi")]
    first = pod("a", "n1", containers=containers)
    second = pod("b", "n1", containers=containers)
    assert memo(first) is memo(second), "one template's pods are summed once"
    with_overhead = {**second, "spec": {**second["spec"], "overhead": {"cpu": "50m"}}}
    assert memo(with_overhead) == {"cpu": 300, "memory": 64 * 1024 * 1024}
    with_init = {**second, "spec": {**second["spec"], "initContainers": [container(cpu="2")]}}
    assert memo(with_init) == pod_requests(with_init) == {"cpu": 2000, "memory": 64 * 1024 * 1024}
    assert memo(first) == pod_requests(first)


@pytest.mark.usefixtures("default_mode")
def test_over_the_sqlite_store_the_kubelets_keep_views_that_match_reading_it_back(tmp_path: Path) -> None:
    from kubetaint.store.sqlite import SqliteStore

    clock = VirtualClock()
    counter = itertools.count()
    store = SqliteStore(tmp_path, clock, uid_factory=lambda: f"uid-{next(counter):05d}")
    pool = HollowNodePool(store, clock, [node_config(n, capacity=dict(CAPACITY)) for n in NODES])
    pool.start()
    steps: list[Step] = [
        Create("a", "n1", "300m"),
        Create("b", "n1", "600m"),
        Run(10.0),
        Create("c", "n1", "300m"),  # does not fit: OutOfcpu
        Finish("a", "Succeeded"),
        Create("d", "n2", "100m"),
        Delete("b"),
        Run(10.0),
    ]
    try:
        assert all(k._admitted.view is not None for k in pool.kubelets.values())
        for step in steps:
            _apply(store, pool, clock, step)  # type: ignore[arg-type]
            clock.run_pending()
            _assert_tally_matches_read_back(store, pool)  # type: ignore[arg-type]
    finally:
        pool.shutdown()
        store.close()
