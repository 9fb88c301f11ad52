"""With container events on, a hollow kubelet records the container events of the pods it
starts (Pulling, Pulled, Created, Started, with the container's field path, from `kubelet` on
its node) and of a pod it stops after its deletion (Killing); the simulator records none."""

from __future__ import annotations

from kubetaint.apiserver.live import LiveCluster
from kubetaint.clock import VirtualClock
from kubetaint.controlplane import ControlPlane
from kubetaint.store.memory import MemoryStore

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
}


def kubelet_events(store: MemoryStore, pod: str) -> list[tuple[str, str, str, str]]:
    events = [
        e
        for e in store.list("events", namespace="default").items
        if e["involvedObject"]["name"] == pod and e["source"].get("component") == "kubelet"
    ]
    events.sort(key=lambda e: e["metadata"]["name"])
    return [
        (e["involvedObject"]["fieldPath"], e["reason"], e["message"], e["source"]["host"]) for e in events
    ]


def test_a_started_and_deleted_pod_has_the_kubelets_container_events() -> None:
    clock = VirtualClock()
    store = MemoryStore(clock)
    cluster = LiveCluster(store, clock, workers=1, seed=1, server_address="http://127.0.0.1:1")
    cluster.plane.fleet.pool.settings.container_events = True
    cluster.start()
    clock.advance(1)
    cluster.plane.registry.create("pods", dict(POD))
    clock.advance(5)
    cluster.plane.registry.delete("pods", "default", "web")
    clock.advance(40)
    assert kubelet_events(store, "web") == [
        ("spec.containers{c}", "Pulling", 'Pulling image "nginx:1.25"', "node-1"),
        (
            "spec.containers{c}",
            "Pulled",
            'Successfully pulled image "nginx:1.25" in 0s (0s including waiting). Image size: 0 bytes.',
            "node-1",
        ),
        ("spec.containers{c}", "Created", "Container created", "node-1"),
        ("spec.containers{c}", "Started", "Container started", "node-1"),
        ("spec.containers{c}", "Killing", "Stopping container c", "node-1"),
    ]
    cluster.stop()


def test_the_simulators_kubelets_record_no_container_events() -> None:
    clock = VirtualClock()
    store = MemoryStore(clock)
    plane = ControlPlane(store, clock, seed=1)
    plane.fleet.add({"metadata": {"name": "node-1"}})
    plane.start()
    plane.registry.create("pods", dict(POD))
    clock.advance(5)
    assert store.get("pods", "default", "web")["status"]["phase"] == "Running"
    assert kubelet_events(store, "web") == []
    plane.stop()


def test_a_failing_on_failure_pod_backs_off_then_restarts_its_container() -> None:
    clock = VirtualClock()
    store = MemoryStore(clock)
    cluster = LiveCluster(store, clock, workers=1, seed=1, server_address="http://127.0.0.1:1")
    cluster.start()
    clock.advance(1)
    failing = {
        **POD,
        "metadata": {
            "name": "job",
            "namespace": "default",
            "annotations": {"kubetaint.io/run-seconds": "1", "kubetaint.io/exit-code": "1"},
        },
        "spec": {**POD["spec"], "restartPolicy": "OnFailure"},
    }
    cluster.plane.registry.create("pods", failing)
    clock.advance(15)  # starts, exits 1 after 1 s, restarts after the 10 s back-off
    uid = store.get("pods", "default", "job")["metadata"]["uid"]
    assert [(reason, message) for _, reason, message, _ in kubelet_events(store, "job")] == [
        ("Pulling", 'Pulling image "nginx:1.25"'),
        (
            "Pulled",
            'Successfully pulled image "nginx:1.25" in 0s (0s including waiting). Image size: 0 bytes.',
        ),
        ("Created", "Container created"),
        ("Started", "Container started"),
        ("BackOff", f"Back-off restarting failed container c in pod job_default({uid})"),
        ("Pulled", 'Container image "nginx:1.25" already present on machine and can be accessed by the pod'),
    ]
    # the restart's Created and Started repeat the first ones: counted on them, as the correlator
    # does; the restarted container fails again a second later: a second BackOff
    counts = {
        e["reason"]: e["count"]
        for e in store.list("events", namespace="default").items
        if e["source"].get("component") == "kubelet"
    }
    assert (counts["Created"], counts["Started"], counts["BackOff"]) == (2, 2, 2)
    cluster.stop()
