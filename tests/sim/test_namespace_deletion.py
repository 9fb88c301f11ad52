"""Namespaces in the simulator: deleting one removes its Deployment, ReplicaSet and pods and then
the namespace (the namespace controller runs there as in `kubetaint up`), frees the nodes for a
pod waiting in another namespace, and new content in the terminating namespace is refused; the
system namespaces are Active with the kubernetes finalizer, as kube-apiserver creates them, and
cannot be deleted."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.sim.api import Simulation, SimulationError

JSON = dict[str, Any]


def deployment(namespace: str) -> JSON:
    labels = {"app": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{"name": "c", "image": "c", "resources": {"requests": {"cpu": "5"}}}]
                },
            },
        },
    }


def big_pod() -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "c", "resources": {"requests": {"cpu": "5"}}}]},
    }


def simulation() -> Simulation:
    doc = {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "namespaces"},
        "spec": {
            "nodeGroups": [{"name": "n", "count": 2, "zones": ["z"]}],
            "objects": [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}},
                deployment("team-a"),
            ],
        },
    }
    return Simulation(doc)


def names(sim: Simulation, kind: str, namespace: str) -> list[str]:
    return sorted(
        o["metadata"]["name"] for o in sim.objects(kind) if o["metadata"].get("namespace") == namespace
    )


def test_deleting_a_namespace_removes_its_workloads_and_frees_the_nodes() -> None:
    sim = simulation()
    sim.run_until(30)
    assert len(names(sim, "Pod", "team-a")) == 2
    sim.apply(big_pod())
    sim.advance(10)
    assert not sim.cluster.store.get("pods", "default", "big")["spec"].get("nodeName")

    terminating = sim.delete("Namespace", "team-a")
    assert terminating["status"]["phase"] == "Terminating"
    with pytest.raises(SimulationError) as refused:
        sim.apply({**big_pod(), "metadata": {"name": "late", "namespace": "team-a"}})
    assert "unable to create new content in namespace team-a because it is being terminated" in str(
        refused.value
    )
    sim.advance(60)
    assert [
        o["metadata"]["name"] for o in sim.objects("Namespace") if o["metadata"]["name"] == "team-a"
    ] == []
    for kind in ("Pod", "ReplicaSet", "Deployment"):
        assert names(sim, kind, "team-a") == [], kind
    assert sim.cluster.store.get("pods", "default", "big")["spec"].get("nodeName")


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
def test_the_system_namespaces_cannot_be_deleted(name: str) -> None:
    sim = simulation()
    with pytest.raises(SimulationError) as refused:
        sim.delete("Namespace", name)
    assert str(refused.value) == f'namespaces "{name}" is forbidden: this namespace may not be deleted'


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public", "kube-node-lease"])
def test_the_system_namespaces_are_active_with_the_kubernetes_finalizer(name: str) -> None:
    namespace = next(o for o in simulation().objects("Namespace") if o["metadata"]["name"] == name)
    assert namespace["spec"] == {"finalizers": ["kubernetes"]}
    assert namespace["status"] == {"phase": "Active"}
    assert namespace["metadata"]["labels"] == {"kubernetes.io/metadata.name": name}
