"""The ReplicaSet controller is told of a replay of its pod index at once (`PodOwnerIndex`'s
`on_adds`, `ReplicaSetController._pods_added`): pods sharing their owner reference list share its
controller reference, orphans with equal labels share the owners matching them. It must queue
the same owners in the same order and mark the same views as `_pod_changed(None, pod)` of each
pod in turn (and the DaemonSet controller's `_pods_added`, which shares the controller
reference of pods sharing their reference list and the DaemonSets matching consecutive orphans
with equal labels, likewise: the same DaemonSets queued, the same orphans wanted); a PodOwnerIndex must index the same and tell the same changes with `on_adds` as
without; the pod garbage collector's batch of adds must index what `_add` of each pod indexes, also
over pods indexed before; the garbage collector's graph must add a replay as `add_keyed` of each
object and hand over the same objects to examine, each right after adding it."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.test_informer_replay_batch import pod
from controllers.workload_builders import daemonset, owner_index_state, replicaset
from kubetaint.clock import VirtualClock
from kubetaint.controllers.daemonset.bynode import PodsByNode
from kubetaint.controllers.daemonset.controller import DaemonSetController
from kubetaint.controllers.garbagecollector.graph import DependencyGraph
from kubetaint.controllers.podgc.controller import PodGCController
from kubetaint.controllers.replicaset.controller import ReplicaSetController
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.controllers.replicaset.podutil import key_of
from kubetaint.store.informer import Changes, Informer
from kubetaint.store.interface import JSON, object_key
from kubetaint.store.memory import MemoryStore

Key = tuple[str, str]

#: ReplicaSets selecting app=x (two of them), app=y, and one in another namespace.
OWNERS = [
    replicaset("rs-x", 1, {"app": "x"}),
    replicaset("rs-x2", 1, {"app": "x"}),
    replicaset("rs-y", 1, {"app": "y"}),
    {**replicaset("rs-other", 1, {"app": "x"}), "metadata": {"name": "rs-other", "namespace": "other"}},
]


def _controller(store: MemoryStore, pods: Informer, owners: Informer) -> ReplicaSetController:
    return ReplicaSetController(
        store, VirtualClock(), random.Random(1), pod_informer=pods, rs_informer=owners
    )


def _told(controller: ReplicaSetController, tell: Any) -> tuple[list[Key], list[tuple[str, Key]]]:
    """The owners `tell()` queues and the views it marks, in order."""
    added: list[Key] = []
    marked: list[tuple[str, Key]] = []
    controller.queue.add = added.append  # type: ignore[method-assign]
    controller.views.mark = lambda uid, key: marked.append((uid, key))  # type: ignore[method-assign]
    tell()
    return added, marked


def _compare(pods: list[JSON], shared_labels: bool) -> None:
    store = MemoryStore(VirtualClock())
    for owner in OWNERS:
        store.create("replicasets.apps", owner)
    shared: dict[Any, JSON] = {}
    for obj in pods:
        store.create("pods", obj)
    owners, informer = Informer(store, "replicasets.apps"), Informer(store, "pods")
    owners.start()
    informer.start()
    items = list(informer.keyed_items())
    if shared_labels:  # one template's pods: the very same labels object
        for _, obj in items:
            labels = obj["metadata"].get("labels")
            if labels is not None:
                obj["metadata"]["labels"] = shared.setdefault(repr(labels), labels)
    batched, one_by_one = _controller(store, informer, owners), _controller(store, informer, owners)
    expected = _told(one_by_one, lambda: [one_by_one._pod_changed(None, p) for _, p in items])
    assert _told(batched, lambda: batched._pods_added(items)) == expected


TABLE = [
    pytest.param([], id="no pods"),
    pytest.param(
        [pod(f"p{i}", labels={"app": "x"}) for i in range(4)], id="orphans of one template: two owners each"
    ),
    pytest.param(
        [pod("a", labels={"app": "x"}), pod("b", labels={"app": "y"}), pod("c", labels={"app": "x"})],
        id="orphans with labels changing between pods",
    ),
    pytest.param(
        [
            pod("a", labels={"app": "x"}),
            pod("a", "other", labels={"app": "x"}),
            pod("b", labels={"app": "x"}),
        ],
        id="equal labels in another namespace match other owners",
    ),
    pytest.param(
        [pod("a", owner="rs-x", labels={"app": "x"}), pod("b", labels={"app": "x"}), pod("c", owner="rs-y")],
        id="owned pods between orphans",
    ),
    pytest.param(
        [pod("a"), pod("b", labels={}), pod("c", labels={"tier": "x"})], id="orphans nobody selects"
    ),
]


@pytest.mark.parametrize("pods", TABLE)
@pytest.mark.parametrize("shared_labels", [False, True], ids=["own labels", "shared labels"])
def test_a_told_replay_queues_and_marks_what_each_change_does(pods: list[JSON], shared_labels: bool) -> None:
    _compare(pods, shared_labels)


def test_a_pod_with_odd_metadata_takes_the_generic_way() -> None:
    store = MemoryStore(VirtualClock())
    owners, informer = Informer(store, "replicasets.apps"), Informer(store, "pods")
    controller = _controller(store, informer, owners)
    odd: JSON = {"apiVersion": "v1", "kind": "Pod", "metadata": None, "spec": {}}
    seen: list[Any] = []
    controller._pod_changed = lambda old, new: seen.append((old, new))  # type: ignore[method-assign]
    controller._pods_added([(("", ""), odd)])
    assert seen == [(None, odd)]


PODS = st.lists(
    st.builds(
        pod,
        st.sampled_from(["a", "b", "c", "d", "e"]),
        st.sampled_from(["default", "other"]),
        node=st.one_of(st.none(), st.sampled_from(["n1", "n2"])),
        owner=st.one_of(st.none(), st.sampled_from(["rs-x", "rs-y", "gone"])),
        labels=st.one_of(
            st.none(), st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["x", "y"]))
        ),
        phase=st.one_of(st.none(), st.sampled_from(["Running", "Succeeded"])),
        deleting=st.booleans(),
    ),
    max_size=10,
    unique_by=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]),
)


@settings(max_examples=60, deadline=None)
@given(PODS, st.booleans())
def test_any_told_replay_queues_and_marks_what_each_change_does(pods: list[JSON], shared: bool) -> None:
    _compare(pods, shared)


@settings(max_examples=40, deadline=None)
@given(PODS)
def test_an_index_telling_a_replay_at_once_indexes_and_tells_the_same(pods: list[JSON]) -> None:
    store = MemoryStore(VirtualClock())
    for obj in pods:
        store.create("pods", obj)
    informer = Informer(store, "pods")
    informer.start()
    states = []
    for batched in (True, False):
        calls: list[Any] = []
        index = PodOwnerIndex(
            informer,
            lambda old, new, calls=calls: calls.append((old, new)),
            on_adds=(lambda items, calls=calls: calls.extend((None, p) for _, p in items))
            if batched
            else None,
        )
        states.append((owner_index_state(index), calls))
    assert states[0] == states[1]


@settings(max_examples=40, deadline=None)
@given(PODS, PODS)
def test_podgc_replays_over_indexed_pods_as_adds_do(first: list[JSON], second: list[JSON]) -> None:
    """A batch of adds into an empty index (the start) and one over pods indexed before (the
    same keys or others) index what `_add` of each pod does."""
    store = MemoryStore(VirtualClock())
    clock = VirtualClock()
    gcs = [
        PodGCController(
            store, clock, pod_informer=Informer(store, "pods"), node_informer=Informer(store, "nodes")
        )
        for _ in range(2)
    ]
    for batch in (first, second):
        items = [(object_key(p), p) for p in batch]
        gcs[0]._pods_changed(Changes.added(items))
        for _, p in items:
            gcs[1]._add(p)
    states = [(gc._terminated, gc._terminating, gc._by_node, list(gc._node_of.items())) for gc in gcs]
    assert states[0] == states[1]


def _daemon_owned(obj: JSON, kind: str) -> JSON:
    """`obj` with its owner references naming `kind` (a DaemonSet's pods, or another's)."""
    refs = obj["metadata"].get("ownerReferences")
    if refs:
        obj["metadata"]["ownerReferences"] = [{**ref, "kind": kind} for ref in refs]
    return obj


#: DaemonSets selecting orphans: app=x in two namespaces, app=y in one.
DAEMON_OWNERS = [
    {**daemonset("ds-x", {"app": "x"}), "metadata": {"name": "ds-x", "namespace": "default"}},
    {**daemonset("ds-x-other", {"app": "x"}), "metadata": {"name": "ds-x-other", "namespace": "other"}},
    {**daemonset("ds-y", {"app": "y"}), "metadata": {"name": "ds-y", "namespace": "default"}},
]


def _daemonset_told(pods: list[JSON], shared_refs: bool) -> None:
    store = MemoryStore(VirtualClock())
    for owner in DAEMON_OWNERS:
        store.create("daemonsets.apps", copy.deepcopy(owner))
    for obj in pods:
        store.create("pods", obj)
    informer = Informer(store, "pods")
    informer.start()
    daemonsets = Informer(store, "daemonsets.apps")
    daemonsets.start()
    items = list(informer.keyed_items())
    if shared_refs:  # one owner's adopted pods: the very same reference list
        lists: dict[str, Any] = {}
        for _, obj in items:
            refs = obj["metadata"].get("ownerReferences")
            if refs is not None:
                obj["metadata"]["ownerReferences"] = lists.setdefault(repr(refs), refs)
    told = []
    for batched in (True, False):
        controller = DaemonSetController(
            store,
            VirtualClock(),
            random.Random(1),
            pod_informer=informer,
            node_informer=Informer(store, "nodes"),
            ds_informer=daemonsets,
        )
        for uid in ("rs-x-uid", "ds-b-uid"):  # owners whose pods by node are kept
            controller._by_node[uid] = PodsByNode(0, [], key_of)
        added: list[Key] = []
        controller.queue.add = added.append  # type: ignore[method-assign]
        added.clear()  # (the DaemonSets' own adds)
        if batched:
            controller._pods_added(items)
        else:
            for _, obj in items:
                controller._pod_changed(None, obj)
        dirty = {uid: grouped.dirty for uid, grouped in controller._by_node.items()}
        told.append((added, dirty, controller._wanted, controller._orphans))
    assert told[0] == told[1]


DAEMON_TABLE = [
    pytest.param([], id="no pods"),
    pytest.param([pod("a"), pod("b", node="n1"), pod("c")], id="bare pods: nothing queued or marked"),
    pytest.param(
        [
            _daemon_owned(pod("a", owner="ds-a", node="n1"), "DaemonSet"),
            _daemon_owned(pod("b", owner="ds-b", node="n2"), "DaemonSet"),
            pod("c"),
            _daemon_owned(pod("d", owner="ds-a", node="n2"), "DaemonSet"),
        ],
        id="daemon pods of two owners between bare ones",
    ),
    pytest.param(
        [pod("a", owner="rs-x"), _daemon_owned(pod("b", owner="ds-b"), "DaemonSet"), pod("c", owner="rs-x")],
        id="a ReplicaSet's pods are marked, not queued",
    ),
    pytest.param(
        [
            pod("a", labels={"app": "x"}),
            pod("b", labels={"app": "x"}),
            pod("c", "other", labels={"app": "x"}),
            pod("d", "other", labels={"app": "x"}),
            pod("e", "other", labels={"app": "y"}),
            pod("f", labels={"app": "y"}),
            pod("g", labels={"app": 1}),  # type: ignore[dict-item]  # (equal to True, not to "1")
            pod("h", labels={"app": True}),  # type: ignore[dict-item]
            pod("i", labels={"app": "y"}),
            pod("j"),
            pod("k", labels={"app": "x"}),  # (the last of its namespace, listed before other/c)
        ],
        id="orphans the DaemonSets select, of two namespaces, with labels equal or not",
    ),
]


@pytest.mark.parametrize("pods", DAEMON_TABLE)
@pytest.mark.parametrize("shared_refs", [False, True], ids=["own references", "shared references"])
def test_a_daemonset_told_a_replay_queues_and_marks_what_each_change_does(
    pods: list[JSON], shared_refs: bool
) -> None:
    _daemonset_told(copy.deepcopy(pods), shared_refs)


def test_a_daemonset_pod_with_odd_metadata_takes_the_generic_way() -> None:
    store = MemoryStore(VirtualClock())
    controller = DaemonSetController(store, VirtualClock(), random.Random(1))
    odd: JSON = {"apiVersion": "v1", "kind": "Pod", "metadata": None, "spec": {}}
    seen: list[Any] = []
    controller._pod_changed = lambda old, new: seen.append((old, new))  # type: ignore[method-assign]
    controller._pods_added([(("", ""), odd)])
    assert seen == [(None, odd)]


@settings(max_examples=40, deadline=None)
@given(PODS, st.booleans(), st.lists(st.booleans(), min_size=10, max_size=10))
def test_any_daemonset_told_replay_queues_and_marks_what_each_change_does(
    pods: list[JSON], shared: bool, daemon: list[bool]
) -> None:
    pods = [_daemon_owned(p, "DaemonSet") if daemon[i] else p for i, p in enumerate(pods)]
    _daemonset_told(pods, shared)


def _gc_pod(name: str, refs: Any, deleting: bool) -> JSON:
    meta: JSON = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if refs is not None:
        meta["ownerReferences"] = refs
    if deleting:
        meta["deletionTimestamp"] = "2030-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


_RS_REF = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}
_UNFOLLOWED = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "w-uid"}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "d"]),
            st.sampled_from([None, [], [_RS_REF], [_UNFOLLOWED], [{**_RS_REF, "uid": ""}]]),
            st.booleans(),
        ),
        max_size=8,
    )
)
def test_the_graph_adds_a_replay_as_add_keyed_of_each(specs: list[tuple[str, Any, bool]]) -> None:
    """add_each_keyed yields, right after adding it, each object add_keyed finds followed
    references for or that is being deleted (what the replay examines), and builds the same graph."""
    pods = [_gc_pod(*spec) for spec in specs]
    items = [(object_key(p), p) for p in pods]
    each, one_by_one = DependencyGraph(), DependencyGraph()
    yielded = []
    for obj, refs in each.add_each_keyed("pods", items):
        yielded.append((obj, refs, dict(each.present)))
    expected = []
    for key, obj in items:
        refs = one_by_one.add_keyed("pods", key, obj)
        if refs or obj["metadata"].get("deletionTimestamp"):
            expected.append((obj, refs, dict(one_by_one.present)))
    assert yielded == expected
    assert (each.present, each._dependents) == (one_by_one.present, one_by_one._dependents)
