"""Pod GC: terminated pods over the threshold, orphans after the quarantine, terminating pods on
out-of-service not-ready nodes, unscheduled terminating pods; 20 s passes on the virtual clock."""

from __future__ import annotations

from controllers.workload_builders import make_env, names, node, pod, pods_of
from kubetaint.controllers.podgc import PodGCController
from kubetaint.store.changes import each_event


def start(**options):
    clock, store, _ = make_env()
    controller = PodGCController(store, clock, **options)
    controller.start()
    return clock, store


def test_terminated_pods_over_threshold_go_evicted_first_then_oldest() -> None:
    clock, store = start(terminated_pod_threshold=2)
    store.create("pods", pod("done-old", phase="Succeeded", created="2026-01-01T00:00:00Z"))
    store.create("pods", pod("done-new", phase="Succeeded", created="2026-01-01T01:00:00Z"))
    evicted = pod("evicted-new", phase="Failed", created="2026-01-01T02:00:00Z")
    evicted["status"]["reason"] = "Evicted"
    store.create("pods", evicted)
    store.create("pods", pod("failed-mid", phase="Failed", created="2026-01-01T00:30:00Z"))
    store.create("pods", pod("running"))
    clock.advance(19.9)
    assert len(pods_of(store)) == 5
    clock.advance(0.1)
    assert names(pods_of(store)) == ["done-new", "failed-mid", "running"]


def test_threshold_zero_disables_terminated_collection() -> None:
    clock, store = start(terminated_pod_threshold=0)
    store.create("pods", pod("done", phase="Succeeded"))
    clock.advance(60)
    assert names(pods_of(store)) == ["done"]


def test_orphans_of_a_deleted_node_go_after_the_quarantine_marked_failed() -> None:
    clock, store = start()
    store.create("nodes", node("n1"))
    store.create("pods", pod("bound", node_name="n1"))
    store.create("pods", pod("ghost", node_name="never-existed"))
    seen: list[tuple[float, str, dict]] = []
    store.subscribe(
        each_event(
            lambda e: seen.append((clock.elapsed(), e.type, e.object)) if e.resource == "pods" else None
        )
    )
    clock.advance(20)  # first pass: "never-existed" enters quarantine until t=60
    assert names(pods_of(store)) == ["bound", "ghost"]
    clock.advance(40)  # pass at t=60 finds it still missing
    assert names(pods_of(store)) == ["bound"]
    modified = [o for t, kind, o in seen if kind == "MODIFIED" and o["metadata"]["name"] == "ghost"]
    assert modified[-1]["status"]["phase"] == "Failed"
    condition = modified[-1]["status"]["conditions"][-1]
    assert condition == {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "DeletionByPodGC",
        "message": "PodGC: node no longer exists",
        "lastTransitionTime": "2026-01-01T00:01:00Z",
    }
    assert [t for t, kind, o in seen if kind == "DELETED"] == [60.0]


def test_node_coming_back_during_quarantine_saves_its_pods() -> None:
    clock, store = start()
    store.create("pods", pod("p", node_name="n1"))
    clock.advance(20)
    store.create("nodes", node("n1"))
    clock.advance(100)
    assert names(pods_of(store)) == ["p"]


def test_terminating_pods_on_out_of_service_not_ready_nodes_are_force_deleted() -> None:
    clock, store = start()
    taint = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}
    store.create("nodes", node("down", taints=[taint], ready="False"))
    store.create("nodes", node("ready-oos", taints=[taint]))
    store.create("nodes", node("down-no-taint", ready="Unknown"))
    for name, node_name in (("a", "down"), ("b", "ready-oos"), ("c", "down-no-taint")):
        store.create("pods", pod(name, node_name=node_name, deletionTimestamp="2026-01-01T00:00:00Z"))
    store.create("pods", pod("d", node_name="down"))
    clock.advance(20)
    assert names(pods_of(store)) == ["b", "c", "d"]


def test_unscheduled_terminating_pods_are_deleted() -> None:
    clock, store = start()
    store.create("pods", pod("pending-deleting", phase="Pending", deletionTimestamp="2026-01-01T00:00:00Z"))
    store.create("pods", pod("pending", phase="Pending"))
    clock.advance(20)
    assert names(pods_of(store)) == ["pending"]
