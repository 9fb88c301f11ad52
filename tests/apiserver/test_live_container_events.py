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
        if e["involvedObject"]["name"] == pod and e["source"]["component"] == "kubelet"
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
