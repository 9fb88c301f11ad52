"""The replay of a started pod informer into an empty PodOwnerIndex (with `on_adds`) or an empty
PodGC index takes an inlined loop: the indexes it builds and the callbacks it makes must be those
of indexing each replayed pod through the general path, whatever the pods (owned, orphans with or
without labels, terminal, being deleted, with or without a node)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import make_env, owner_index_state
from kubetaint.controllers.podgc.controller import PodGCController
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.store.informer import Informer

JSON = dict[str, Any]


class GeneralReplayIndex(PodOwnerIndex):
    """The reference: a replay through the general `_index` of each pod."""

    def _replay(self, items: list[tuple[tuple[str, str], JSON]]) -> None:
        for _, pod in items:
            self._index(pod)
        assert self._on_adds is not None
        self._on_adds(items)


class GeneralReplayPodGC(PodGCController):
    """The reference: a replay through `_record` of each pod."""

    def _replay(self, items: list[tuple[tuple[str, str], JSON]]) -> None:
        for key, pod in items:
            self._record(key, pod)


def pod(name: str, namespace: str, labels: Any, owner: Any, node: Any, phase: Any, deleting: bool) -> JSON:
    meta: JSON = {"name": name, "namespace": namespace}
    if labels is not None:
        meta["labels"] = labels
    if owner is not None:
        meta["ownerReferences"] = owner
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: JSON = {} if node is None else {"nodeName": node}
    body: JSON = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if phase is not None:
        body["status"] = {"phase": phase}
    return body


def ref(uid: str, controller: Any = True) -> JSON:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": uid, "uid": uid, "controller": controller}


PODS = st.lists(
    st.tuples(
        st.sampled_from(["d", "team"]),
        # (equal labels but for their order, or their values' types: 1 == True; their tags differ)
        st.sampled_from(
            [
                None,
                {},
                {"app": "x"},
                {"app": "y", "tier": "web"},
                {"tier": "web", "app": "y"},
                {"app": 1},
                {"app": True},
            ]
        ),
        st.sampled_from(
            [
                None,
                [],
                [ref("rs-1")],
                [ref("rs-2")],
                [ref("cm", controller=False)],
                [ref("cm", controller=False), ref("rs-1")],
                [{"kind": "ReplicaSet", "name": "x", "controller": True}],
            ]
        ),
        st.sampled_from([None, "", "n1", "n2"]),
        st.sampled_from([None, "Running", "Succeeded", "Failed"]),
        st.booleans(),
    ),
    max_size=14,
)


def started_informer(pods: list[tuple[Any, ...]]) -> Informer:
    _, store, _ = make_env()
    for i, (namespace, labels, owner, node, phase, deleting) in enumerate(pods):
        store.create("pods", pod(f"p{i}", namespace, labels, owner, node, phase, deleting))
    informer = Informer(store, "pods")
    informer.start()
    return informer


def owner_index(kind: type[PodOwnerIndex], informer: Informer, orphans: bool) -> tuple[Any, ...]:
    calls: list[Any] = []
    index = kind(
        informer,
        lambda old, new: calls.append(("change", old, new)),
        orphans=orphans,
        on_adds=lambda items: calls.append(("adds", list(items))),
    )
    return owner_index_state(index), calls


@settings(max_examples=120, deadline=None)
@given(PODS, st.booleans())
def test_a_fresh_owner_index_replay_is_the_general_one(pods: list[tuple[Any, ...]], orphans: bool) -> None:
    informer = started_informer(pods)
    assert owner_index(PodOwnerIndex, informer, orphans) == owner_index(GeneralReplayIndex, informer, orphans)


def podgc_state(gc: PodGCController) -> tuple[Any, ...]:
    return (
        set(gc._terminated),
        set(gc._terminating),
        dict(gc._node_of),
        {n: set(k) for n, k in gc._by_node.items()},
    )


@settings(max_examples=120, deadline=None)
@given(PODS)
def test_a_fresh_podgc_replay_is_the_general_one(pods: list[tuple[Any, ...]]) -> None:
    informer = started_informer(pods)
    store = informer._store
    fast = PodGCController(store, make_env()[0], pod_informer=informer)
    general = GeneralReplayPodGC(store, make_env()[0], pod_informer=informer)
    assert podgc_state(fast) == podgc_state(general)


@pytest.mark.parametrize(
    "orphans", [pytest.param(True, id="tracking orphans"), pytest.param(False, id="owned pods only")]
)
def test_a_replay_into_an_index_holding_pods_takes_the_general_path(orphans: bool) -> None:
    informer = started_informer([("d", {"app": "x"}, None, "n1", "Running", False)])
    index = PodOwnerIndex(informer, lambda old, new: None, orphans=orphans, on_adds=lambda items: None)
    before = owner_index_state(index)
    index._replay(list(informer.keyed_items()))  # the same pods again: nothing changes but versions
    assert owner_index_state(index, versions=False) == owner_index_state(
        GeneralReplayIndex(informer, lambda old, new: None, orphans=orphans, on_adds=lambda items: None),
        versions=False,
    )
    assert before[:5] == owner_index_state(index)[:5]
