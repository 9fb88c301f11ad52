"""The garbage collector's update handler computes the followed owner references of a changed
object once (DependencyGraph.update_refs) and hands them to the examination: it queues exactly
what the examination queues when it reads them again itself, for references added, removed,
replaced or kept, owners present or absent, owners waiting in the foreground or not."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.clock import VirtualClock
from kubetaint.controllers.garbagecollector.controller import GarbageCollector
from kubetaint.controllers.garbagecollector.graph import DependencyGraph, followed_refs
from kubetaint.store.informer import Changes, Informer
from kubetaint.store.interface import JSON
from kubetaint.store.memory import MemoryStore


def ref(name: str, kind: str = "ReplicaSet", **extra: Any) -> JSON:
    return {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": f"{name}-uid", **extra}


def pod(refs: list[JSON] | None, **meta: Any) -> JSON:
    metadata: JSON = {"name": "p", "namespace": "default", "uid": "p-uid", **meta}
    if refs is not None:
        metadata["ownerReferences"] = refs
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {}}


SHARED = [ref("a")]
CHANGES = [
    pytest.param(None, [ref("a", controller=True)], False, id="an adoption adds a controller reference"),
    pytest.param([ref("a", controller=True)], None, False, id="a release removes it"),
    pytest.param([ref("a")], [ref("b")], False, id="one owner replaced by another"),
    pytest.param([ref("a"), ref("b")], [ref("b")], False, id="one of two owners dropped"),
    pytest.param(SHARED, SHARED, False, id="the very same reference list"),
    pytest.param([ref("a")], [ref("a")], False, id="equal reference lists"),
    pytest.param([ref("a")], [ref("cm", kind="ConfigMap")], False, id="an owner of a kind not followed"),
    pytest.param([{"kind": "ReplicaSet", "name": "x"}], [ref("a")], False, id="a reference without uid"),
    pytest.param([ref("a")], [ref("b")], True, id="a change of an object being deleted"),
    pytest.param([ref("a")], [ref("a")], True, id="an object being deleted keeping its owners"),
]

STATES = list(
    itertools.product(
        [set(), {"a-uid"}, {"a-uid", "b-uid"}],  # owners present
        [set(), {"a-uid"}, {"b-uid"}],  # owners waiting in the foreground
        [True, False],  # synced
    )
)


def _collector(present: set[str], foreground: set[str], synced: bool) -> GarbageCollector:
    clock = VirtualClock()
    store = MemoryStore(clock)
    gc = GarbageCollector(store, clock, {"pods": Informer(store, "pods")})  # type: ignore[arg-type]
    for uid in present:
        gc.graph.present[uid] = ("replicasets.apps", "default", uid.removesuffix("-uid"))
    gc.foreground = set(foreground)
    gc.synced = synced
    return gc


def _queued(gc: GarbageCollector) -> list[Any]:
    return [list(gc.attempt_to_delete._queued), list(gc.attempt_to_orphan._queued)]


@pytest.mark.parametrize("old_refs,new_refs,deleting", CHANGES)
@pytest.mark.parametrize("present,foreground,synced", STATES)
def test_examining_with_the_graphs_references_queues_what_reading_them_again_queues(
    old_refs: list[JSON] | None,
    new_refs: list[JSON] | None,
    present: set[str],
    foreground: set[str],
    synced: bool,
    deleting: bool,
) -> None:
    extra = (
        {"deletionTimestamp": "2030-01-01T00:00:00Z", "finalizers": ["foregroundDeletion"]}
        if deleting
        else {}
    )
    old, new = pod(old_refs), pod(new_refs, **extra)
    fast, generic = _collector(present, foreground, synced), _collector(present, foreground, synced)
    for gc in (fast, generic):
        gc.graph.add("pods", old)
    refs = fast.graph.update_refs("pods", old, new)
    changed = generic.graph.update("pods", old, new)
    assert (refs is not None) == changed
    assert fast.graph._dependents == generic.graph._dependents
    if refs is not None:
        assert refs == (followed_refs(old), followed_refs(new))
    fast._examine("pods", old, new, refs_changed=refs is not None, refs=refs)
    generic._examine("pods", old, new, refs_changed=changed)
    assert _queued(fast) == _queued(generic)
    assert fast.foreground == generic.foreground


def test_an_adoption_links_the_pod_under_its_new_owner() -> None:
    graph = DependencyGraph()
    old, new = pod(None), pod([ref("a", controller=True)])
    graph.add("pods", old)
    assert graph.update_refs("pods", old, new) == ([], [ref("a", controller=True)])
    assert graph.dependents("a-uid") == [("p-uid", ("pods", "default", "p"))]
    assert graph.update_refs("pods", new, new) is None


def test_a_dependent_letting_go_of_an_owner_in_the_foreground_queues_the_owner() -> None:
    gc = _collector({"a-uid"}, {"a-uid"}, True)
    old, new = pod([ref("a")]), pod(None)
    gc.graph.add("pods", old)
    refs = gc.graph.update_refs("pods", old, new)
    gc._examine("pods", old, new, refs_changed=True, refs=refs)
    assert ("replicasets.apps", "default", "a", "a-uid") in gc.attempt_to_delete._queued


# batches of updates (an informer's batch): the one handler does what the general steps of each do
LISTS = [None, [], [ref("a", controller=True)], [ref("b", controller=True)], [ref("cm", kind="ConfigMap")]]
SHARED_LISTS = [lst if lst is None else list(lst) for lst in LISTS]  # each the very object, reused


def _updates(pairs: list[tuple[JSON, JSON]]) -> Changes:
    """An informer's batch of these updates."""
    return Changes([("MODIFIED", ("default", new["metadata"]["name"]), old, new) for old, new in pairs])


def _group_pod(index: int, old_list: int, new_list: int, deleting: bool) -> tuple[JSON, JSON]:
    name = f"p{index}"
    old = pod(SHARED_LISTS[old_list], name=name, uid=f"{name}-uid")
    extra = {"deletionTimestamp": "2026-01-01T00:00:00Z"} if deleting else {}
    new = pod(SHARED_LISTS[new_list], name=name, uid=f"{name}-uid", **extra)
    return old, new


@settings(max_examples=150, deadline=None)
@given(
    group=st.lists(
        st.tuples(st.integers(0, len(LISTS) - 1), st.integers(0, len(LISTS) - 1), st.booleans()),
        max_size=12,
    ),
    state=st.sampled_from(STATES),
)
def test_a_group_of_updates_does_what_updating_each_in_turn_does(
    group: list[tuple[int, int, bool]], state: tuple[set[str], set[str], bool]
) -> None:
    present, foreground, synced = state
    pairs = [
        _group_pod(i, old_list, new_list, deleting) for i, (old_list, new_list, deleting) in enumerate(group)
    ]
    one_by_one, grouped = _collector(present, foreground, synced), _collector(present, foreground, synced)
    for gc in (one_by_one, grouped):  # the old objects' edges, as their adds left them
        for old, _ in pairs:
            gc.graph.add("pods", old)
    for old, new in pairs:  # the general steps of an update, one pair after another
        refs = one_by_one.graph.update_refs("pods", old, new)
        one_by_one._examine("pods", old, new, refs_changed=refs is not None, refs=refs)
    grouped._handler("pods")(_updates(pairs))
    assert grouped.graph._dependents == one_by_one.graph._dependents
    assert grouped.graph.present == one_by_one.graph.present
    assert _queued(grouped) == _queued(one_by_one)


@settings(max_examples=100, deadline=None)
@given(
    change=st.tuples(st.integers(0, len(LISTS) - 1), st.integers(0, len(LISTS) - 1), st.booleans()),
    state=st.sampled_from(STATES),
)
def test_the_update_handler_does_what_the_general_steps_do(
    change: tuple[int, int, bool], state: tuple[set[str], set[str], bool]
) -> None:
    present, foreground, synced = state
    old, new = _group_pod(0, *change)
    handled, general = _collector(present, foreground, synced), _collector(present, foreground, synced)
    for gc in (handled, general):
        gc.graph.add("pods", old)
    handled._handler("pods")(_updates([(old, new)]))
    refs = general.graph.update_refs("pods", old, new)
    general._examine("pods", old, new, refs_changed=refs is not None, refs=refs)
    assert handled.graph._dependents == general.graph._dependents
    assert _queued(handled) == _queued(general)
