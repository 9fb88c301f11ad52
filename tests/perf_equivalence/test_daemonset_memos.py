"""The DaemonSet controller's remembered work gives what computing afresh gives: placement per node
(PlacementMemo), its pods by node (kept per owner-index version), the node order, and an owner index
without orphans (laws over random histories of node, pod and DaemonSet writes)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import daemon_pods_by_node_by_scan, daemonset, make_env, node, pod
from kubetaint.controllers.daemonset import DaemonSetController
from kubetaint.controllers.daemonset.placement import (
    PlacementMemo,
    node_should_run_daemon_pod,
)
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.store.informer import Informer

JSON = dict[str, Any]
NS = "kube-system"
NO_SCHEDULE = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
NO_EXECUTE = {"key": "dedicated", "value": "x", "effect": "NoExecute"}
TOLERATE = {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("first", "second", "template_change"),
    [
        pytest.param([], [NO_SCHEDULE], None, id="a node tainted NoSchedule since is asked afresh"),
        pytest.param([NO_SCHEDULE], [], None, id="a node whose taint was removed since is asked afresh"),
        pytest.param([NO_EXECUTE], [NO_EXECUTE], None, id="an unchanged NoExecute taint keeps its answer"),
        pytest.param(
            [NO_SCHEDULE], [NO_SCHEDULE], [TOLERATE], id="a template changed in place since is noticed"
        ),
    ],
)
def test_placement_memo_answers_as_the_placement_function(
    first: list[JSON], second: list[JSON], template_change: list[JSON] | None
) -> None:
    ds = daemonset("agent")
    memo = PlacementMemo()
    before = node("n1", taints=first)
    assert memo.should_run(before, ds) == node_should_run_daemon_pod(before, ds)
    after = node("n1", taints=second) if second != first else before
    if template_change is not None:
        ds["spec"]["template"]["spec"]["tolerations"] = template_change  # in place, on purpose
    assert memo.should_run(after, ds) == node_should_run_daemon_pod(after, ds)


def test_placement_memo_forgets_a_node() -> None:
    ds = daemonset("agent")
    memo = PlacementMemo()
    n1 = node("n1")
    memo.should_run(n1, ds)
    memo.forget("n1")
    assert len(memo._entries) == 0


node_writes = st.lists(
    st.tuples(
        st.sampled_from(["add-node", "taint-node", "untaint-node", "delete-node", "fail-pod", "delete-pod"]),
        st.integers(min_value=0, max_value=4),
    ),
    max_size=14,
)


@settings(max_examples=40, deadline=None)
@given(writes=node_writes)
def test_pods_by_node_and_node_order_equal_a_fresh_computation(writes: list[tuple[str, int]]) -> None:
    clock, store, rng = make_env()
    controller = DaemonSetController(store, clock, rng)
    controller.start()
    for i in range(3):
        store.create("nodes", node(f"n{i}"))
    store.create("daemonsets.apps", daemonset("agent"))
    clock.run_until(clock.now() + 1)
    for action, i in writes:
        name = f"n{i}"
        present = controller.nodes.get("", name)
        if action == "add-node" and present is None:
            store.create("nodes", node(name))
        elif action in ("taint-node", "untaint-node") and present is not None:
            taints = [NO_EXECUTE] if action == "taint-node" else []
            store.update("nodes", {**present, "spec": {"taints": taints}})
        elif action == "delete-node" and present is not None:
            store.delete("nodes", "", name)
        elif action in ("fail-pod", "delete-pod"):
            pods = sorted(controller.pods.items(), key=podutil.key_of)
            if pods:
                victim = pods[i % len(pods)]
                if action == "fail-pod":
                    store.update("pods", {**victim, "status": {"phase": "Failed"}})
                else:
                    store.delete("pods", NS, victim["metadata"]["name"])
        ds = controller.daemonsets.get(NS, "agent")
        assert ds is not None
        assert controller._pods_by_node(ds) == daemon_pods_by_node_by_scan(
            controller.pods, ds["metadata"]["uid"]
        )
        names = [n["metadata"]["name"] for n in controller._sorted_nodes()]
        assert names == sorted(n["metadata"]["name"] for n in controller.nodes.items())
        for n in controller.nodes.items():
            assert controller._should_run(n, ds) == node_should_run_daemon_pod(n, ds)
        clock.run_until(clock.now() + 30)


def test_a_sync_after_an_unrelated_wake_writes_nothing_new() -> None:
    clock, store, rng = make_env()
    controller = DaemonSetController(store, clock, rng)
    controller.start()
    for i in range(4):
        store.create("nodes", node(f"n{i}"))
    store.create("daemonsets.apps", daemonset("agent"))
    clock.run_until(clock.now() + 1)
    version = store.current_resource_version()
    controller.queue.add((NS, "agent"))
    clock.run_until(clock.now() + 1)
    assert store.current_resource_version() == version
    assert len(controller._pods_by_node(controller.daemonsets.get(NS, "agent") or {})) == 4


@settings(max_examples=40, deadline=None)
@given(
    writes=st.lists(
        st.tuples(st.integers(min_value=0, max_value=5), st.sampled_from(["a", "b", None]), st.booleans()),
        max_size=20,
    )
)
def test_owner_index_without_orphans_keeps_the_same_owned_pods_and_counts_their_changes(
    writes: list[tuple[int, str | None, bool]],
) -> None:
    _, store, _ = make_env()
    informer = Informer(store, "pods")
    full = PodOwnerIndex(informer, lambda _old, _new: None)
    owned_only = PodOwnerIndex(informer, lambda _old, _new: None, orphans=False)
    informer.start()
    for i, owner, delete in writes:
        name = f"p{i}"
        current = informer.get("default", name)
        versions = {uid: owned_only.version(uid) for uid in ("a", "b")}
        touched = (
            {podutil.controller_ref_of(current)["uid"]}
            if current and podutil.controller_of(current)
            else set()
        )
        if delete:
            if current is None:
                continue
            store.delete("pods", "default", name)
        else:
            refs = [{"apiVersion": "v1", "kind": "X", "name": owner, "uid": owner, "controller": True}]
            body = pod(name, labels={"app": "a"})
            if owner is not None:
                body["metadata"]["ownerReferences"] = refs
                touched.add(owner)
            if current is None:
                store.create("pods", body)
            else:
                store.update("pods", {**copy.deepcopy(current), "metadata": {**body["metadata"]}})
        after = informer.get("default", name)
        if after is not None and current is not None and after is current:
            touched = set()  # an update that changed nothing: no event
        for uid in ("a", "b"):
            assert owned_only.pods_owned_by(uid) == full.pods_owned_by(uid)
            changed = owned_only.version(uid) != versions[uid]
            assert changed == (uid in touched)
        assert owned_only.orphans == {}
