"""The DaemonSet controller claims its pods as upstream's getDaemonPods does with ClaimPods
(pkg/controller/controller_ref_manager.go): orphans its selector matches are adopted, owned pods
it no longer matches are released, and a DaemonSet being deleted claims nothing. The table ports
daemon_controller_test.go TestGetNodesToDaemonPods."""

from __future__ import annotations

import itertools
import random

import pytest

from controllers.workload_builders import daemonset, events, make_env, node, owner_ref, pod, pods_of
from kubetaint.api import errors
from kubetaint.clock import VirtualClock
from kubetaint.controllers.daemonset import DaemonSetController
from kubetaint.controllers.daemonset.placement import target_node_name
from kubetaint.store.interface import Update
from kubetaint.store.memory import MemoryStore

NS = "kube-system"
SIMPLE = {"name": "simple-daemon", "type": "production"}
SIMPLE2 = {"name": "simple-daemon", "type": "test"}


def start():
    clock, store, rng = make_env()
    controller = DaemonSetController(store, clock, rng)
    controller.start()
    return clock, store, controller


def owner_uid(store, name: str) -> str | None:
    refs = store.get("pods", NS, name)["metadata"].get("ownerReferences") or []
    return next((r["uid"] for r in refs if r.get("controller")), None)


# (pod name, node, labels, owner: "ds" / "other" / None, phase, claimed)
GET_NODES_TO_DAEMON_PODS = [
    pytest.param(
        "matching-owned-0", "node-0", SIMPLE, "ds", "Running", True, id="a matching owned pod is kept"
    ),
    pytest.param(
        "matching-orphan-0", "node-0", SIMPLE, None, "Running", True, id="a matching orphan is adopted"
    ),
    pytest.param(
        "matching-owned-1", "node-1", SIMPLE, "ds", "Running", True, id="a second node's owned pod is kept"
    ),
    pytest.param(
        "matching-orphan-1", "node-1", SIMPLE, None, "Running", True, id="a second node's orphan is adopted"
    ),
    pytest.param(
        "matching-owned-failed-pod-1", "node-1", SIMPLE, "ds", "Failed", True, id="a failed owned pod is kept"
    ),
    pytest.param(
        "non-matching-owned-0",
        "node-0",
        SIMPLE2,
        "ds",
        "Running",
        False,
        id="a non-matching owned pod is released",
    ),
    pytest.param(
        "non-matching-orphan-1",
        "node-1",
        SIMPLE2,
        None,
        "Running",
        False,
        id="a non-matching orphan stays one",
    ),
    pytest.param(
        "matching-owned-by-other-0",
        "node-0",
        SIMPLE,
        "other",
        "Running",
        False,
        id="a pod another DaemonSet owns is left to it",
    ),
]


def test_get_nodes_to_daemon_pods_claims_as_upstream() -> None:
    _clock, store, controller = start()
    for name in ("node-0", "node-1"):
        store.create("nodes", node(name))
    ds = store.create("daemonsets.apps", daemonset("foo", SIMPLE))
    other = store.create("daemonsets.apps", daemonset("foo2", SIMPLE))
    owners = {"ds": owner_ref(ds, "DaemonSet"), "other": owner_ref(other, "DaemonSet"), None: None}
    for case in GET_NODES_TO_DAEMON_PODS:
        name, node_name, labels, owner, phase, _claimed = case.values
        store.create(
            "pods",
            pod(name, labels=labels, node_name=node_name, phase=phase, namespace=NS, owner=owners[owner]),
        )
    by_node = controller.nodes_to_daemon_pods(store.get("daemonsets.apps", NS, "foo"))
    assert by_node is not None
    got = sorted(p["metadata"]["name"] for pods in by_node.values() for p in pods)
    assert got == sorted(c.values[0] for c in GET_NODES_TO_DAEMON_PODS if c.values[5])
    assert {n: sorted(p["metadata"]["name"] for p in pods) for n, pods in by_node.items() if pods} == {
        "node-0": ["matching-orphan-0", "matching-owned-0"],
        "node-1": ["matching-orphan-1", "matching-owned-1", "matching-owned-failed-pod-1"],
    }
    other_uid = other["metadata"]["uid"]
    for case in GET_NODES_TO_DAEMON_PODS:
        name, _node, _labels, owner, _phase, claimed = case.values
        expected = ds["metadata"]["uid"] if claimed else (other_uid if owner == "other" else None)
        assert owner_uid(store, name) == expected, case.id


def on_delete(ds: dict) -> dict:
    return {**ds, "spec": {**ds["spec"], "updateStrategy": {"type": "OnDelete"}}}


def test_a_daemonset_created_over_a_matching_bare_pod_adopts_it_instead_of_a_duplicate() -> None:
    clock, store, _ = start()
    store.create("nodes", node("n1"))
    store.create("pods", pod("bare", labels={"app": "agent"}, node_name="n1", namespace=NS))
    ds = store.create("daemonsets.apps", on_delete(daemonset("agent")))
    clock.run_pending()
    pods = pods_of(store, NS)
    assert [p["metadata"]["name"] for p in pods] == ["bare"]
    assert pods[0]["metadata"]["ownerReferences"] == [owner_ref(ds, "DaemonSet")]
    status = store.get("daemonsets.apps", NS, "agent")["status"]
    assert (status["desiredNumberScheduled"], status["currentNumberScheduled"]) == (1, 1)
    assert status["updatedNumberScheduled"] == 0  # no controller-revision-hash label: not of the revision


def test_a_rolling_update_replaces_an_adopted_pod_of_no_revision() -> None:
    clock, store, _ = start()
    store.create("nodes", node("n1"))
    store.create("pods", pod("bare", labels={"app": "agent"}, node_name="n1", namespace=NS))
    store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    deleted = [e["message"] for e in events(store, "SuccessfulDelete")]
    assert deleted == ["Deleted pod: bare"]
    [replacement] = pods_of(store, NS)
    assert replacement["metadata"]["name"] != "bare"
    assert replacement["metadata"]["labels"].get("controller-revision-hash")


def test_an_adopted_orphan_on_a_node_the_daemonset_should_not_run_on_is_deleted() -> None:
    clock, store, _ = start()
    store.create("nodes", node("n1"))
    store.create("pods", pod("bare", labels={"app": "agent"}, node_name="n1", namespace=NS))
    store.create("daemonsets.apps", daemonset("agent", nodeSelector={"role": "agent"}))
    clock.run_pending()
    assert pods_of(store, NS) == []


def test_an_orphan_created_after_the_daemonset_is_adopted() -> None:
    clock, store, _ = start()
    ds = store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    store.create("pods", pod("late", labels={"app": "agent"}, namespace=NS))
    store.create("pods", pod("stranger", labels={"app": "other"}, namespace=NS))
    clock.run_pending()
    assert owner_uid(store, "late") == ds["metadata"]["uid"]
    assert owner_uid(store, "stranger") is None


def test_an_orphan_relabelled_to_match_is_adopted() -> None:
    clock, store, _ = start()
    ds = store.create("daemonsets.apps", daemonset("agent"))
    store.create("pods", pod("p", labels={"app": "other"}, namespace=NS))
    clock.run_pending()
    assert owner_uid(store, "p") is None
    current = store.get("pods", NS, "p")
    store.update("pods", {**current, "metadata": {**current["metadata"], "labels": {"app": "agent"}}})
    clock.run_pending()
    assert owner_uid(store, "p") == ds["metadata"]["uid"]


def test_a_relabelled_daemon_pod_is_released_and_replaced() -> None:
    clock, store, _ = start()
    store.create("nodes", node("n1"))
    ds = store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    [first] = pods_of(store, NS)
    store.update("pods", {**first, "metadata": {**first["metadata"], "labels": {"app": "debug"}}})
    clock.run_pending()
    released = store.get("pods", NS, first["metadata"]["name"])
    assert "ownerReferences" not in released["metadata"]
    owned = [p for p in pods_of(store, NS) if p["metadata"].get("ownerReferences")]
    assert [target_node_name(p) for p in owned] == ["n1"]
    assert owned[0]["metadata"]["ownerReferences"] == [owner_ref(ds, "DaemonSet")]


def test_a_released_pod_keeps_its_other_owner_references() -> None:
    clock, store, _ = start()
    ds = store.create("daemonsets.apps", daemonset("agent"))
    keeper = {"apiVersion": "v1", "kind": "ConfigMap", "name": "keeper", "uid": "cm-uid"}
    store.create("pods", pod("p", labels={"app": "other"}, namespace=NS, owner=owner_ref(ds, "DaemonSet")))
    current = store.get("pods", NS, "p")
    refs = [keeper, *current["metadata"]["ownerReferences"]]
    store.update("pods", {**current, "metadata": {**current["metadata"], "ownerReferences": refs}})
    clock.run_pending()
    assert store.get("pods", NS, "p")["metadata"]["ownerReferences"] == [keeper]


def test_an_adopted_pod_keeps_its_other_owner_references() -> None:
    clock, store, _ = start()
    keeper = {"apiVersion": "v1", "kind": "ConfigMap", "name": "keeper", "uid": "cm-uid"}
    store.create("pods", pod("p", labels={"app": "agent"}, namespace=NS, owner=keeper))
    ds = store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    assert store.get("pods", NS, "p")["metadata"]["ownerReferences"] == [keeper, owner_ref(ds, "DaemonSet")]


DELETING = {"deletionTimestamp": "2026-01-01T00:00:00Z"}


def test_a_daemonset_being_deleted_neither_adopts_nor_releases() -> None:
    clock, store, _ = start()
    ds = store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    current = store.get("daemonsets.apps", NS, "agent")
    store.update("daemonsets.apps", {**current, "metadata": {**current["metadata"], **DELETING}})
    store.create("pods", pod("mine", labels={"app": "debug"}, namespace=NS, owner=owner_ref(ds, "DaemonSet")))
    store.create("pods", pod("bare", labels={"app": "agent"}, namespace=NS))
    clock.run_pending()
    assert owner_uid(store, "bare") is None
    assert owner_uid(store, "mine") == ds["metadata"]["uid"]


def test_a_pod_in_another_namespace_is_not_adopted() -> None:
    clock, store, _ = start()
    store.create("pods", pod("elsewhere", labels={"app": "agent"}, namespace="default"))
    store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    assert store.get("pods", "default", "elsewhere")["metadata"].get("ownerReferences") is None


def test_an_orphan_being_deleted_is_not_adopted() -> None:
    clock, store, _ = start()
    store.create("pods", pod("going", labels={"app": "agent"}, namespace=NS, **DELETING))
    store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    assert owner_uid(store, "going") is None


def _handler_env():
    """Three DaemonSets being deleted (their syncs claim nothing, so an orphan stays one): foo1
    and foo2 select SIMPLE, foo3 SIMPLE2; the queue drained."""
    clock, store, controller = start()
    sets = {}
    for name, labels in (("foo1", SIMPLE), ("foo2", SIMPLE), ("foo3", SIMPLE2)):
        created = store.create("daemonsets.apps", daemonset(name, labels))
        sets[name] = store.update(
            "daemonsets.apps", {**created, "metadata": {**created["metadata"], **DELETING}}
        )
    clock.run_pending()
    assert len(controller.queue) == 0
    return clock, store, controller, sets


def _relabel(store, name: str, labels: dict) -> None:
    current = store.get("pods", NS, name)
    store.update("pods", {**current, "metadata": {**current["metadata"], "labels": labels}})


def _set_owner(store, name: str, ref: dict | None) -> None:
    current = store.get("pods", NS, name)
    meta = {k: v for k, v in current["metadata"].items() if k != "ownerReferences"}
    if ref is not None:
        meta["ownerReferences"] = [ref]
    store.update("pods", {**current, "metadata": meta})


def _status_write(store, name: str) -> None:
    current = store.get("pods", NS, name)
    store.update("pods", {**current, "status": {**current["status"], "message": "touched"}})


# (first labels, first owner, the change, the DaemonSets queued): daemon_controller_test.go's
# TestAddPodOrphan, TestUpdatePodOrphanSameLabels, TestUpdatePodOrphanWithNewLabels,
# TestUpdatePodChangeControllerRef and TestUpdatePodControllerRefRemoved
POD_HANDLER_CASES = [
    pytest.param(
        SIMPLE, None, None, ["foo1", "foo2"], id="an added orphan queues every DaemonSet it matches"
    ),
    pytest.param(
        SIMPLE,
        None,
        lambda store, sets: _status_write(store, "pod1"),
        [],
        id="an orphan's same labels queue none",
    ),
    pytest.param(
        {"foo2": "bar2"},
        None,
        lambda store, sets: _relabel(store, "pod1", SIMPLE),
        ["foo1", "foo2"],
        id="an orphan's new labels queue the DaemonSets now matching",
    ),
    pytest.param(
        SIMPLE,
        "foo1",
        lambda store, sets: _set_owner(store, "pod1", owner_ref(sets["foo2"], "DaemonSet")),
        ["foo1", "foo2"],
        id="a changed controller reference queues the old and the new owner",
    ),
    pytest.param(
        SIMPLE,
        "foo2",
        lambda store, sets: _set_owner(store, "pod1", None),
        ["foo1", "foo2"],
        id="a removed controller reference queues the old owner and the DaemonSets matching the orphan",
    ),
]


@pytest.mark.parametrize(("labels", "owner", "change", "queued"), POD_HANDLER_CASES)
def test_pod_handlers_queue_the_daemonsets_that_may_claim_the_pod(labels, owner, change, queued) -> None:
    clock, store, controller, sets = _handler_env()
    ref = owner_ref(sets[owner], "DaemonSet") if owner else None
    store.create("pods", pod("pod1", labels=labels, node_name="node-0", namespace=NS, owner=ref))
    if change is not None:
        clock.run_pending()
        change(store, sets)
    assert sorted(name for _ns, name in controller.queue._queued) == queued


class RefusingStore(MemoryStore):
    """A memory store that refuses (409) every pod update while `refusing` holds."""

    refusing = False

    def commit(self, ops, *, stop_at_failure=False):  # type: ignore[no-untyped-def]
        if self.refusing and any(type(op) is Update and op.resource == "pods" for op in ops):
            return [errors.conflict("pods", op.object["metadata"]["name"], "refused") for op in ops]
        return super().commit(ops, stop_at_failure=stop_at_failure)


def test_a_refused_adoption_stops_the_sync_and_is_retried_a_second_later() -> None:
    clock = VirtualClock()
    counter = itertools.count()
    store = RefusingStore(clock, uid_factory=lambda: f"uid-{next(counter):05d}")
    DaemonSetController(store, clock, random.Random(1)).start()
    store.create("nodes", node("n1"))
    store.create("pods", pod("bare", labels={"app": "agent"}, node_name="n1", namespace=NS))
    store.refusing = True
    ds = store.create("daemonsets.apps", on_delete(daemonset("agent")))
    clock.run_pending()
    assert [p["metadata"]["name"] for p in pods_of(store, NS)] == ["bare"]  # no pod created beside it
    assert owner_uid(store, "bare") is None
    status = store.get("daemonsets.apps", NS, "agent").get("status") or {}
    assert "desiredNumberScheduled" not in status  # the sync stopped before its status
    store.refusing = False
    clock.advance(1.0)
    clock.run_pending()
    assert owner_uid(store, "bare") == ds["metadata"]["uid"]
    assert [p["metadata"]["name"] for p in pods_of(store, NS)] == ["bare"]
