"""The identity memos of the pod handlers adoptions run through change nothing:
`OwnerSelectorIndex.matching_keys` answers what `matching` works out afresh after any history of
owner writes, however often the very same labels object is asked about, and the garbage
collector's graph follows the same references, with the same edges, as `followed_refs` of each
object finds when many pods share one ownerReferences list."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import make_env, replicaset
from kubetaint.controllers.garbagecollector.graph import DependencyGraph, followed_refs
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.owners import OwnerSelectorIndex
from kubetaint.store.informer import Informer

JSON = dict[str, Any]
NAMESPACES = ["default", "team"]
#: one object per label set, asked again and again (what one template's pods share)
LABELS: list[dict[str, str]] = [{}, {"app": "a"}, {"app": "b"}, {"app": "a", "tier": "x"}]
SELECTORS: list[JSON | None] = [
    {"matchLabels": {"app": "a"}},
    {"matchLabels": {"app": "b"}},
    {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
    {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]},
    {},
    None,
]

steps = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(["create", "update", "status", "delete"]),
            st.integers(0, 3),
            st.sampled_from(NAMESPACES),
            st.integers(0, len(SELECTORS) - 1),
        ),
        st.tuples(st.just("ask"), st.integers(0, len(LABELS) - 1), st.sampled_from(NAMESPACES), st.just(0)),
    ),
    max_size=30,
)


def _write_owner(store: Any, informer: Informer, op: str, i: int, namespace: str, selector: int) -> None:
    name = f"rs{i}"
    existing = informer.get(namespace, name)
    if op == "delete":
        if existing is not None:
            store.delete("replicasets.apps", namespace, name)
        return
    if existing is None:
        body = replicaset(name, 1)
        body["metadata"]["namespace"] = namespace
        body["spec"]["selector"] = copy.deepcopy(SELECTORS[selector])
        store.create("replicasets.apps", body)
    elif op == "status":
        store.update("replicasets.apps", {**existing, "status": {"replicas": i}})
    else:
        spec = {**existing["spec"], "selector": copy.deepcopy(SELECTORS[selector])}
        store.update("replicasets.apps", {**existing, "spec": spec})


def _fresh_keys(owners: OwnerSelectorIndex, namespace: str, labels: dict[str, str]) -> list[tuple[str, str]]:
    return [podutil.key_of(o) for o in owners.matching_uncached(namespace, labels)]


@settings(max_examples=80, deadline=None)
@given(history=steps)
def test_matching_keys_of_the_same_labels_object_equal_a_fresh_match_after_any_owner_history(
    history: list[tuple[str, int, str, int]],
) -> None:
    _, store, _ = make_env()
    informer = Informer(store, "replicasets.apps")
    owners = OwnerSelectorIndex(informer)
    informer.start()
    for op, i, namespace, selector in history:
        if op == "ask":
            labels = LABELS[i]
            assert owners.matching_keys(namespace, labels) == _fresh_keys(owners, namespace, labels)
            assert owners.matching_keys(namespace, labels) == _fresh_keys(owners, namespace, labels)
        else:
            _write_owner(store, informer, op, i, namespace, selector)
        for ns in NAMESPACES:
            for labels in LABELS:
                assert owners.matching_keys(ns, labels) == _fresh_keys(owners, ns, labels)


def test_an_equal_labels_object_in_another_namespace_is_not_taken_for_the_last_one() -> None:
    _, store, _ = make_env()
    informer = Informer(store, "replicasets.apps")
    owners = OwnerSelectorIndex(informer)
    informer.start()
    store.create("replicasets.apps", replicaset("rs", 1, {"app": "a"}))
    labels = {"app": "a"}
    assert owners.matching_keys("default", labels) == [("default", "rs")]
    assert owners.matching_keys("team", labels) == []
    assert owners.matching_keys("default", labels) == [("default", "rs")]


def test_a_deleted_owner_leaves_the_remembered_keys() -> None:
    _, store, _ = make_env()
    informer = Informer(store, "replicasets.apps")
    owners = OwnerSelectorIndex(informer)
    informer.start()
    store.create("replicasets.apps", replicaset("rs", 1, {"app": "a"}))
    labels = {"app": "a"}
    assert owners.matching_keys("default", labels) == [("default", "rs")]
    store.delete("replicasets.apps", "default", "rs")
    assert owners.matching_keys("default", labels) == []


# the garbage collector's graph -----------------------------------------------------------------

REFS: list[list[JSON]] = [
    [],
    [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "a", "uid": "ua", "controller": True}],
    [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "b", "uid": "ub", "controller": True}],
    [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "uc"},
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d", "uid": "ud", "controller": True},
    ],
    [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "e"}],
]


def _pod(name: str, refs: int | None) -> JSON:
    meta: JSON = {"name": name, "namespace": "default", "uid": f"p-{name}"}
    if refs is not None:
        meta["ownerReferences"] = REFS[refs]  # shared: the very same list for every pod
    return {"metadata": meta}


def _edges(graph: DependencyGraph) -> dict[str, list[tuple[str, Any]]]:
    return {owner: sorted(graph.dependents(owner)) for owner in ("ua", "ub", "uc", "ud")}


@settings(max_examples=100, deadline=None)
@given(changes=st.lists(st.tuples(st.integers(0, 3), st.none() | st.integers(0, len(REFS) - 1)), max_size=30))
def test_update_refs_with_shared_reference_lists_follows_what_followed_refs_finds(
    changes: list[tuple[int, int | None]],
) -> None:
    graph, pods = DependencyGraph(), {}
    expected: dict[str, set[str]] = {}
    for i in range(4):
        pods[i] = _pod(f"p{i}", None)
        graph.add("pods", pods[i])
    for i, refs in changes:
        old, new = pods[i], _pod(f"p{i}", refs)
        result = graph.update_refs("pods", old, new)
        old_refs = old["metadata"].get("ownerReferences")
        new_refs = new["metadata"].get("ownerReferences")
        if old_refs is new_refs or old_refs == new_refs:
            assert result is None
        else:
            assert result == (followed_refs(old), followed_refs(new))
        pods[i] = new
    for i, pod in pods.items():
        for ref in followed_refs(pod):
            expected.setdefault(str(ref["uid"]), set()).add(f"p-p{i}")
    for owner, dependents in _edges(graph).items():
        assert {uid for uid, _ in dependents} == expected.get(owner, set())
