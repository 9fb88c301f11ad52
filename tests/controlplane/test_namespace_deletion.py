"""Deleting a namespace on the whole control plane (virtual clock, memory store, graceful pod
deletion as `kubetaint up` runs it): the namespace goes Terminating, the namespace controller
deletes its Deployment, ReplicaSet and pods (pods first, gracefully: their kubelets stop them),
sets upstream's conditions, and finalizes it once nothing is left; an object held by a finalizer
keeps the namespace, with upstream's conditions saying why."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.controlplane import ControlPlane
from kubetaint.store.memory import MemoryStore

from .builders import node

JSON = dict[str, Any]


def graceful_plane() -> tuple[ControlPlane, VirtualClock]:
    clock = VirtualClock()
    cp = ControlPlane(MemoryStore(clock), clock, seed=1, graceful_deletion=True)
    cp.fleet.add(node("n1"))
    cp.start()
    return cp, clock


def deployment(namespace: str, replicas: int) -> JSON:
    labels = {"app": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]
                },
            },
        },
    }


def namespaced(cp: ControlPlane, resource: str, namespace: str) -> list[str]:
    return sorted(o["metadata"]["name"] for o in cp.store.list(resource, namespace=namespace).items)


def conditions(ns: JSON) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in ns["status"].get("conditions", [])}


def gone(cp: ControlPlane, name: str) -> bool:
    try:
        cp.store.get("namespaces", "", name)
    except StatusError as err:
        return err.code == 404
    return False


def test_deleting_a_namespace_removes_its_workloads_gracefully_and_then_the_namespace() -> None:
    cp, clock = graceful_plane()
    cp.registry.create(
        "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
    )
    cp.registry.create("deployments.apps", deployment("team-a", 3))
    clock.advance(5)
    pods = cp.store.list("pods", namespace="team-a").items
    assert len(pods) == 3 and all(p["spec"].get("nodeName") == "n1" for p in pods)

    marked = cp.registry.delete("namespaces", "", "team-a")
    assert marked["status"]["phase"] == "Terminating" and marked["metadata"]["deletionTimestamp"]
    assert marked["spec"]["finalizers"] == ["kubernetes"]
    clock.advance(0)
    # pods first, gracefully; the Deployment and ReplicaSet wait for them
    pods = cp.store.list("pods", namespace="team-a").items
    assert all(p["metadata"].get("deletionTimestamp") for p in pods)
    assert namespaced(cp, "deployments.apps", "team-a") == ["web"]
    with pytest.raises(StatusError) as refused:
        cp.registry.create("configmaps", {"metadata": {"name": "late", "namespace": "team-a"}})
    assert refused.value.message == (
        'configmaps "late" is forbidden: unable to create new content in namespace team-a because it is being terminated'
    )
    clock.advance(1)
    assert namespaced(cp, "pods", "team-a") == []  # the kubelet stopped them
    clock.advance(60)
    assert gone(cp, "team-a")
    for resource in ("pods", "replicasets.apps", "deployments.apps", "serviceaccounts"):
        assert namespaced(cp, resource, "team-a") == [], resource


def test_the_namespace_waits_for_an_object_held_by_a_finalizer_and_says_so() -> None:
    cp, clock = graceful_plane()
    cp.registry.create(
        "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b"}}
    )
    held = {"metadata": {"name": "held", "namespace": "team-b", "finalizers": ["example.com/hold"]}}
    cp.registry.create("configmaps", held)
    cp.registry.delete("namespaces", "", "team-b")
    clock.advance(1)
    ns = cp.store.get("namespaces", "", "team-b")
    assert ns["status"]["phase"] == "Terminating"
    assert conditions(ns) == {
        "NamespaceDeletionDiscoveryFailure": (
            "False",
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        "NamespaceDeletionGroupVersionParsingFailure": (
            "False",
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
        "NamespaceDeletionContentFailure": (
            "False",
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization",
        ),
        "NamespaceContentRemaining": (
            "True",
            "SomeResourcesRemain",
            "Some resources are remaining: configmaps. has 1 resource instances",
        ),
        "NamespaceFinalizersRemaining": (
            "True",
            "SomeFinalizersRemain",
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
        ),
    }
    clock.advance(60)
    assert not gone(cp, "team-b")
    current = cp.store.get("configmaps", "team-b", "held")
    cp.registry.update("configmaps", {**current, "metadata": {**current["metadata"], "finalizers": []}})
    clock.advance(10)  # requeued after 15/2 + 1 seconds
    assert gone(cp, "team-b")


def test_a_second_delete_returns_the_terminating_namespace() -> None:
    cp, _ = graceful_plane()
    cp.registry.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "c"}})
    cp.registry.create(
        "configmaps", {"metadata": {"name": "held", "namespace": "c", "finalizers": ["x.io/y"]}}
    )
    first = cp.registry.delete("namespaces", "", "c")
    second = cp.registry.delete("namespaces", "", "c")
    assert second["metadata"]["deletionTimestamp"] == first["metadata"]["deletionTimestamp"]
    assert second["spec"]["finalizers"] == ["kubernetes"]


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
def test_immortal_namespaces_cannot_be_deleted(name: str) -> None:
    cp, _ = graceful_plane()
    with pytest.raises(StatusError) as refused:
        cp.registry.delete("namespaces", "", name)
    assert (refused.value.code, refused.value.message) == (
        403,
        f'namespaces "{name}" is forbidden: this namespace may not be deleted',
    )


def test_a_pod_in_a_missing_namespace_is_refused() -> None:
    cp, _ = graceful_plane()
    pod = {
        "metadata": {"name": "x", "namespace": "missing"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    with pytest.raises(StatusError) as refused:
        cp.registry.create("pods", pod)
    assert (refused.value.code, refused.value.message) == (404, 'namespaces "missing" not found')
