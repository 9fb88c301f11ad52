"""A started informer replays its cache to a late handler as one batch of ADDED (each object with
its cache key): the replica set / daemon set owner index, the pod garbage collector, the garbage
collector, taint eviction and disruption must then build exactly what one batch per cached object
builds (indexes, graph, queued work, on_change calls), whatever the pods look like."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import owner_index_state
from kubetaint.clock import VirtualClock
from kubetaint.controllers.disruption.controller import DisruptionController
from kubetaint.controllers.garbagecollector.controller import GarbageCollector
from kubetaint.controllers.podgc.controller import PodGCController
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.controllers.tainteviction.controller import TaintEvictionController
from kubetaint.store.informer import Changes, ChangesHandler, Informer
from kubetaint.store.interface import JSON, Store
from kubetaint.store.memory import MemoryStore


class GenericInformer(Informer):
    """The reference: every batch is told one change at a time (a batch of one each)."""

    def add_handlers(self, handler: ChangesHandler, *, replay: bool = True) -> None:
        def one_by_one(changes: Changes) -> None:
            for change in changes:
                handler(Changes([change]))

        super().add_handlers(one_by_one, replay=replay)


class RecordingDisruption(DisruptionController):
    """Records the pods whose budgets it looks up (in order)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.looked_up: list[JSON] = []
        super().__init__(*args, **kwargs)

    def _enqueue_for(self, pod: JSON) -> None:
        self.looked_up.append(pod)
        super()._enqueue_for(pod)


def pod(
    name: str,
    namespace: str = "default",
    *,
    node: str | None = None,
    owner: str | None = None,
    labels: dict[str, str] | None = None,
    phase: str | None = None,
    deleting: bool = False,
) -> JSON:
    meta: JSON = {"name": name, "namespace": namespace}
    if labels is not None:
        meta["labels"] = labels
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": owner,
                "uid": f"{owner}-uid",
                "controller": True,
            }
        ]
    if deleting:
        meta["deletionTimestamp"] = "2030-01-01T00:00:00Z"
        meta["finalizers"] = ["example.com/hold"]
    obj: JSON = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": []}}
    if node is not None:
        obj["spec"]["nodeName"] = node
    if phase is not None:
        obj["status"] = {"phase": phase}
    return obj


#: A budget for the pods labelled app=x in default (the disruption controller queues it for them).
BUDGET: JSON = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "budget", "namespace": "default"},
    "spec": {"selector": {"matchLabels": {"app": "x"}}, "minAvailable": 1},
}


def _informers(pods: list[JSON]) -> tuple[Store, Informer, Informer]:
    """A store holding `pods` and two started pod informers over it: the fast one and the generic one."""
    store = MemoryStore(VirtualClock())
    store.create("poddisruptionbudgets.policy", BUDGET)
    for obj in pods:
        store.create("pods", obj)
    fast, generic = Informer(store, "pods"), GenericInformer(store, "pods")
    fast.start()
    generic.start()
    return store, fast, generic


def _podgc_state(gc: PodGCController) -> tuple[Any, ...]:
    return (gc._terminated, gc._terminating, gc._by_node, list(gc._node_of.items()))


def _gc_state(gc: GarbageCollector) -> tuple[Any, ...]:
    return (
        list(gc.graph.present.items()),
        gc.graph._dependents,
        list(gc.attempt_to_delete._queued),
        list(gc.attempt_to_orphan._queued),
        gc.foreground,
    )


def _recorder(calls: list[Any]) -> Any:
    return lambda old, new: calls.append((old, new))


def _compare(pods: list[JSON]) -> None:
    store, fast, generic = _informers(pods)
    for orphans in (True, False):
        states = []
        for informer in (fast, generic):
            calls: list[Any] = []
            index = PodOwnerIndex(informer, _recorder(calls), orphans=orphans)
            states.append((owner_index_state(index), calls))
        assert states[0] == states[1]
    clock = VirtualClock()
    podgcs = [
        PodGCController(store, clock, pod_informer=i, node_informer=Informer(store, "nodes"))
        for i in (fast, generic)
    ]
    assert _podgc_state(podgcs[0]) == _podgc_state(podgcs[1])
    gcs = [GarbageCollector(store, clock, {"pods": i}) for i in (fast, generic)]  # type: ignore[arg-type]
    assert _gc_state(gcs[0]) == _gc_state(gcs[1])
    evictions = []
    for informer in (fast, generic):
        eviction = TaintEvictionController(
            store, clock, pod_informer=informer, node_informer=Informer(store, "nodes")
        )
        eviction.start()
        evictions.append((list(eviction._pod_updates), eviction._worker is not None))
    assert evictions[0] == evictions[1]
    budgets = Informer(store, "poddisruptionbudgets.policy")
    budgets.start()
    disruptions = []
    for informer in (fast, generic):
        disruption = RecordingDisruption(store, clock, pod_informer=informer, pdb_informer=budgets)
        disruptions.append((disruption._by_namespace, disruption.looked_up, list(disruption.queue._queued)))
    assert disruptions[0] == disruptions[1]


TABLE = [
    pytest.param([], id="an empty cache"),
    pytest.param([pod("a", node="n1"), pod("b", node="n2"), pod("c")], id="bound and pending pods"),
    pytest.param(
        [pod("a", owner="rs", labels={"app": "x"}), pod("b", labels={"app": "x"}), pod("c", labels={})],
        id="owned pods and orphans with and without labels",
    ),
    pytest.param(
        [
            pod("a", node="n", phase="Succeeded"),
            pod("b", node="n", phase="Failed"),
            pod("c", phase="Running"),
        ],
        id="terminated and running pods",
    ),
    pytest.param([pod("a", node="n", deleting=True, owner="rs")], id="a pod being deleted, owned"),
    pytest.param(
        [pod("a", "ns-1", owner="rs"), pod("a", "ns-2", owner="rs"), pod("b", "ns-1")],
        id="one name in two namespaces",
    ),
]


@pytest.mark.parametrize("pods", TABLE)
def test_a_batched_replay_builds_what_one_add_per_object_builds(pods: list[JSON]) -> None:
    _compare(pods)


PODS = st.lists(
    st.builds(
        pod,
        st.sampled_from(["a", "b", "c", "d"]),
        st.sampled_from(["default", "other"]),
        node=st.one_of(st.none(), st.sampled_from(["n1", "n2"])),
        owner=st.one_of(st.none(), st.sampled_from(["rs-1", "rs-2"])),
        labels=st.one_of(
            st.none(), st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["x", "y"]))
        ),
        phase=st.one_of(st.none(), st.sampled_from(["Running", "Succeeded", "Failed"])),
        deleting=st.booleans(),
    ),
    max_size=12,
    unique_by=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]),
)


@settings(max_examples=60, deadline=None)
@given(PODS)
def test_a_batched_replay_equals_single_adds_for_any_pods(pods: list[JSON]) -> None:
    _compare(pods)


def test_the_replay_hands_every_cached_object_with_its_key_in_cache_order() -> None:
    _, informer, _ = _informers([pod("b"), pod("a", "zz"), pod("a")])
    batches: list[Changes] = []
    informer.add_handlers(batches.append)
    assert len(batches) == 1
    assert batches[0].only == "ADDED"
    assert [key for _, key, _, _ in batches[0]] == [("default", "a"), ("default", "b"), ("zz", "a")]
    assert all(obj is informer.get(*key) and old is None for _, key, old, obj in batches[0])


def test_a_handler_before_start_gets_the_listing_once_and_replay_false_gets_nothing() -> None:
    store = MemoryStore(VirtualClock())
    store.create("pods", pod("a"))
    informer = Informer(store, "pods")
    early: list[Changes] = []
    informer.add_handlers(early.append)
    informer.start()
    assert [[key for _, key, _, _ in batch] for batch in early] == [[("default", "a")]]
    late: list[Changes] = []
    informer.add_handlers(late.append, replay=False)
    assert late == []
