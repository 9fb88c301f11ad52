"""A repeated round's vouched run (fieldwrite._write_keyed_run): a round rewriting exactly the
objects of a remembered one reuses that round's keys instead of building them from each object's
metadata. It must write what the plain loop writes and stop where it stops: at an object replaced
in between, deleted, of another namespace than the first one's, carrying a generation, or whose
field holds the value already, the general loop taking over; the results, events and history as
the plain updates of `with_field` copies."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.store import fieldwrite
from kubetaint.store.changes import each_event
from kubetaint.store.fieldwrite import with_field
from kubetaint.store.interface import JSON, StoreOptions, WatchEvent, update_many
from kubetaint.store.memory import MemoryStore

LEASES = "leases.coordination.k8s.io"
NS = "kube-node-lease"
RENEW = ("spec", "renewTime")
SIZE = 20  # at least RepeatedRounds.AT_LEAST: remembered


def lease(name: str, namespace: str = NS) -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": "t0"},
    }


def dumps(value: Any) -> str:
    return json.dumps(value)  # key order included


#: Between the two rounds: (store, the first round's results) -> the second round's objects
Between = Callable[[MemoryStore, list[JSON]], list[JSON]]


def nothing(store: MemoryStore, first: list[JSON]) -> list[JSON]:
    return first


def replaced(store: MemoryStore, first: list[JSON]) -> list[JSON]:
    store.update(LEASES, with_field(first[7], ("spec", "holderIdentity"), "someone-else"))
    return first


def deleted(store: MemoryStore, first: list[JSON]) -> list[JSON]:
    meta = first[12]["metadata"]
    store.delete(LEASES, meta["namespace"], meta["name"])
    return first


def already_renewed(store: MemoryStore, first: list[JSON]) -> list[JSON]:
    """The second round's value already in one of them (written behind the round's back): the
    round's objects are the first round's, so that one is stale."""
    store.update(LEASES, with_field(first[3], RENEW, "t2"))
    return first


BETWEEN = [
    pytest.param(nothing, id="nothing in between: the whole round keyed"),
    pytest.param(replaced, id="one replaced in between: stops there, conflict"),
    pytest.param(deleted, id="one deleted in between: stops there, not found"),
    pytest.param(already_renewed, id="one renewed by someone else: stale, conflict"),
]


def two_rounds(
    first_objects: Callable[[MemoryStore], list[JSON]], between: Between, vouched_writes: bool
) -> tuple[Any, ...]:
    counter = iter(range(100_000))
    store = MemoryStore(
        VirtualClock(), options=StoreOptions(history_size=50), uid_factory=lambda: f"u{next(counter)}"
    )
    objects = first_objects(store)
    vouched = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objects}
    log: list[tuple[Any, ...]] = []
    store.subscribe(
        each_event(lambda e: log.append((e.type, e.resource_version, dumps(e.object), dumps(e.old_object))))
    )
    outcomes: list[Any] = []
    for number in (1, 2):
        value = f"t{number}"
        if vouched_writes:
            result = store.update_field_many_if_current(LEASES, objects, RENEW, value, vouched=vouched)
            if result is None:
                result = store.update_field_many(LEASES, objects, RENEW, value)
        else:
            result = update_many(store, LEASES, [with_field(o, RENEW, value) for o in objects])
        written, err = result
        outcomes.append((dumps(written), None if err is None else err.message))
        if number == 1:
            objects = between(store, written)
    replays: list[Any] = []
    for since in range(0, store.current_resource_version() + 1):
        try:
            replays.append(
                [
                    (e.resource_version, dumps(e.object))
                    for e in store.watch(LEASES, resource_version=str(since)).drain()
                ]
            )
        except StatusError as expired:
            replays.append(expired.code)
    return outcomes, log, replays, dumps(store.list(LEASES).items)


def one_namespace(store: MemoryStore) -> list[JSON]:
    return [store.create(LEASES, lease(f"n{i:02d}")) for i in range(SIZE)]


def two_namespaces(store: MemoryStore) -> list[JSON]:
    """Alternating namespaces: the general loop writes the first round (its keys are each
    object's own), so the repeated round's keys hold both namespaces."""
    return [store.create(LEASES, lease(f"n{i:02d}", NS if i % 2 else "other")) for i in range(SIZE)]


def a_generation(store: MemoryStore) -> list[JSON]:
    objects = one_namespace(store)
    objects[5] = store.create(
        LEASES, {**lease("g"), "metadata": {"name": "g", "namespace": NS, "generation": 1}}
    )
    return objects


FIRSTS = [
    pytest.param(one_namespace, id="leases of one namespace"),
    pytest.param(two_namespaces, id="leases of two namespaces"),
    pytest.param(a_generation, id="a lease with a generation among them"),
]


@pytest.mark.parametrize("first_objects", FIRSTS)
@pytest.mark.parametrize("between", BETWEEN)
def test_a_keyed_repeated_round_writes_what_plain_updates_write(
    first_objects: Callable[[MemoryStore], list[JSON]], between: Between
) -> None:
    assert two_rounds(first_objects, between, True) == two_rounds(first_objects, between, False)


@pytest.mark.usefixtures("default_mode")
def test_the_second_round_of_the_same_leases_takes_the_keyed_run(monkeypatch: pytest.MonkeyPatch) -> None:
    keyed: list[int] = []
    real = fieldwrite._write_keyed_run

    def spy(bucket: Any, vouched: Any, objects: list[JSON], keys: Any, *args: Any, **kw: Any) -> None:
        keyed.append(len(objects))
        news: list[JSON] = kw["news"]
        real(bucket, vouched, objects, keys, *args, **kw)
        assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in news] == keys[: len(news)]

    monkeypatch.setattr(fieldwrite, "_write_keyed_run", spy)
    two_rounds(one_namespace, nothing, True)
    assert keyed == [SIZE], "the first round builds its keys, the second reuses them"


def test_the_keyed_run_stops_at_a_key_of_another_namespace() -> None:
    store = MemoryStore(VirtualClock())
    objects = two_namespaces(store)
    news: list[JSON] = []
    keys = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects]
    vouched = dict(zip(keys, objects, strict=True))
    bucket = store._objects[LEASES]["other"]  # the first object's namespace
    fieldwrite._write_keyed_run(
        bucket, vouched, objects, keys, iter(map(str, range(100, 200))), path=RENEW, value="t9", news=news
    )
    assert [o["metadata"]["name"] for o in news] == ["n00"], "written up to the first of the other namespace"
    assert vouched[keys[0]] is news[0] and bucket["n00"] is news[0]
    assert vouched[keys[1]] is objects[1], "the rest untouched"


def test_events_of_a_keyed_round_name_the_same_old_and_new_objects() -> None:
    log: list[WatchEvent] = []
    store = MemoryStore(VirtualClock())
    objects = one_namespace(store)
    vouched = {(NS, o["metadata"]["name"]): o for o in objects}
    first = store.update_field_many_if_current(LEASES, objects, RENEW, "t1", vouched=vouched)
    assert first is not None
    store.subscribe(each_event(log.append))
    second = store.update_field_many_if_current(LEASES, first[0], RENEW, "t2", vouched=vouched)
    assert second is not None and second[1] is None
    assert [(e.old_object, e.object) for e in log] == list(zip(first[0], second[0], strict=True))
