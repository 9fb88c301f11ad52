"""Recycled versions (store.recycling): a MemoryStore round of field writes renewing the objects the
last round wrote takes, for each, the version that round replaced when nothing can reach it any
more. Every observer sees what it sees of the generic updates (the objects written, lists, watches
resumed from any resourceVersion, "too old" answers), and a version anyone still holds (itself,
its metadata, its part, a change list or an event holding it) keeps its content."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.speed.reference import reference_mode_set
from kubetaint.store.changes import ChangeBatch
from kubetaint.store.interface import JSON, StoreOptions, with_field
from kubetaint.store.memory import MemoryStore
from store.commits import update_field_many, update_many

LEASES = "leases.coordination.k8s.io"
NS = "kube-node-lease"
RENEW = ("spec", "renewTime")
NAMES = ["a", "b", "c", "d"]


def memory_store(history: int | None) -> MemoryStore:
    counter = iter(range(10_000))
    return MemoryStore(
        VirtualClock(), options=StoreOptions(history_size=history), uid_factory=lambda: f"uid-{next(counter)}"
    )


def lease(name: str) -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": "t0"},
    }


def dumps(value: Any) -> str:
    return json.dumps(value)


def replays(store: MemoryStore) -> list[Any]:
    """What a watch resumed from each resourceVersion gets, and a list at it (or their "too old"
    answers)."""
    seen: list[Any] = []
    for since in range(0, store.current_resource_version() + 2):
        try:
            events = store.watch(LEASES, resource_version=str(since)).drain()
            seen.append([(e.type, e.resource_version, dumps(e.object), dumps(e.old_object)) for e in events])
        except StatusError as expired:
            seen.append([expired.code, expired.message])
        try:
            seen.append(dumps(store.list(LEASES, resource_version=since).items))
        except StatusError as expired:
            seen.append([expired.code, expired.message])
    return seen


@pytest.mark.usefixtures("default_mode")
def test_the_third_round_writes_into_the_versions_the_second_replaced() -> None:
    store = memory_store(history=2)
    first = [store.create(LEASES, lease(n)) for n in NAMES]
    second, err = update_field_many(store, LEASES, first, RENEW, "t1")
    assert err is None
    first_ids = [id(obj) for obj in first]
    del first  # (nothing holds the replaced versions now but the store's last group)
    third, err = update_field_many(store, LEASES, second, RENEW, "t2")
    assert err is None
    assert [id(obj) for obj in third] == first_ids
    assert [obj["spec"]["renewTime"] for obj in third] == ["t2"] * 4
    assert [obj["metadata"]["resourceVersion"] for obj in third] == ["9", "10", "11", "12"]
    assert [obj["spec"]["renewTime"] for obj in second] == ["t1"] * 4  # (the versions replaced)


@pytest.mark.usefixtures("default_mode")
@pytest.mark.parametrize(
    "hold",
    [
        pytest.param(lambda objs: objs[1], id="the version itself"),
        pytest.param(lambda objs: objs[1]["metadata"], id="its metadata"),
        pytest.param(lambda objs: objs[1]["spec"], id="its spec"),
    ],
)
def test_a_version_still_held_keeps_its_content(hold: Any) -> None:
    store = memory_store(history=2)
    first = [store.create(LEASES, lease(n)) for n in NAMES]
    held = hold(first)
    before = dumps(held)
    second, _ = update_field_many(store, LEASES, first, RENEW, "t1")
    first_ids = [id(obj) for obj in first]
    del first
    third, _ = update_field_many(store, LEASES, second, RENEW, "t2")
    assert dumps(held) == before
    recycled = [id(obj) == old for obj, old in zip(third, first_ids, strict=True)]
    assert recycled == [True, False, True, True]


@pytest.mark.usefixtures("default_mode")
def test_a_change_batch_still_held_keeps_every_version_its_group_replaced() -> None:
    store = memory_store(history=2)
    batches: list[ChangeBatch] = []
    store.subscribe(batches.append, LEASES)
    first = [store.create(LEASES, lease(n)) for n in NAMES]
    second, _ = update_field_many(store, LEASES, first, RENEW, "t1")
    before = [dumps(event.old_object) for event in batches[-1]]  # (read later, as a slow reader)
    del first
    update_field_many(store, LEASES, second, RENEW, "t2")
    assert [dumps(event.old_object) for event in batches[-2]] == before


@pytest.mark.usefixtures("default_mode")
def test_the_history_reaching_a_replaced_version_keeps_it() -> None:
    store = memory_store(history=1000)  # (every update held: nothing is out of reach)
    first = [store.create(LEASES, lease(n)) for n in NAMES]
    second, _ = update_field_many(store, LEASES, first, RENEW, "t1")
    first_ids = [id(obj) for obj in first]
    del first
    third, _ = update_field_many(store, LEASES, second, RENEW, "t2")
    assert not {id(obj) for obj in third} & set(first_ids)


def test_the_reference_mode_recycles_nothing() -> None:
    with reference_mode_set(True):
        store = memory_store(history=2)
        first = [store.create(LEASES, lease(n)) for n in NAMES]
        second, _ = update_field_many(store, LEASES, first, RENEW, "t1")
        first_ids = {id(obj) for obj in first}
        del first
        third, _ = update_field_many(store, LEASES, second, RENEW, "t2")
        assert not {id(obj) for obj in third} & first_ids


#: a step: ("renew", names): a field write of those leases as last written (in that order);
#: ("again", names): the same with the value of the last field write (each holds it already);
#: ("hold", name): keep a reference to the lease as last written; ("drop", None): let go of every
#: reference kept; ("touch", name): a plain update; ("watch", None): resume a watch from each
#: resourceVersion (the history's events built)
steps_strategy = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(["renew", "again"]),
            st.sampled_from([NAMES, NAMES[:3], NAMES[1:], ["b", "a", "c", "d"]]),
        ),
        st.tuples(st.sampled_from(["hold", "touch"]), st.sampled_from(NAMES)),
        st.tuples(st.sampled_from(["drop", "watch"]), st.none()),
    ),
    max_size=14,
)


def rounds(steps: list[tuple[str, Any]], history: int | None, fast: bool) -> tuple[Any, ...]:
    store = memory_store(history)
    last = {n: store.create(LEASES, lease(n)) for n in NAMES}
    kept: list[tuple[JSON, str]] = []  # references held, with their content when taken
    outcomes: list[Any] = []
    value = "t0"
    for number, (verb, arg) in enumerate(steps):
        if verb != "again":
            value = f"t{number + 1}"
        if verb in ("renew", "again"):
            objects = [last[n] for n in arg]
            if fast:
                written, err = update_field_many(store, LEASES, objects, RENEW, value)
            else:
                written, err = update_many(store, LEASES, [with_field(o, RENEW, value) for o in objects])
            last.update((o["metadata"]["name"], o) for o in written)
            outcomes.append((dumps(written), None if err is None else err.message))
        elif verb == "hold":
            kept.append((last[arg], dumps(last[arg])))
        elif verb == "drop":
            kept.clear()
        elif verb == "touch":
            last[arg] = store.update(LEASES, with_field(last[arg], ("spec", "holderIdentity"), value))
        else:
            outcomes.append(replays(store))
        for obj, content in kept:
            assert dumps(obj) == content
    return outcomes, replays(store), dumps(store.list(LEASES).items)


@settings(max_examples=200, deadline=None)
@given(steps_strategy, st.sampled_from([0, 1, 2, 3, 4, 5, 8, None]))
def test_rounds_with_recycled_versions_show_what_generic_updates_show(
    steps: list[tuple[str, Any]], history: int | None
) -> None:
    assert rounds(steps, history, fast=True) == rounds(steps, history, fast=False)


@pytest.mark.usefixtures("default_mode")
def test_a_group_not_taken_is_let_go_once_as_many_groups_as_the_limit_were_kept_after_it() -> None:
    from kubetaint.store.changes import FieldWriteGroup
    from kubetaint.store.recycling import Spares
    from kubetaint.store.watchhistory import WatchHistory

    spares, history = Spares(), WatchHistory(0)

    def group() -> FieldWriteGroup:
        return FieldWriteGroup.in_namespace(
            LEASES, NS, ["a"], [lease("a")], [lease("a")], first_rv=1, path=RENEW, value="t1"
        )

    stale = group()
    spares.keep(stale)
    for _ in range(Spares.LIMIT - 1):
        spares.keep(group())
    assert len(spares) == Spares.LIMIT
    spares.keep(group())
    assert len(spares) == Spares.LIMIT
    assert spares.take(LEASES, stale.news, RENEW, history) is None  # (let go)
    renewed = group()
    news = renewed.news
    spares.keep(renewed)
    del renewed  # (a group someone holds is not taken)
    taken = spares.take(LEASES, news, RENEW, history)
    assert taken is not None and taken.news is news
