"""The ReplicaSet controller's event memos change nothing: the owners `OwnerSelectorIndex.matching`
remembers per label set are those it works out afresh after any history of owner writes (in place
updates of selectors included), and a pod event keeping the very ownerReferences and labels
objects (a status write) is handled exactly as the full handling of its old and new pod."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import (
    daemon_pods_by_node_by_scan,
    daemonset,
    make_env,
    node,
    owner_selector_index,
    pod,
    replicaset,
    write_owner,
)
from kubetaint.controllers.daemonset.controller import DaemonSetController
from kubetaint.controllers.daemonset.placement import (
    PlacementMemo,
    node_should_run_daemon_pod,
)
from kubetaint.controllers.podgc.controller import PodGCController
from kubetaint.controllers.replicaset import ReplicaSetController, podutil
from kubetaint.controllers.replicaset.controller import _same_marks
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.controllers.replicaset.owners import OwnerSelectorIndex
from kubetaint.store.informer import Informer

JSON = dict[str, Any]
NAMESPACES = ["default", "team"]
LABELS = [{}, {"app": "a"}, {"app": "b"}, {"app": "a", "tier": "x"}, {"tier": "x", "app": "a"}]
SELECTORS: list[JSON | None] = [
    {"matchLabels": {"app": "a"}},
    {"matchLabels": {"app": "b"}},
    {"matchLabels": {"app": "a", "tier": "x"}},
    {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
    {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]},
    {"matchExpressions": [{"key": "app", "operator": "Bogus"}]},
    {},
    None,
]

owner_writes = st.lists(
    st.tuples(
        st.sampled_from(["create", "update", "status", "delete"]),
        st.integers(0, 3),
        st.sampled_from(NAMESPACES),
        st.integers(0, len(SELECTORS) - 1),
    ),
    max_size=25,
)


def _keys(owners: list[JSON]) -> list[tuple[str, str]]:
    return [podutil.key_of(o) for o in owners]


def _assert_memo_equals_fresh(owners: OwnerSelectorIndex) -> None:
    for namespace in NAMESPACES:
        for labels in LABELS:
            remembered = owners.matching(namespace, labels)
            assert _keys(remembered) == _keys(owners.matching_uncached(namespace, labels))
            # the objects are the informer's current ones, not those seen when remembered
            assert all(o is owners.informer.get(*podutil.key_of(o)) for o in remembered)


@settings(max_examples=80, deadline=None)
@given(history=owner_writes)
def test_remembered_owners_equal_those_worked_out_afresh_after_any_owner_history(
    history: list[tuple[str, int, str, int]],
) -> None:
    store, informer, owners = owner_selector_index()
    for op, i, namespace, selector in history:
        _assert_memo_equals_fresh(owners)  # remembered now, checked after the write
        write_owner(store, informer, op, i, namespace, SELECTORS[selector])
    _assert_memo_equals_fresh(owners)


def test_the_memo_starts_afresh_when_full() -> None:
    store, _, owners = owner_selector_index()
    owners._matched.limit = 2
    store.create("replicasets.apps", replicaset("rs", 1, {"app": "a"}))
    for labels in LABELS * 2:
        assert _keys(owners.matching("default", labels)) == _keys(owners.matching_uncached("default", labels))
        assert len(owners._matched) <= 2


def test_an_unhashable_label_value_is_matched_without_the_memo() -> None:
    store, _, owners = owner_selector_index()
    store.create("replicasets.apps", replicaset("rs", 1, {"app": "a"}))
    labels: Any = {"app": "a", "odd": ["x"]}
    assert _keys(owners.matching("default", labels)) == [("default", "rs")]
    assert len(owners._matched) == 0


@pytest.mark.parametrize(
    ("change", "same"),
    [
        pytest.param(lambda p: {**p, "status": {"phase": "Running"}}, True, id="a status write keeps both"),
        pytest.param(
            lambda p: {**p, "metadata": {**p["metadata"], "resourceVersion": "9"}},
            True,
            id="a metadata copy keeping the objects keeps both",
        ),
        pytest.param(
            lambda p: {**p, "metadata": {**p["metadata"], "labels": dict(p["metadata"]["labels"])}},
            False,
            id="equal labels in a new object are looked at",
        ),
        pytest.param(
            lambda p: {**p, "metadata": {**p["metadata"], "ownerReferences": []}},
            False,
            id="new owner references are looked at",
        ),
    ],
)
def test_same_marks_table(change: Any, same: bool) -> None:
    old = pod("p", labels={"app": "a"})
    assert _same_marks(old, change(old)) is same


class _Recorder(ReplicaSetController):
    """What one pod event queues and marks, through the handler and through the full handling."""

    def effects(self, old: JSON, new: JSON) -> tuple[list[Any], list[Any]]:
        def full() -> None:
            for one in (old, new):
                self._pod_seen(one, podutil.controller_ref_of(one))

        return self._effects(lambda: self._pod_changed(old, new)), self._effects(full)

    def _effects(self, action: Any) -> list[Any]:
        self.queue._queued.clear()
        for view in self.views._views.values():
            view.dirty.clear()
        action()
        return [list(self.queue._queued), {uid: set(v.dirty) for uid, v in self.views._views.items()}]


@settings(max_examples=40, deadline=None)
@given(owner=st.sampled_from([None, "a", "b", "gone"]), labels=st.sampled_from(range(len(LABELS))))
def test_a_status_write_queues_and_marks_what_the_full_handling_does(owner: str | None, labels: int) -> None:
    clock, store, rng = make_env()
    controller = _Recorder(store, clock, rng)
    controller.start()
    uids = {}
    for name, selected in (("a", {"app": "a"}), ("b", {"tier": "x"})):
        uids[name] = store.create("replicasets.apps", replicaset(name, 0, selected))["metadata"]["uid"]
    clock.run_until(clock.now() + 1)
    for name in ("a", "b"):
        controller.sync(("default", name))
    old = pod("p", labels=LABELS[labels])
    if owner is not None:
        ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "controller": True}
        old["metadata"]["ownerReferences"] = [{**ref, "uid": uids.get(owner, "uid-gone")}]
    new = {**old, "status": {"phase": "Running"}}
    shortcut, full = controller.effects(old, new)
    assert shortcut == full


class _Reindexing(PodOwnerIndex):
    """The generic path: every update re-indexes the new pod."""

    def _update(self, old: JSON, new: JSON) -> None:
        self._index(new)
        self._on_change(old, new)


@settings(max_examples=60, deadline=None)
@given(
    history=st.lists(
        st.tuples(
            st.integers(0, 3), st.sampled_from([None, "u1", "u2"]), st.sampled_from(["write", "status"])
        ),
        max_size=25,
    ),
    orphans=st.booleans(),
)
def test_status_writes_leave_the_owner_index_as_reindexing_does(
    history: list[tuple[int, str | None, str]], orphans: bool
) -> None:
    _, store, _ = make_env()
    informer = Informer(store, "pods")
    kept = PodOwnerIndex(informer, lambda _old, _new: None, orphans=orphans)
    versions: list[dict[str, int]] = []
    reindexed = _Reindexing(informer, lambda _old, _new: None, orphans=orphans)
    informer.start()
    for i, owner, action in history:
        name = f"p{i}"
        current = informer.get("default", name)
        if current is not None and action == "status":
            store.update("pods", {**current, "status": {"phase": "Running", "message": str(len(versions))}})
        else:
            body = pod(name, labels=LABELS[i % len(LABELS)])
            if owner is not None:
                body["metadata"]["ownerReferences"] = [
                    {"kind": "ReplicaSet", "uid": owner, "controller": True}
                ]
            if current is None:
                store.create("pods", body)
            else:
                store.update("pods", {**current, "metadata": {**current["metadata"], **body["metadata"]}})
        versions.append(dict(kept._versions))
        assert kept._versions == reindexed._versions
        assert kept._owner_of == reindexed._owner_of
        assert kept.owned == reindexed.owned and kept.orphans == reindexed.orphans
        assert kept._orphan_labels == reindexed._orphan_labels and kept._labels_of == reindexed._labels_of


@settings(max_examples=40, deadline=None)
@given(
    old_kind=st.sampled_from([None, "DaemonSet", "ReplicaSet"]),
    new_kind=st.sampled_from([None, "DaemonSet", "ReplicaSet"]),
    share=st.booleans(),
)
def test_the_daemonset_handler_queues_what_handling_old_and_new_in_full_does(
    old_kind: str | None, new_kind: str | None, share: bool
) -> None:
    clock, store, rng = make_env()
    controller = DaemonSetController(store, clock, rng)

    def with_owner(kind: str | None, name: str) -> JSON:
        made = pod("p", labels={"app": "agent"})
        if kind is not None:
            made["metadata"]["ownerReferences"] = [
                {"kind": kind, "name": name, "uid": name, "controller": True}
            ]
        return made

    old = with_owner(old_kind, "ds-old")
    new = {**old, "status": {"phase": "Running"}} if share else with_owner(new_kind, "ds-new")

    def queued(action: Any) -> list[Any]:
        controller.queue._queued.clear()
        action()
        return list(controller.queue._queued)

    def full() -> None:
        for one in (old, new):
            ref = podutil.controller_ref_of(one)
            if ref is not None and ref.get("kind") == "DaemonSet":
                controller.queue.add(("default", str(ref.get("name"))))

    assert queued(lambda: controller._pod_changed(old, new)) == queued(full)


class _PodGCReindexing(PodGCController):
    """The generic path: every update indexes the new pod afresh."""

    def _reindex(self, _old: JSON, new: JSON) -> None:
        self._index(new)


def _podgc_state(gc: PodGCController) -> tuple[Any, ...]:
    return (
        set(gc._terminated),
        set(gc._terminating),
        dict(gc._node_of),
        {n: set(k) for n, k in gc._by_node.items()},
    )


@settings(max_examples=80, deadline=None)
@given(
    history=st.lists(
        st.tuples(
            st.integers(0, 3),
            st.sampled_from([None, "n1", "n2"]),
            st.sampled_from([None, "Pending", "Running", "Succeeded", "Failed"]),
            st.booleans(),
            st.sampled_from(["write", "labels", "delete"]),
        ),
        max_size=30,
    )
)
def test_podgc_reindexing_shortcut_leaves_the_indexes_as_indexing_afresh_does(
    history: list[tuple[int, str | None, str | None, bool, str]],
) -> None:
    clock, store, _ = make_env()
    informer = Informer(store, "pods")
    kept = PodGCController(store, clock, pod_informer=informer)
    fresh = _PodGCReindexing(store, clock, pod_informer=informer)
    informer.start()
    for i, node_name, phase, deleting, action in history:
        name = f"p{i}"
        current = informer.get("default", name)
        if action == "delete":
            if current is not None:
                store.delete("pods", "default", name)
        elif current is not None and action == "labels":
            store.update("pods", {**current, "metadata": {**current["metadata"], "labels": {"v": str(i)}}})
        else:
            body = copy.deepcopy(current) if current is not None else pod(name)
            body["spec"] = {**body["spec"], "nodeName": node_name} if node_name else body["spec"]
            if not node_name:
                body["spec"].pop("nodeName", None)
            body["status"] = {"phase": phase} if phase else {}
            if deleting:
                body["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
            else:
                body["metadata"].pop("deletionTimestamp", None)
            if current is None:
                store.create("pods", body)
            else:
                store.update("pods", body)
        assert _podgc_state(kept) == _podgc_state(fresh)


node_histories = st.lists(
    st.tuples(
        st.sampled_from(["status", "taint", "untaint", "label", "unlabel", "template"]),
        st.sampled_from(["n0", "n1"]),
    ),
    max_size=20,
)


@settings(max_examples=80, deadline=None)
@given(history=node_histories, pass_per_write=st.booleans())
def test_the_placement_memo_answers_as_the_placement_function_after_any_node_history(
    history: list[tuple[str, str]], pass_per_write: bool
) -> None:
    ds = daemonset("agent", nodeSelector={"role": "edge"})
    nodes = {name: node(name, labels={"role": "edge"}) for name in ("n0", "n1")}
    memo = PlacementMemo()
    for action, name in history:
        current = nodes[name]
        meta = current["metadata"]
        if action == "status":  # labels and spec objects kept: the remembered answer stands
            nodes[name] = {**current, "status": {"conditions": []}}
        elif action in ("taint", "untaint"):
            nodes[name] = {**current, "spec": {"taints": [NO_SCHEDULE_TAINT]} if action == "taint" else {}}
        elif action in ("label", "unlabel"):
            labels = {**meta["labels"], "role": "edge" if action == "label" else "core"}
            nodes[name] = {**current, "metadata": {**meta, "labels": labels}}
        else:  # the template changed in place (noticed on the next pass)
            ds["spec"]["template"]["spec"]["tolerations"] = [{"operator": "Exists"}]
        placement = memo.placement(ds) if pass_per_write else None
        for n in nodes.values():
            got = placement(n) if placement is not None else memo.should_run(n, ds)
            assert got == node_should_run_daemon_pod(n, ds)


NO_SCHEDULE_TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    "pods",
    [
        pytest.param([], id="no pod on the node"),
        pytest.param([{"phase": "Running"}], id="one running pod"),
        pytest.param([{"phase": "Running"}, {"phase": "Pending"}], id="two pods: the newer is extra"),
        pytest.param([{"phase": "Succeeded"}], id="a succeeded pod"),
    ],
)
@pytest.mark.parametrize("taints", [[], [NO_SCHEDULE_TAINT]], ids=["untainted", "tainted NoSchedule"])
def test_pods_should_be_on_node_with_a_given_placement_equals_asking(
    pods: list[JSON], taints: list[JSON]
) -> None:
    clock, store, rng = make_env()
    controller = DaemonSetController(store, clock, rng)
    ds = store.create("daemonsets.apps", daemonset("agent"))
    n = node("n0", taints=taints)
    bodies = []
    for i, status in enumerate(pods):
        body = pod(f"p{i}")
        body["metadata"]["creationTimestamp"] = f"2024-01-01T00:00:0{i}Z"
        bodies.append({**body, "status": status})
    given_placement = controller.pods_should_be_on_node(
        n,
        ds,
        bodies,
        placement=controller._memo(ds).placement(ds, enable_comparison=controller.enable_comparison)(n),
    )
    assert given_placement == controller.pods_should_be_on_node(n, ds, bodies)


def _pinned(body: JSON, node_name: str) -> JSON:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    affinity = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    }
    return {**body, "spec": {**body["spec"], "affinity": affinity}}


@settings(max_examples=80, deadline=None)
@given(
    history=st.lists(
        st.tuples(
            st.integers(0, 4),
            st.sampled_from(["create", "bind", "status", "repin", "release", "other-owner", "delete"]),
            st.sampled_from(["n0", "n1", "n2"]),
            st.booleans(),
        ),
        max_size=30,
    )
)
def test_pods_by_node_kept_from_marked_events_equal_a_full_regrouping(
    history: list[tuple[int, str, str, bool]],
) -> None:
    clock, store, rng = make_env()
    controller = DaemonSetController(store, clock, rng)
    controller.start()
    ds = store.create("daemonsets.apps", daemonset("agent"))
    uid = ds["metadata"]["uid"]
    ref = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": uid, "controller": True}
    controller._pods_by_node(ds)  # kept from now on
    for i, action, node_name, look in history:
        name = f"p{i}"
        current = controller.pods.get("kube-system", name)
        if current is None and action == "create":
            body = _pinned(pod(name), node_name)
            body["metadata"] = {**body["metadata"], "namespace": "kube-system", "ownerReferences": [ref]}
            store.create("pods", body)
        elif current is not None and action == "delete":
            store.delete("pods", "kube-system", name)
        elif current is not None and action == "bind":
            store.update("pods", {**current, "spec": {**current["spec"], "nodeName": node_name}})
        elif current is not None and action == "status":
            store.update("pods", {**current, "status": {"phase": "Running", "message": str(len(history))}})
        elif current is not None and action == "repin":
            store.update("pods", _pinned(current, node_name))
        elif current is not None and action in ("release", "other-owner"):
            refs = [] if action == "release" else [{**ref, "uid": "someone-else"}]
            store.update("pods", {**current, "metadata": {**current["metadata"], "ownerReferences": refs}})
        if look:  # regrouped now, or after several writes
            kept = controller._pods_by_node(ds)
            fresh = daemon_pods_by_node_by_scan(controller.pods, uid)
            assert kept == fresh
            assert {n: [id(p) for p in ps] for n, ps in kept.items()} == {
                n: [id(p) for p in ps] for n, ps in fresh.items()
            }
    kept = controller._pods_by_node(ds)
    fresh = daemon_pods_by_node_by_scan(controller.pods, uid)
    assert {n: [id(p) for p in ps] for n, ps in kept.items()} == {
        n: [id(p) for p in ps] for n, ps in fresh.items()
    }
