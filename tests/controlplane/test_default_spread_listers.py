"""The control plane (`up`, simulate, whatif) gives the scheduler the cluster's Services and
StatefulSets, so PodTopologySpread's default selector merges their selectors as upstream's
helper.DefaultSelector does."""

from __future__ import annotations

from kubetaint.clock import VirtualClock
from kubetaint.controlplane import ControlPlane
from kubetaint.scheduler.plugins.default_selector import default_selector
from kubetaint.store.memory import MemoryStore

from .builders import pod


def test_services_and_stateful_sets_reach_the_default_selector() -> None:
    clock = VirtualClock()
    store = MemoryStore(clock)
    plane = ControlPlane(store, clock, seed=1)
    plane.ensure_system_namespaces()
    plane.start()
    plane.registry.create(
        "services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "protocol": "TCP"}]},
        },
    )
    plane.registry.create(
        "statefulsets.apps",
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {
                "serviceName": "web",
                "selector": {"matchLabels": {"role": "db"}},
                "template": {
                    "metadata": {"labels": {"role": "db", "app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "x"}]},
                },
            },
        },
    )
    clock.advance(1)
    scheduler = plane.scheduler_host.scheduler
    p = pod("db-0")
    p["metadata"]["labels"] = {"app": "web", "role": "db"}
    p["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "u", "controller": True}
    ]
    assert set(default_selector(p, scheduler).requirements) == {
        ("app", "=", ("web",)),
        ("role", "=", ("db",)),
    }
    plane.registry.delete("services", "default", "web")
    clock.advance(1)
    assert set(default_selector(p, scheduler).requirements) == {("role", "=", ("db",))}
