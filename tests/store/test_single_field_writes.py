"""A field write of one object (a lease renewal or a node status post between others' writes: a
status round writes one lease, then one node, node after node) commits as one plain MODIFIED
event, exactly as the store's `update` of the `with_field` copy commits it: the same stored
object, resourceVersion, event (old and new objects), history replay, informer cache and handler
calls (`on_update`, never a field-write group). Writes of two or more current objects keep their
field-write group; every refused or stale single object takes the general way as before."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.store.changes import ChangeBatch, FieldWriteGroup, each_event
from kubetaint.store.informer import Changes, Informer
from kubetaint.store.interface import JSON, StoreOptions, WatchEvent, with_field
from kubetaint.store.memory import MemoryStore
from store.commits import update_field_many

LEASES = "leases.coordination.k8s.io"
NS = "kube-node-lease"
RENEW = ("spec", "renewTime")
CONDITIONS = ("status", "conditions")


def memory_store(history: int = 1000) -> MemoryStore:
    counter = iter(range(10_000))
    return MemoryStore(
        VirtualClock(), options=StoreOptions(history_size=history), uid_factory=lambda: f"uid-{next(counter)}"
    )


def lease(name: str, renew: str = "t0") -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renew},
    }


def node(name: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"zone": "a"}},
        "spec": {},
        "status": {"capacity": {"cpu": "8"}, "conditions": [{"type": "Ready", "status": "True"}]},
    }


def dumps(value: Any) -> str:
    return json.dumps(value)  # key order included


#: A scenario: from a fresh store, (resource, path, the one object to write, the value)
Setup = Callable[[MemoryStore], tuple[str, tuple[str, str], JSON, object]]


def current_lease(store: MemoryStore) -> tuple[str, tuple[str, str], JSON, object]:
    store.create(LEASES, lease("a"))
    return LEASES, RENEW, store.create(LEASES, lease("b")), "t1"


def current_node(store: MemoryStore) -> tuple[str, tuple[str, str], JSON, object]:
    return "nodes", CONDITIONS, store.create("nodes", node("n1")), [{"type": "Ready", "status": "False"}]


def node_without_status(store: MemoryStore) -> tuple[str, tuple[str, str], JSON, object]:
    bare = {k: v for k, v in node("n1").items() if k != "status"}
    return "nodes", CONDITIONS, store.create("nodes", bare), [{"type": "Ready", "status": "True"}]


def unchanged(store: MemoryStore) -> tuple[str, tuple[str, str], JSON, object]:
    return LEASES, RENEW, store.create(LEASES, lease("a", renew="t1")), "t1"


def stale(store: MemoryStore) -> tuple[str, tuple[str, str], JSON, object]:
    a = store.create(LEASES, lease("a"))
    store.update(LEASES, with_field(a, ("spec", "holderIdentity"), "someone-else"))
    return LEASES, RENEW, a, "t1"


def deleted(store: MemoryStore) -> tuple[str, tuple[str, str], JSON, object]:
    a = store.create(LEASES, lease("a"))
    store.delete(LEASES, NS, "a")
    return LEASES, RENEW, a, "t1"


def equal_copy(store: MemoryStore) -> tuple[str, tuple[str, str], JSON, object]:
    a = store.create(LEASES, lease("a"))
    return LEASES, RENEW, {**a, "metadata": dict(a["metadata"])}, "t1"


def part_not_an_object(store: MemoryStore) -> tuple[str, tuple[str, str], JSON, object]:
    a = store.create(LEASES, lease("a"))
    return LEASES, RENEW, store.update(LEASES, {**a, "spec": None}), "t1"


def with_generation(store: MemoryStore) -> tuple[str, tuple[str, str], JSON, object]:
    g = store.create(LEASES, {**lease("g"), "metadata": {"name": "g", "namespace": NS, "generation": 2}})
    return LEASES, RENEW, g, "t1"


SINGLES = [
    pytest.param(current_lease, id="a current lease"),
    pytest.param(current_node, id="a current node's conditions"),
    pytest.param(node_without_status, id="a node without status gets one"),
    pytest.param(unchanged, id="the field holds the value already: no write"),
    pytest.param(stale, id="changed by someone else in between: conflict"),
    pytest.param(deleted, id="deleted in between: not found"),
    pytest.param(equal_copy, id="an equal copy, not the stored object"),
    pytest.param(part_not_an_object, id="a part that is not an object is replaced"),
    pytest.param(with_generation, id="a generation to bump"),
]


def observe(setup: Setup, write: str) -> tuple[Any, ...]:
    """Set up a fresh store, write the one object one way; everything observable afterwards."""
    store = memory_store()
    resource, path, obj, value = setup(store)
    start = store.current_resource_version()
    seen: list[WatchEvent] = []
    store.subscribe(each_event(seen.append))
    informer = Informer(store, resource)
    calls: list[tuple[Any, ...]] = []

    def told(changes: Changes) -> None:
        if changes.field_write is not None:
            calls.append(("field group", len(changes.field_write)))
        elif changes.only == "MODIFIED":
            calls.extend(("update", dumps(old), dumps(new)) for _, _, old, new in changes)

    informer.add_handlers(told)
    informer.start()
    stored: Any
    error = ""
    if write == "update":
        try:
            stored = [store.update(resource, with_field(obj, path, value))]
        except StatusError as err:
            stored, error = [], f"{err.code} {err.message}"
    else:
        result = update_field_many(store, resource, [obj], path, value)
        stored, err = result
        error = "" if err is None else f"{err.code} {err.message}"
    events = [(e.type, e.resource_version, dumps(e.object), dumps(e.old_object)) for e in seen]
    replay = [
        (e.type, e.resource_version, dumps(e.object))
        for e in store.watch(resource, resource_version=str(start)).drain()
    ]
    cache = dumps(sorted(informer.items(), key=dumps))
    state = (store.current_resource_version(), dumps(store.list(resource).items))
    return dumps(stored), error, events, replay, calls, cache, state


@pytest.mark.parametrize("setup", SINGLES)
@pytest.mark.parametrize("write", ["field write"])
def test_a_single_field_write_is_the_stores_update_of_the_copy(setup: Setup, write: str) -> None:
    assert observe(setup, write) == observe(setup, "update")


def test_a_written_single_object_is_one_plain_event_not_a_group() -> None:
    store = memory_store()
    a = store.create(LEASES, lease("a"))
    queued: list[ChangeBatch] = []
    dispatcher = store._dispatcher
    publish = dispatcher.publish
    dispatcher.publish = lambda batch: (queued.append(batch), publish(batch))[1]  # type: ignore[method-assign]
    (stored,), err = update_field_many(store, LEASES, [a], RENEW, "t1") or (
        [],
        None,
    )
    assert err is None
    assert len(queued) == 1 and len(queued[0]) == 1 and queued[0].field_write is None
    event = queued[0][0]
    assert (event.type, event.object, event.old_object) == ("MODIFIED", stored, a)
    assert event.resource_version == int(stored["metadata"]["resourceVersion"])
    assert list(store._history)[-1] is event, "the history holds the event itself"


def test_two_current_objects_keep_their_field_write_group() -> None:
    store = memory_store()
    a, b = (store.create(LEASES, lease(n)) for n in "ab")
    queued: list[ChangeBatch] = []
    dispatcher = store._dispatcher
    publish = dispatcher.publish
    dispatcher.publish = lambda batch: (queued.append(batch), publish(batch))[1]  # type: ignore[method-assign]
    result = update_field_many(store, LEASES, [a, b], RENEW, "t1")
    assert result is not None and result[1] is None
    assert [type(q.field_write) for q in queued] == [FieldWriteGroup] and len(queued[0]) == 2


def test_a_single_write_after_a_no_op_is_a_plain_event_too() -> None:
    """Of a batch of two, one unchanged: the one write is committed as one event."""
    store = memory_store()
    a = store.create(LEASES, lease("a", renew="t1"))
    b = store.create(LEASES, lease("b"))
    seen: list[WatchEvent] = []
    store.subscribe(each_event(seen.append))
    stored, err = update_field_many(store, LEASES, [a, b], RENEW, "t1")
    assert err is None and stored[0] is a and stored[1]["spec"]["renewTime"] == "t1"
    assert [(e.type, e.object, e.old_object) for e in seen] == [("MODIFIED", stored[1], b)]


def test_single_writes_in_a_row_replay_from_a_bounded_history() -> None:
    store = memory_store(history=3)
    objects = [store.create(LEASES, lease(n)) for n in "abcd"]
    for i, obj in enumerate(objects):
        (objects[i],), _ = update_field_many(store, LEASES, [obj], RENEW, "t1")
    rv = store.current_resource_version()
    replay = store.watch(LEASES, resource_version=str(rv - 3)).drain()
    assert [(e.resource_version, e.object["metadata"]["name"]) for e in replay] == [
        (rv - 2, "b"),
        (rv - 1, "c"),
        (rv, "d"),
    ]
    with pytest.raises(StatusError):
        store.watch(LEASES, resource_version=str(rv - 4))


def test_a_single_pod_takes_the_general_loop_which_indexes_it() -> None:
    """Pods are indexed by node: the one-object write leaves them to the general loop."""
    store = memory_store()
    pod = store.create(
        "pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeName": "n1"}}
    )
    (stored,), err = update_field_many(store, "pods", [pod], ("status", "phase"), "Running")
    assert err is None
    assert [p["metadata"]["name"] for p in store.list("pods", field_selector="spec.nodeName=n1").items] == [
        "p"
    ]
    assert store.get("pods", "", "p") is stored
