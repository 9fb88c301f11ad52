"""ReplicaSet controller: adoption, replacement of deleted or failed pods, scale-down ranking, status."""

from __future__ import annotations

import pytest

from controllers.workload_builders import events, make_env, names, owner_ref, pod, pods_of, replicaset
from kubetaint.controllers.replicaset import ReplicaSetController
from kubetaint.controllers.replicaset.podutil import rank_for_deletion
from kubetaint.core.names import ALPHANUMS, generate_name


def start():
    clock, store, rng = make_env()
    controller = ReplicaSetController(store, clock, rng)
    controller.start()
    return clock, store, controller


def test_creates_pods_up_to_replicas_with_generated_names_and_owner_references() -> None:
    clock, store, _ = start()
    rs = store.create("replicasets.apps", replicaset("web", 3))
    clock.run_pending()
    pods = pods_of(store)
    assert len(pods) == 3
    for p in pods:
        name = p["metadata"]["name"]
        assert name.startswith("web-") and len(name) == 9 and set(name[4:]) <= set(ALPHANUMS)
        assert p["metadata"]["generateName"] == "web-"
        assert p["metadata"]["labels"] == {"app": "web"}
        assert p["metadata"]["ownerReferences"] == [owner_ref(rs, "ReplicaSet")]
    created = events(store, "SuccessfulCreate")
    assert sorted(e["message"] for e in created) == sorted(f"Created pod: {n}" for n in names(pods))
    assert all(e["source"]["component"] == "replicaset-controller" for e in created)


def test_same_seed_gives_the_same_pod_names() -> None:
    runs = []
    for _ in range(2):
        clock, store, _ = start()
        store.create("replicasets.apps", replicaset("web", 4))
        clock.run_pending()
        runs.append(names(pods_of(store)))
    assert runs[0] == runs[1]


def test_adopts_matching_orphans_before_creating_and_ignores_non_matching() -> None:
    clock, store, _ = start()
    store.create("pods", pod("orphan-1"))
    store.create("pods", pod("orphan-2"))
    store.create("pods", pod("other", labels={"app": "db"}))
    rs = store.create("replicasets.apps", replicaset("web", 3))
    clock.run_pending()
    owned = [p for p in pods_of(store) if p["metadata"].get("ownerReferences")]
    assert len(owned) == 3
    assert {"orphan-1", "orphan-2"} <= set(names(owned))
    assert store.get("pods", "default", "other")["metadata"].get("ownerReferences") is None
    assert store.get("pods", "default", "orphan-1")["metadata"]["ownerReferences"] == [
        owner_ref(rs, "ReplicaSet")
    ]


def test_pods_owned_by_another_controller_are_not_adopted() -> None:
    clock, store, _ = start()
    foreign = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": "u-x", "controller": True}
    store.create("pods", pod("taken", owner=foreign))
    store.create("replicasets.apps", replicaset("web", 1))
    clock.run_pending()
    assert len(pods_of(store)) == 2


def test_replaces_a_deleted_pod() -> None:
    clock, store, _ = start()
    store.create("replicasets.apps", replicaset("web", 2))
    clock.run_pending()
    victim = names(pods_of(store))[0]
    clock.advance(30)
    store.delete("pods", "default", victim)
    clock.run_pending()
    pods = pods_of(store)
    assert len(pods) == 2 and victim not in names(pods)
    assert max(p["metadata"]["creationTimestamp"] for p in pods) == "2026-01-01T00:00:30Z"


def test_failed_pod_is_replaced_but_not_deleted() -> None:
    clock, store, _ = start()
    store.create("replicasets.apps", replicaset("web", 1))
    clock.run_pending()
    [first] = pods_of(store)
    store.update("pods", {**first, "status": {"phase": "Failed", "reason": "Evicted"}})
    clock.run_pending()
    pods = pods_of(store)
    assert len(pods) == 2
    assert store.get("pods", "default", first["metadata"]["name"])["status"]["phase"] == "Failed"
    assert store.get("replicasets.apps", "default", "web")["status"]["replicas"] == 1


def test_scale_down_deletes_unscheduled_then_pending_then_not_ready_pods_first() -> None:
    clock, store, _ = start()
    rs = store.create("replicasets.apps", replicaset("web", 4))
    ref = owner_ref(rs, "ReplicaSet")
    store.create("pods", pod("running", owner=ref, node_name="n1"))
    store.create("pods", pod("not-ready", owner=ref, node_name="n2", ready=False))
    store.create("pods", pod("pending", owner=ref, node_name="n3", phase="Pending"))
    store.create("pods", pod("unscheduled", owner=ref, phase="Pending"))
    clock.run_pending()
    for survivors in (["not-ready", "pending", "running"], ["not-ready", "running"], ["running"]):
        current = store.get("replicasets.apps", "default", "web")
        store.update("replicasets.apps", {**current, "spec": {**current["spec"], "replicas": len(survivors)}})
        clock.run_pending()
        assert names(pods_of(store)) == survivors
    assert [e["message"] for e in events(store, "SuccessfulDelete")] == [
        "Deleted pod: unscheduled",
        "Deleted pod: pending",
        "Deleted pod: not-ready",
    ]


@pytest.mark.parametrize(
    ("pods", "first"),
    [
        pytest.param(
            [
                pod("a", node_name="n"),
                pod("b", node_name="n", annotations={"controller.kubernetes.io/pod-deletion-cost": "-5"}),
            ],
            "b",
            id="lower deletion cost goes first",
        ),
        pytest.param(
            [
                pod("old", node_name="n", created="2026-01-01T00:00:00Z"),
                pod("new", node_name="n", created="2026-01-01T10:00:00Z", phase="Pending"),
            ],
            "new",
            id="pending before running",
        ),
    ],
)
def test_deletion_ranking_table(pods, first) -> None:
    ranked = rank_for_deletion(pods, [0] * len(pods), 1767225600.0 + 86400)
    assert ranked[0]["metadata"]["name"] == first


def test_doubled_up_pods_go_first_at_equal_readiness() -> None:
    pods = [pod("alone", node_name="n1"), pod("crowded", node_name="n2")]
    assert rank_for_deletion(pods, [1, 3], 1767225600.0)[0]["metadata"]["name"] == "crowded"


def test_status_counts_ready_and_available_with_min_ready_seconds() -> None:
    clock, store, _ = start()
    rs = store.create("replicasets.apps", replicaset("web", 2, minReadySeconds=30))
    ref = owner_ref(rs, "ReplicaSet")
    store.create("pods", pod("a", owner=ref, node_name="n1"))
    store.create("pods", pod("b", owner=ref, node_name="n1"))
    clock.run_pending()
    status = store.get("replicasets.apps", "default", "web")["status"]
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (2, 2, 0)
    clock.advance(30)
    status = store.get("replicasets.apps", "default", "web")["status"]
    assert status["availableReplicas"] == 2
    assert status["observedGeneration"] == 1


def test_generate_name_truncates_long_bases() -> None:
    import random

    name = generate_name("x" * 80 + "-", random.Random(3))
    assert len(name) == 63 and name.startswith("x" * 58)


def _being_deleted(obj):
    """`obj` as its deletion marks it while a finalizer keeps it (what the registry stores)."""
    meta = {
        **obj["metadata"],
        "finalizers": ["example.com/keep"],
        "deletionTimestamp": "2026-01-01T00:00:01Z",
    }
    return {**obj, "metadata": meta}


def test_a_relabelled_pod_being_deleted_is_released() -> None:
    """ClaimObject releases an owned pod its selector no longer matches whatever the pod's own
    deletion state (only a controller being deleted keeps it)."""
    clock, store, _ = start()
    rs = store.create("replicasets.apps", replicaset("web", 1))
    clock.run_pending()
    [owned] = pods_of(store)
    name = owned["metadata"]["name"]
    terminating = _being_deleted(owned)
    store.update("pods", {**terminating, "metadata": {**terminating["metadata"], "labels": {"app": "other"}}})
    clock.run_pending()
    released = store.get("pods", "default", name)
    assert released["metadata"].get("deletionTimestamp")
    assert not [
        r for r in released["metadata"].get("ownerReferences") or () if r.get("uid") == rs["metadata"]["uid"]
    ]


def test_a_replicaset_being_deleted_releases_nothing() -> None:
    clock, store, _ = start()
    rs = store.create("replicasets.apps", replicaset("web", 1))
    clock.run_pending()
    [owned] = pods_of(store)
    name = owned["metadata"]["name"]
    rs = store.update("replicasets.apps", _being_deleted(store.get("replicasets.apps", "default", "web")))
    store.update("pods", {**owned, "metadata": {**owned["metadata"], "labels": {"app": "other"}}})
    clock.run_pending()
    kept = store.get("pods", "default", name)
    assert kept["metadata"]["ownerReferences"] == [owner_ref(rs, "ReplicaSet")]
