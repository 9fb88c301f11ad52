"""A node status post is a field write of status.conditions (a `SetField` commit of the
node as read, the merged conditions as the value): it must store, refuse and retry exactly as the
store's `update` of `{**node, "status": {**status, "conditions": conditions}}` did, through a
registry (trusted heartbeat or validated), straight to a memory store, and to a store without
field writes: the same events, resourceVersions and objects (key order included), the same
recorded node events, the same answers on conflicts and failures. The reference is the post as
it was written before (`post_by_update`)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from kubelet.builders import node_config
from kubetaint.admission import AdmissionChain
from kubetaint.api import errors
from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.clock.base import format_time
from kubetaint.kubelet import HollowKubelet, HollowNodePool
from kubetaint.kubelet.kubelet import StatusPost
from kubetaint.kubelet.lease import LEASE_NAMESPACE
from kubetaint.kubelet.node_status import CONDITION_EVENTS, conditions_differ, merge_conditions
from kubetaint.kubelet.pool import _Renewals
from kubetaint.registry import Registry
from kubetaint.store.changes import each_event
from kubetaint.store.interface import Result, SetField, Store, WatchEvent, WriteOp, as_updates
from kubetaint.store.memory import MemoryStore


def post_by_update(kubelet: HollowKubelet, *, force: bool = False) -> bool:
    """The reference: post_status as it was before status posts were field writes (the store's
    `update` of the node copy with the conditions replaced; a 409 read again and retried)."""
    if kubelet.stopped or not kubelet.registered:
        return False
    now = kubelet.clock.now()
    desired = kubelet.desired_conditions()
    for _ in range(5):
        node = kubelet._node()
        if node is None:
            return False
        status = node.get("status") or {}
        existing = list(status.get("conditions") or [])
        due = now - kubelet.last_status_post >= kubelet.settings.node_status_report_frequency
        if not (force or due or conditions_differ(existing, desired)):
            return False
        conditions, changed = merge_conditions(existing, desired, now)
        updated = {**node, "status": {**status, "conditions": conditions}}
        try:
            stored = kubelet.store.update("nodes", updated)
        except StatusError as err:
            if err.code == 409:
                continue
            return False
        kubelet.last_status_post = now
        kubelet._posted = desired
        for ctype, cstatus in changed:
            reason = CONDITION_EVENTS.get((ctype, cstatus))
            if reason is not None and existing:
                kubelet._event(stored, "Normal", reason, f"Node {kubelet.name} status is now: {reason}")
        return True
    return False


def add_post_by_update(renewals: _Renewals, post: StatusPost) -> None:
    """The reference of a heartbeat round's status post: the renewals before it written, then
    the post by `post_by_update`."""
    renewals.flush()
    post_by_update(post.kubelet)


class NoFieldWrites:
    """A store without field writes (SQLite, etcd, remote): status posts reach it as updates."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def commit(self, ops: list[WriteOp], *, stop_at_failure: bool = False) -> list[Result]:
        updates: list[WriteOp] = [u for op in ops for u in (as_updates(op) if type(op) is SetField else [op])]
        return self._store.commit(updates, stop_at_failure=stop_at_failure)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def relabel(store: Store, name: str) -> None:
    node = store.get("nodes", "", name)
    store.update("nodes", {**node, "metadata": {**node["metadata"], "labels": {"x": "y"}}})


def strip_status(store: Store, name: str) -> None:
    node = store.get("nodes", "", name)
    store.update("nodes", {k: v for k, v in node.items() if k != "status"})


Action = Callable[[HollowNodePool, Store], None]
SCRIPTS = [
    pytest.param({}, id="posts every five minutes"),
    pytest.param(
        {
            15: lambda p, s: p.fault(["n1"], "memory-pressure", available="100Mi"),
            45: lambda p, s: p.fault(["n1"], "relieve"),
            75: lambda p, s: p.fault(["n2", "n3"], "not-ready"),
            95: lambda p, s: p.fault(["n4"], "network-unavailable"),
        },
        id="faults post changed conditions at once",
    ),
    pytest.param(
        {25: lambda p, s: p.fault(["n2"], "stop"), 335: lambda p, s: p.fault(["n2"], "recover")},
        id="a stopped node posts again when it recovers",
    ),
    pytest.param({295: lambda p, s: relabel(s, "n3")}, id="a node changed behind the kubelet's back"),
    pytest.param({295: lambda p, s: strip_status(s, "n1")}, id="a node whose status was taken away"),
    pytest.param({65: lambda p, s: s.delete("nodes", "", "n4")}, id="a deleted node"),
]


def history(script: dict[int, Action], layer: str, status_writes: str) -> list[tuple[Any, ...]]:
    clock = VirtualClock()
    counter = itertools.count()
    memory = MemoryStore(clock, uid_factory=lambda: f"uid-{next(counter):05d}")
    store: Any = Registry(memory, admission=AdmissionChain()) if layer == "registry" else memory
    if status_writes == "no field writes":
        store = NoFieldWrites(store)
    seen: list[WatchEvent] = []
    memory.subscribe(each_event(seen.append))
    with pytest.MonkeyPatch.context() as patch:
        if status_writes == "by update":
            patch.setattr(HollowKubelet, "post_status", post_by_update)
            patch.setattr(_Renewals, "add_post", add_post_by_update)
        pool = HollowNodePool(store, clock, [node_config(f"n{i}") for i in range(1, 5)])
        pool.start()  # (registration posts the first status)
        for second in range(1, 700):
            action = script.get(second)
            if action is not None:
                action(pool, memory)
            clock.advance(1)
    return [(e.type, e.resource, e.resource_version, json.dumps(e.object)) for e in seen]


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("layer", ["registry", "memory store"])
@pytest.mark.parametrize("status_writes", ["field write", "no field writes"])
def test_status_posts_as_field_writes_store_what_updates_of_the_copy_stored(
    script: dict[int, Action], layer: str, status_writes: str
) -> None:
    posted = history(script, layer, status_writes)
    assert posted == history(script, layer, "by update")
    assert sum(1 for e in posted if e[:2] == ("MODIFIED", "nodes")) >= 2 * 3, "posts at 300 s and 600 s"


def test_a_post_keeps_the_nodes_key_order_and_shares_what_it_does_not_change() -> None:
    clock = VirtualClock()
    store = MemoryStore(clock)
    pool = HollowNodePool(store, clock, [node_config("n1")])
    pool.start()
    before = store.get("nodes", "", "n1")
    clock.advance(300)
    after = store.get("nodes", "", "n1")
    assert after is not before and list(after) == list(before)
    assert list(after["status"]) == list(before["status"]) and list(after["metadata"]) == list(
        before["metadata"]
    )
    assert after["status"]["capacity"] is before["status"]["capacity"]
    assert after["metadata"]["labels"] is before["metadata"]["labels"]
    assert after["status"]["conditions"] != before["status"]["conditions"]
    assert int(after["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])


class FailingFirst:
    """A store whose first status post fails with `error` (then every write passes through)."""

    def __init__(self, store: MemoryStore, error: StatusError) -> None:
        self._store = store
        self._error: StatusError | None = error
        self.asked = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def commit(self, ops: list[WriteOp], *, stop_at_failure: bool = False) -> list[Result]:
        if len(ops) == 1 and type(ops[0]) is SetField and ops[0].resource == "nodes":
            self.asked += 1
            if self._error is not None:
                error, self._error = self._error, None
                return [error]
        return self._store.commit(ops, stop_at_failure=stop_at_failure)


@pytest.mark.parametrize(
    "error, posted, asked",
    [
        pytest.param(
            errors.conflict("nodes", "n1", errors.OBJECT_MODIFIED), True, 2, id="a conflict is retried"
        ),
        pytest.param(errors.not_found("nodes", "n1"), False, 1, id="any other failure ends the post"),
    ],
)
def test_a_failed_post_is_retried_on_conflict_only(error: StatusError, posted: bool, asked: int) -> None:
    clock = VirtualClock()
    memory = MemoryStore(clock)
    kubelet = HollowKubelet(memory, clock, node_config("n1"))
    kubelet.register()
    clock.advance(300)
    failing = FailingFirst(memory, error)
    kubelet.store = failing  # type: ignore[assignment]
    rv = memory.current_resource_version()
    assert kubelet.post_status() is posted
    assert failing.asked == asked
    assert (memory.current_resource_version() > rv) is posted
    assert (kubelet.last_status_post == clock.now()) is posted


class RecordingCommits:
    """A store that records the operations of each commit (resource and object count), and
    changes the node named `touch` behind the writer's back at the first commit posting it."""

    def __init__(self, store: Store, memory: MemoryStore) -> None:
        self._store = store
        self._memory = memory
        self.commits: list[list[tuple[str, int]]] = []
        self.touch = ""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def commit(self, ops: list[WriteOp], *, stop_at_failure: bool = False) -> list[Result]:
        self.commits.append([(op.resource, len(op.objects)) for op in ops if type(op) is SetField])
        posted = {obj["metadata"]["name"] for op in ops if op.resource == "nodes" for obj in op.objects}  # type: ignore[union-attr]
        if self.touch in posted:
            relabel(self._memory, self.touch)
            self.touch = ""
        return self._store.commit(ops, stop_at_failure=stop_at_failure)


LEASE, NODE = ("leases.coordination.k8s.io", 1), ("nodes", 1)


@pytest.mark.usefixtures("default_mode")
@pytest.mark.parametrize(
    "touch, commits",
    [
        pytest.param("", [[LEASE, NODE] * 5], id="every post written"),
        pytest.param(
            "n3",
            [[LEASE, NODE] * 5, [NODE], [LEASE, NODE] * 2],
            id="a conflicting post is retried before the rest",
        ),
    ],
)
def test_a_heartbeat_rounds_renewals_and_status_posts_are_one_commit(
    touch: str, commits: list[list[tuple[str, int]]]
) -> None:
    clock = VirtualClock()
    memory = MemoryStore(clock)
    memory.create(
        "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": LEASE_NAMESPACE}}
    )
    store = RecordingCommits(Registry(memory, admission=AdmissionChain()), memory)
    names = [f"n{i}" for i in range(1, 6)]
    pool = HollowNodePool(store, clock, [node_config(name) for name in names])  # type: ignore[arg-type]
    pool.start()  # (each registration posts its first status on its own)
    clock.advance(290)
    store.commits.clear()
    store.touch = touch
    clock.advance(10)
    assert store.commits == commits
    assert all(pool[name].last_status_post == clock.now() for name in names)
    posted = [memory.get("nodes", "", name) for name in names]
    assert {node["status"]["conditions"][-1]["lastHeartbeatTime"] for node in posted} == {
        format_time(clock.now())
    }
    assert [bool(node["metadata"].get("labels", {}).get("x")) for node in posted] == [
        n == touch for n in names
    ]
