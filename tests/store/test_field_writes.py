"""Field writes (kubetaint.store.memoryfields, MemoryStore.update_field_many and its `_if_current`
variant) store exactly what `update_many` of the `with_field` copies stores: the same returned
objects, errors, resourceVersions, watch events, history and final state, whatever the batch
holds (current objects, stale ones, missing ones, no-ops, generations, duplicates)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, Result, SetField, WatchEvent, WriteOp, as_updates, with_field
from kubetaint.store.memory import MemoryStore
from store.commits import update_field_many, update_many

LEASES = "leases.coordination.k8s.io"
NS = "kube-node-lease"
RENEW = ("spec", "renewTime")


def memory_store() -> MemoryStore:
    counter = iter(range(1000))
    return MemoryStore(VirtualClock(), uid_factory=lambda: f"uid-{next(counter)}")


def lease(name: str, renew: str = "t0") -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renew},
    }


class GenericOnly:
    """A store committing a field write as the updates of its copies (as SQLite, etcd and remote
    stores do)."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def commit(self, ops: list[WriteOp], *, stop_at_failure: bool = False) -> list[Result]:
        updates: list[WriteOp] = [u for op in ops for u in (as_updates(op) if type(op) is SetField else [op])]
        return self._store.commit(updates, stop_at_failure=stop_at_failure)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


#: A scenario: (store after set-up, the objects of the batch) from a fresh store.
Setup = Callable[[MemoryStore], list[JSON]]


def current(store: MemoryStore) -> list[JSON]:
    return [store.create(LEASES, lease(n)) for n in "abc"]


def unchanged_value(store: MemoryStore) -> list[JSON]:
    a, b = (store.create(LEASES, lease(n, renew="t1")) for n in "ab")
    return [a, b]


def changed_in_between(store: MemoryStore) -> list[JSON]:
    a, b, c = current(store)
    store.update(LEASES, with_field(b, ("spec", "holderIdentity"), "someone-else"))
    return [a, b, c]


def missing(store: MemoryStore) -> list[JSON]:
    a, b, c = current(store)
    store.delete(LEASES, NS, "b")
    return [a, b, c]


def recreated(store: MemoryStore) -> list[JSON]:
    a, b, c = current(store)
    store.delete(LEASES, NS, "b")
    store.create(LEASES, lease("b"))
    return [a, b, c]


def duplicated(store: MemoryStore) -> list[JSON]:
    a, b, _ = current(store)
    return [a, b, a]


def spec_not_an_object(store: MemoryStore) -> list[JSON]:
    a, b, c = current(store)
    nulled = store.update(LEASES, {**b, "spec": None})
    return [a, nulled, c]


def no_spec(store: MemoryStore) -> list[JSON]:
    plain = {k: v for k, v in lease("x").items() if k != "spec"}
    return [store.create(LEASES, plain), *current(store)]


def with_generation(store: MemoryStore) -> list[JSON]:
    pods = [
        store.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": n}, "spec": {}})
        for n in "pq"
    ]
    return [{**pod, "metadata": {**pod["metadata"], "generation": 1}} for pod in pods]


def copied_metadata(store: MemoryStore) -> list[JSON]:
    a, b, c = current(store)
    return [a, {**b, "metadata": dict(b["metadata"])}, c]


def unchanged_between_changed(store: MemoryStore) -> list[JSON]:
    a, c = (store.create(LEASES, lease(n)) for n in "ac")
    b = store.create(LEASES, lease("b", renew="t1"))
    return [a, b, c]


def two_namespaces(store: MemoryStore) -> list[JSON]:
    a, b = current(store)[:2]
    elsewhere = [
        store.create(LEASES, {**lease(n), "metadata": {"name": n, "namespace": "other"}}) for n in "ab"
    ]
    return [a, elsewhere[0], b, elsewhere[1]]


def namespace_holding_nothing(store: MemoryStore) -> list[JSON]:
    a, b, c = current(store)
    return [a, {**b, "metadata": {**b["metadata"], "namespace": "empty"}}, c]


def unchanged_after_an_equal_copy(store: MemoryStore) -> list[JSON]:
    a, b, c = current(store)
    d = store.create(LEASES, lease("d", renew="t1"))
    e = store.create(LEASES, lease("e"))
    return [a, {**b, "metadata": dict(b["metadata"])}, d, c, e]


def generation_mid_run(store: MemoryStore) -> list[JSON]:
    a, b, c = current(store)
    g = store.create(LEASES, {**lease("g"), "metadata": {"name": "g", "namespace": NS, "generation": 3}})
    return [a, b, g, c]


def long_run_then_a_stale_one(store: MemoryStore) -> list[JSON]:
    objects = [store.create(LEASES, lease(f"n{i:02}")) for i in range(40)]
    store.update(LEASES, with_field(objects[30], ("spec", "holderIdentity"), "someone-else"))
    return objects


def first_in_an_unknown_namespace(store: MemoryStore) -> list[JSON]:
    a, b, c = current(store)
    return [{**a, "metadata": {**a["metadata"], "namespace": "empty"}}, b, c]


SCENARIOS = [
    pytest.param(current, LEASES, id="every object is the stored one"),
    pytest.param(unchanged_value, LEASES, id="the field holds the value already: no write"),
    pytest.param(changed_in_between, LEASES, id="one was changed by someone else in between: conflict"),
    pytest.param(missing, LEASES, id="one was deleted: not found"),
    pytest.param(recreated, LEASES, id="one was deleted and created again: conflict"),
    pytest.param(duplicated, LEASES, id="the same object twice: the second conflicts"),
    pytest.param(spec_not_an_object, LEASES, id="a part that is not an object is replaced"),
    pytest.param(no_spec, LEASES, id="a missing part is added"),
    pytest.param(with_generation, "pods", id="objects carrying a generation (spec change bumps it)"),
    pytest.param(copied_metadata, LEASES, id="an equal copy, not the stored object"),
    pytest.param(unchanged_between_changed, LEASES, id="a no-op between two writes"),
    pytest.param(two_namespaces, LEASES, id="objects of two namespaces, alternating"),
    pytest.param(namespace_holding_nothing, LEASES, id="one in a namespace holding nothing: not found"),
    pytest.param(
        unchanged_after_an_equal_copy, LEASES, id="a no-op and current objects after an equal copy's update"
    ),
    pytest.param(generation_mid_run, LEASES, id="a lease carrying a generation after two plain ones"),
    pytest.param(long_run_then_a_stale_one, LEASES, id="forty current leases, the thirty-first stale"),
    pytest.param(first_in_an_unknown_namespace, LEASES, id="the first in a namespace holding nothing"),
]


def run(setup: Setup, resource: str, write: str) -> tuple[str, str, list[tuple[Any, ...]], str, str]:
    """Set up a fresh store, write the batch one way; everything observable afterwards."""
    store = memory_store()
    objects = setup(store)
    start = store.current_resource_version()
    seen: list[WatchEvent] = []
    store.subscribe(each_event(seen.append))
    watch = store.watch(resource, resource_version=str(start))
    path = ("spec", "n") if resource == "pods" else RENEW
    result: tuple[list[JSON], StatusError | None]
    if write == "fast" or write == "fieldwrite":
        result = update_field_many(store, resource, objects, path, "t1")
    elif write == "fallback":
        result = update_field_many(GenericOnly(store), resource, objects, path, "t1")  # type: ignore[arg-type]
    else:
        result = update_many(store, resource, [with_field(obj, path, "t1") for obj in objects])
    stored, err = result
    error = "" if err is None else f"{err.code} {err.reason} {err.message}"
    events = [(e.type, e.resource_version, dumps(e.object), dumps(e.old_object)) for e in seen]
    replay = [(e.type, e.resource_version, dumps(e.object)) for e in watch.drain()]
    state = dumps(store.list(resource).items)
    return dumps(stored), error, events, dumps(replay), state


def dumps(value: Any) -> str:
    return json.dumps(value)  # key order included


@pytest.mark.parametrize("setup, resource", SCENARIOS)
@pytest.mark.parametrize("write", ["fast", "fieldwrite", "fallback"])
def test_a_field_write_stores_what_updates_of_copies_store(setup: Setup, resource: str, write: str) -> None:
    assert run(setup, resource, write) == run(setup, resource, "generic")


def test_the_renewed_objects_keep_their_keys_in_order_and_share_the_rest() -> None:
    store = memory_store()
    owned = lease("a")
    owned["metadata"]["ownerReferences"] = [{"kind": "Node", "name": "a"}]
    a = store.create(LEASES, owned)
    (renewed,), err = update_field_many(store, LEASES, [a], RENEW, "t9")
    assert err is None
    assert list(renewed) == list(a) and list(renewed["spec"]) == list(a["spec"])
    assert list(renewed["metadata"]) == list(a["metadata"])
    assert renewed["metadata"]["ownerReferences"] is a["metadata"]["ownerReferences"]
    assert renewed["spec"]["renewTime"] == "t9" and a["spec"]["renewTime"] == "t0", "old untouched"
    assert renewed["metadata"]["resourceVersion"] == str(store.current_resource_version())


#: the scenarios whose objects are all the stored ones (without a generation)
ALL_CURRENT = (current, unchanged_value, unchanged_between_changed, two_namespaces)


def replay_after_write(setup: Setup, resource: str, clear_results: bool) -> list[tuple[Any, ...]]:
    store = memory_store()
    objects = setup(store)
    start = str(store.current_resource_version())
    path = ("spec", "n") if resource == "pods" else RENEW
    stored, _ = update_field_many(store, resource, objects, path, "t1")
    if clear_results:
        stored.clear()
    return [
        (e.type, e.resource_version, dumps(e.object))
        for e in store.watch(resource, resource_version=start).drain()
    ]


@pytest.mark.parametrize("setup, resource", SCENARIOS)
def test_the_returned_list_is_the_callers(setup: Setup, resource: str) -> None:
    """Changing the list of results changes nothing the store recorded (its watch history)."""
    assert replay_after_write(setup, resource, True) == replay_after_write(setup, resource, False)


def test_a_field_write_never_sets_metadata() -> None:
    store = memory_store()
    a = store.create(LEASES, lease("a"))
    with pytest.raises(ValueError):
        update_field_many(store, LEASES, [a], ("metadata", "name"), "b")
    with pytest.raises(ValueError):
        update_field_many(store, LEASES, [a], ("metadata", "name"), "b")
    assert store.get(LEASES, NS, "a") is a


@pytest.mark.parametrize(
    "obj, expected",
    [
        pytest.param(
            {"a": 1, "spec": {"x": 1, "renewTime": "t0"}},
            {"a": 1, "spec": {"x": 1, "renewTime": "t1"}},
            id="the field moves in place",
        ),
        pytest.param(
            {"spec": {"x": 1}, "a": 1},
            {"spec": {"x": 1, "renewTime": "t1"}, "a": 1},
            id="a new field goes last",
        ),
        pytest.param({"a": 1}, {"a": 1, "spec": {"renewTime": "t1"}}, id="a missing part is added"),
        pytest.param({"spec": None}, {"spec": {"renewTime": "t1"}}, id="a null part is replaced"),
        pytest.param({"spec": [1]}, {"spec": {"renewTime": "t1"}}, id="a list part is replaced"),
    ],
)
def test_with_field(obj: JSON, expected: JSON) -> None:
    assert dumps(with_field(obj, RENEW, "t1")) == dumps(expected)
