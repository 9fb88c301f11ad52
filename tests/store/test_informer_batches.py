"""Informers over the change stream: the cache always equals the store's state (for any mix of
creates, updates, deletes, batches of updates and field writes, unfiltered or by namespace or
label), every handler is told each batch once, in order; the start is one batch of ADDED told to
the handlers registered before it, and a handler added later (even during that batch) is told the
cache as one batch of ADDED."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.speed.reference import reference_mode
from kubetaint.store.informer import Changes, EventHandlers, Informer
from kubetaint.store.interface import JSON
from kubetaint.store.memory import MemoryStore
from store.commits import update_field_many, update_many

LEASES = "leases.coordination.k8s.io"
RENEW = ("spec", "renewTime")
NAMES = ["a", "b", "c", "d"]
SPACES = ["kube-node-lease", "other"]


def lease(name: str, namespace: str, label: str) -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": namespace, "labels": {"tier": label}},
        "spec": {"renewTime": "t0"},
    }


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


#: a step: ("create", name, namespace, label), ("relabel", name, namespace, label),
#: ("delete", name, namespace), ("renew", value, names): a field write of those leases of the
#: first namespace, ("batch", label, names): one batch of relabels (one commit)
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("create"), st.sampled_from(NAMES), st.sampled_from(SPACES), st.sampled_from("xy")),
        st.tuples(st.just("relabel"), st.sampled_from(NAMES), st.sampled_from(SPACES), st.sampled_from("xy")),
        st.tuples(st.just("delete"), st.sampled_from(NAMES), st.sampled_from(SPACES)),
        st.tuples(
            st.just("renew"), st.sampled_from(["t1", "t2"]), st.lists(st.sampled_from(NAMES), unique=True)
        ),
        st.tuples(st.just("batch"), st.sampled_from("xy"), st.lists(st.sampled_from(NAMES), unique=True)),
    ),
    max_size=25,
)
SELECTORS = [
    pytest.param({}, id="every object"),
    pytest.param({"namespace": SPACES[0]}, id="one namespace"),
    pytest.param({"label_selector": "tier=x"}, id="a label selector"),
]


def apply(store: MemoryStore, step: tuple[Any, ...]) -> None:
    verb = step[0]
    try:
        if verb == "create":
            store.create(LEASES, lease(step[1], step[2], step[3]))
        elif verb == "relabel":
            current = store.get(LEASES, step[2], step[1])
            store.update(
                LEASES, {**current, "metadata": {**current["metadata"], "labels": {"tier": step[3]}}}
            )
        elif verb == "delete":
            store.delete(LEASES, step[2], step[1])
        elif verb == "renew":
            objects = [
                o for o in store.list(LEASES, namespace=SPACES[0]).items if o["metadata"]["name"] in step[2]
            ]
            update_field_many(store, LEASES, objects, RENEW, step[1])
        else:
            objects = [
                o for o in store.list(LEASES, namespace=SPACES[0]).items if o["metadata"]["name"] in step[2]
            ]
            update_many(
                store,
                LEASES,
                [{**o, "metadata": {**o["metadata"], "labels": {"tier": step[1]}}} for o in objects],
            )
    except StatusError:
        pass  # (a conflict, a missing or existing object: nothing changes)


def expected_cache(store: MemoryStore, selectors: dict[str, str]) -> list[str]:
    listed = store.list(
        LEASES, namespace=selectors.get("namespace", ""), label_selector=selectors.get("label_selector")
    )
    return sorted(dumps(o) for o in listed.items)


@settings(max_examples=120, deadline=None)
@given(before=STEPS, after=STEPS, which=st.sampled_from([p.values[0] for p in SELECTORS]))
def test_the_cache_equals_the_store_after_every_batch(
    before: list[tuple[Any, ...]], after: list[tuple[Any, ...]], which: dict[str, str]
) -> None:
    store = MemoryStore(VirtualClock())
    for step in before:
        apply(store, step)
    informer = Informer(store, LEASES, **which)
    model: dict[tuple[str, str], JSON] = {}

    def follow(changes: Changes) -> None:
        # a handler rebuilding the cache from what it is told
        group = changes.field_write
        if group is not None:
            assert [model[key] for key in group.keys] == group.olds
        for kind, key, old, obj in changes:
            assert model.get(key) == old or (kind == "ADDED" and old is None)
            if kind == "DELETED":
                model.pop(key)
            else:
                model[key] = obj

    informer.add_handlers(follow)
    informer.start()
    assert sorted(dumps(o) for o in informer.items()) == expected_cache(store, which)
    for step in after:
        apply(store, step)
        cached = sorted(dumps(o) for o in informer.items())
        assert cached == expected_cache(store, which)
        assert sorted(dumps(o) for o in model.values()) == cached
        assert all(informer.get(*key) is obj for key, obj in model.items())


def test_a_handler_added_during_the_start_is_told_the_whole_cache_once() -> None:
    store = MemoryStore(VirtualClock())
    for name in "abc":
        store.create(LEASES, lease(name, SPACES[0], "x"))
    informer = Informer(store, LEASES)
    told: list[tuple[str, list[str]]] = []

    def names(changes: Changes) -> list[str]:
        return [f"{kind} {key[1]}" for kind, key, _, _ in changes]

    def late(changes: Changes) -> None:
        told.append(("late", names(changes)))

    def first(changes: Changes) -> None:
        told.append(("first", names(changes)))
        if len(told) == 1:
            informer.add_handlers(late)

    informer.add_handlers(first)
    informer.add_handlers(EventHandlers())  # a handler of nothing is told nothing it shows
    informer.start()
    store.create(LEASES, lease("d", SPACES[0], "x"))
    assert told == [
        ("first", ["ADDED a", "ADDED b", "ADDED c"]),
        ("late", ["ADDED a", "ADDED b", "ADDED c"]),
        ("first", ["ADDED d"]),
        ("late", ["ADDED d"]),
    ]


def test_a_field_write_is_one_batch_with_its_compact_view_and_a_mixed_batch_runs_by_kind() -> None:
    store = MemoryStore(VirtualClock())
    leases = [store.create(LEASES, lease(name, SPACES[0], "x")) for name in "abc"]
    informer = Informer(store, LEASES, namespace=SPACES[0])
    told: list[Changes] = []
    informer.add_handlers(told.append)
    informer.start()
    (listing,) = told
    assert listing.only == "ADDED" and [run[0] for run in listing.runs()] == ["ADDED"]
    told.clear()
    written, err = update_field_many(store, LEASES, leases, RENEW, "t1")
    assert err is None
    (batch,) = told
    # the compact view is read from the store's group (in reference mode: event by event)
    assert (batch.field_write is not None) is not reference_mode()
    assert batch.only == "MODIFIED" and len(batch) == 3
    assert [obj for _, _, _, obj in batch] == written
    mixed = Changes([*batch[:2], ("DELETED", ("x", "y"), None, {}), batch[2]])
    assert [(kind, len(run)) for kind, run in mixed.runs()] == [
        ("MODIFIED", 2),
        ("DELETED", 1),
        ("MODIFIED", 1),
    ]
    assert mixed.only is None


def test_a_stopped_informer_follows_nothing_more() -> None:
    store = MemoryStore(VirtualClock())
    informer = Informer(store, LEASES)
    informer.start()
    store.create(LEASES, lease("a", SPACES[0], "x"))
    informer.stop()
    store.create(LEASES, lease("b", SPACES[0], "x"))
    assert list(informer.keys()) == [(SPACES[0], "a")]


def test_handlers_added_after_the_start_are_told_the_cache_as_it_is_then() -> None:
    store = MemoryStore(VirtualClock())
    for name in "ab":
        store.create(LEASES, lease(name, SPACES[0], "x"))
    informer = Informer(store, LEASES)
    told: list[Changes] = []
    informer.add_handlers(told.append)
    informer.start()
    informer.add_handlers(told.append)
    store.create(LEASES, lease("c", SPACES[0], "x"))
    told.clear()
    informer.add_handlers(told.append)
    (replay,) = told
    assert [(kind, key[1]) for kind, key, _, _ in replay] == [("ADDED", "a"), ("ADDED", "b"), ("ADDED", "c")]
    assert [obj for _, _, _, obj in replay] == [informer.get(SPACES[0], n) for n in "abc"]


@pytest.mark.usefixtures("default_mode")
def test_handlers_added_while_the_cache_is_unchanged_share_one_replay_batch() -> None:
    store = MemoryStore(VirtualClock())
    for name in "ab":
        store.create(LEASES, lease(name, SPACES[0], "x"))
    informer = Informer(store, LEASES)
    told: list[Changes] = []
    informer.add_handlers(told.append)
    informer.start()
    informer.add_handlers(told.append)
    informer.add_handlers(told.append)
    assert told[1] is told[0] and told[2] is told[0]
    store.create(LEASES, lease("c", SPACES[0], "x"))
    informer.add_handlers(told.append)
    informer.add_handlers(told.append)
    assert told[-1] is told[-2] and told[-1] is not told[0] and len(told[-1]) == 3
