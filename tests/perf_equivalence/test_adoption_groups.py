"""A group of pod updates (an adoption: one `Registry.commit` of updates, one batch of the store)
told to the ReplicaSet and DaemonSet controllers' owner indexes at once (`on_update_many`, with
the controllers' `_pods_changed`) leaves exactly what telling them one update at a time leaves:
the same index state and versions, the same queue keys in the same order, the same view and
pods-by-node marks. Histories mix adoptions sharing one reference list, adoptions each with its
own, releases, label changes, status-only changes and references without a controller."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import daemonset, make_env, owner_index_state, pod, replicaset
from kubetaint.controllers.daemonset import DaemonSetController
from kubetaint.controllers.daemonset.bynode import PodsByNode
from kubetaint.controllers.replicaset import ReplicaSetController, podutil
from kubetaint.store.informer import Informer
from store.commits import update_many

JSON = dict[str, Any]
LABELS = [{"app": "a"}, {"app": "b"}, {}, {"app": "a", "tier": "x"}]
NAMESPACES = ["default", "team"]
#: what one write of the group does to its pod
CHANGES = ["adopt-shared", "adopt-own", "release", "relabel", "status", "other-owner", "no-controller"]


class Env:
    """A store with two ReplicaSets and a DaemonSet per namespace, both controllers on one pod
    informer, every owner's view and pods-by-node primed so that marks land."""

    def __init__(self) -> None:
        self.clock, self.store, rng = make_env()
        self.pods = Informer(self.store, "pods")
        self.rs = ReplicaSetController(self.store, self.clock, rng, pod_informer=self.pods)
        self.ds = DaemonSetController(self.store, self.clock, rng, pod_informer=self.pods)
        self.owners: dict[str, list[JSON]] = {}
        for namespace in NAMESPACES:
            made = []
            for name, labels in (("rs-a", {"app": "a"}), ("rs-b", {"app": "b"})):
                body = replicaset(name, 0, labels)
                body["metadata"]["namespace"] = namespace
                made.append(self.store.create("replicasets.apps", body))
            ds = daemonset("ds")
            ds["metadata"]["namespace"] = namespace
            made.append(self.store.create("daemonsets.apps", ds))
            self.owners[namespace] = made
        self.rs.start()
        self.ds.start()
        self.pods.start()

    def prime(self) -> None:
        """Views and pods-by-node for every owner (as their syncs make them), queues emptied."""
        for made in self.owners.values():
            for owner in made:
                uid = owner["metadata"]["uid"]
                if owner["kind"] == "ReplicaSet":
                    selector = self.rs.owners.selectors.parsed(owner)
                    assert selector is not None
                    self.rs.views.view(uid, selector, owner["spec"]["template"]["metadata"]["labels"])
                self.ds._by_node[uid] = PodsByNode(
                    self.ds.index.version(uid), self.ds.index.pods_owned_by(uid), podutil.key_of
                )
        self.rs.queue._queued.clear()
        self.ds.queue._queued.clear()

    def ref(self, namespace: str, which: int) -> JSON:
        owner = self.owners[namespace][which]
        return podutil.controller_ref(owner, "apps/v1", owner["kind"])

    def state(self) -> tuple[Any, ...]:
        return (
            owner_index_state(self.rs.index),
            owner_index_state(self.ds.index),
            list(self.rs.queue._queued),
            list(self.ds.queue._queued),
            {uid: set(view.dirty) for uid, view in self.rs.views._views.items()},
            {uid: set(grouped.dirty) for uid, grouped in self.ds._by_node.items()},
        )


def _changed(env: Env, current: JSON, change: str, labels: int, shared: dict[str, list[JSON]]) -> JSON:
    """`current` with `change` applied (a shallow copy: the stored objects stay read-only)."""
    namespace = current["metadata"]["namespace"]
    meta = current["metadata"]
    if change == "status":
        return {**current, "status": {"phase": "Running", "podIP": "10.0.0.1"}}
    if change == "relabel":
        return {**current, "metadata": {**meta, "labels": dict(LABELS[labels])}}
    if change == "release":
        return {**current, "metadata": {k: v for k, v in meta.items() if k != "ownerReferences"}}
    if change == "adopt-shared":  # one list object for the group, as _adopt_orphans writes
        refs = shared.setdefault(namespace, [env.ref(namespace, 0)])
    elif change == "adopt-own":
        refs = [env.ref(namespace, 0)]
    elif change == "other-owner":
        refs = [env.ref(namespace, 2)]  # the DaemonSet
    else:
        refs = [{**env.ref(namespace, 1), "controller": False}]
    return {**current, "metadata": {**meta, "ownerReferences": refs}}


def _run(history: list[tuple[int, str, int, int]], group: list[tuple[int, str, int]], grouped: bool) -> Env:
    env = Env()
    for i, namespace, labels, owner in history:
        body = pod(f"p{i}", namespace=namespace, labels=LABELS[labels])
        if owner:
            body["metadata"]["ownerReferences"] = [env.ref(namespace, owner - 1)]
        if env.pods.get(namespace, f"p{i}") is None:
            env.store.create("pods", body)
    env.prime()
    shared: dict[str, list[JSON]] = {}
    objects: list[JSON] = []
    seen: set[tuple[str, str]] = set()
    for i, change, labels in group:
        for namespace in NAMESPACES:
            current = env.pods.get(namespace, f"p{i}")
            if current is None or (namespace, f"p{i}") in seen:
                continue
            seen.add((namespace, f"p{i}"))
            objects.append(_changed(env, current, change, labels, shared))
    if grouped:
        told: list[int] = []
        for index in (env.rs.index, env.ds.index):
            on_changes = index._on_changes
            assert on_changes is not None

            def record(pairs: list[tuple[JSON, JSON]], keys: list[Any], tell: Any = on_changes) -> None:
                told.append(len(pairs))
                assert keys == [podutil.key_of(new) for _, new in pairs]
                tell(pairs, keys)

            index._on_changes = record
        before = env.store.current_resource_version()
        stored, failure = update_many(env.store, "pods", objects)
        assert failure is None and len(stored) == len(objects)
        written = env.store.current_resource_version() - before  # (an unchanged pod is no write)
        # the commit is one batch (a change alone takes the per-object steps)
        assert told == ([written] * 2 if written > 1 else [])
    else:
        for obj in objects:
            env.store.update("pods", copy.copy(obj))
    return env


histories = st.lists(
    st.tuples(
        st.integers(0, 7),
        st.sampled_from(NAMESPACES),
        st.integers(0, len(LABELS) - 1),
        st.integers(0, 3),  # 0: an orphan, else owned by owner n - 1
    ),
    max_size=14,
)
groups = st.lists(
    st.tuples(st.integers(0, 7), st.sampled_from(CHANGES), st.integers(0, len(LABELS) - 1)),
    max_size=14,
)


@settings(max_examples=80, deadline=None)
@given(history=histories, group=groups)
def test_a_group_told_at_once_leaves_what_one_update_at_a_time_leaves(
    history: list[tuple[int, str, int, int]], group: list[tuple[int, str, int]]
) -> None:
    assert _run(history, group, grouped=True).state() == _run(history, group, grouped=False).state()


@pytest.mark.parametrize(
    ("change", "queued"),
    [
        pytest.param(
            "adopt-shared",
            [("default", "rs-a")],
            id="orphans adopted with one shared reference list queue their matching owner once",
        ),
        pytest.param(
            "no-controller",
            [("default", "rs-a")],
            id="references without a controller queue only the owners the labels match",
        ),
        pytest.param("status", [("default", "rs-a")], id="a status change of orphans queues their owners"),
    ],
)
def test_a_group_of_orphans_queues_what_each_update_queues(
    change: str, queued: list[tuple[str, str]]
) -> None:
    history = [(i, "default", 0, 0) for i in range(4)]
    group = [(i, change, 0) for i in range(4)]
    grouped, single = _run(history, group, grouped=True), _run(history, group, grouped=False)
    assert list(grouped.rs.queue._queued) == queued
    assert grouped.state() == single.state()


def test_an_adoption_group_moves_every_orphan_to_its_owner_in_one_step() -> None:
    env = _run([(i, "default", 0, 0) for i in range(3)], [(i, "adopt-shared", 0) for i in range(3)], True)
    uid = env.owners["default"][0]["metadata"]["uid"]
    assert sorted(env.rs.index.owned[uid]) == [("default", f"p{i}") for i in range(3)]
    assert "default" not in env.rs.index.orphans
    assert env.rs.views._views[uid].dirty == {("default", f"p{i}") for i in range(3)}
