"""On `kubetaint up`'s cluster the in-process components' writes carry their field managers'
managedFields entries as on a real cluster: kube-controller-manager on the ReplicaSets and pods
it creates and their status, kubelet on its Node, Lease and pods' status, kube-scheduler on an
unschedulable pod's status (a binding records nothing), kube-apiserver on the system
namespaces; the simulator's control plane records none."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kubetaint.apiserver.live import LiveCluster
from kubetaint.clock import VirtualClock
from kubetaint.controlplane import ControlPlane
from kubetaint.core.fieldmanager import manager as fm
from kubetaint.store.memory import MemoryStore

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    },
}
TOO_BIG = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "big", "namespace": "default"},
    "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1000"}}}]},
}


def as_kubectl(obj: dict, manager: str) -> dict:
    """`obj` as kubectl's create leaves it (the handler's field manager)."""
    return fm.update(None, obj, fm.Request(manager, obj["apiVersion"], "", "2026-01-01T00:00:00Z"))


@pytest.fixture(scope="module")
def cluster() -> Iterator[LiveCluster]:
    clock = VirtualClock()
    cluster = LiveCluster(MemoryStore(clock), clock, workers=2, seed=1, server_address="http://127.0.0.1:1")
    cluster.start()
    clock.advance(1)
    cluster.plane.registry.create("deployments.apps", as_kubectl(DEPLOYMENT, "kubectl-create"))
    cluster.plane.registry.create("pods", as_kubectl(TOO_BIG, "kubectl-run"))
    clock.advance(60)
    yield cluster
    cluster.stop()


def managers(obj: dict) -> list[tuple[str, str, str]]:
    return [
        (e["manager"], e["operation"], e.get("subresource", "")) for e in obj["metadata"]["managedFields"]
    ]


def owned(obj: dict, manager: str, subresource: str = "") -> dict:
    return next(
        e["fieldsV1"]
        for e in obj["metadata"]["managedFields"]
        if e["manager"] == manager and e.get("subresource", "") == subresource
    )


def test_a_replicasets_pods_carry_the_controller_manager_and_the_kubelet(cluster: LiveCluster) -> None:
    pods = [
        p for p in cluster.store.list("pods", namespace="default").items if p["metadata"]["name"] != "big"
    ]
    assert len(pods) == 2
    for pod in pods:
        assert pod["status"]["phase"] == "Running"
        assert managers(pod) == [("kube-controller-manager", "Update", ""), ("kubelet", "Update", "status")]
        assert "f:ownerReferences" in owned(pod, "kube-controller-manager")["f:metadata"]
        assert "f:nodeName" not in owned(pod, "kube-controller-manager")["f:spec"]  # bound: no entry
        kubelet = owned(pod, "kubelet", "status")["f:status"]
        assert {"f:phase", "f:podIP", "f:conditions"} <= set(kubelet)


def test_the_deployment_and_its_replicaset_carry_the_controller_manager(cluster: LiveCluster) -> None:
    deployment = cluster.store.get("deployments.apps", "default", "web")
    assert managers(deployment) == [
        ("kubectl-create", "Update", ""),
        ("kube-controller-manager", "Update", ""),
        ("kube-controller-manager", "Update", "status"),
    ]
    (replica_set,) = cluster.store.list("replicasets.apps", namespace="default").items
    assert managers(replica_set) == [
        ("kube-controller-manager", "Update", ""),
        ("kube-controller-manager", "Update", "status"),
    ]
    assert "f:replicas" in owned(replica_set, "kube-controller-manager")["f:spec"]


def test_an_unschedulable_pod_carries_the_schedulers_pod_scheduled_condition(cluster: LiveCluster) -> None:
    pod = cluster.store.get("pods", "default", "big")
    assert managers(pod) == [("kubectl-run", "Update", ""), ("kube-scheduler", "Update", "status")]
    conditions = owned(pod, "kube-scheduler", "status")["f:status"]["f:conditions"]
    assert 'k:{"type":"PodScheduled"}' in conditions


def test_a_kubelet_owns_its_node_its_node_status_and_its_lease(cluster: LiveCluster) -> None:
    node = cluster.store.get("nodes", "", "node-1")
    assert managers(node) == [("kubelet", "Update", ""), ("kubelet", "Update", "status")]
    assert "f:conditions" in owned(node, "kubelet", "status")["f:status"]
    lease = cluster.store.get("leases.coordination.k8s.io", "kube-node-lease", "node-1")
    assert managers(lease) == [("kubelet", "Update", "")]
    assert "f:renewTime" in owned(lease, "kubelet")["f:spec"]


def test_the_system_namespaces_carry_kube_apiservers_name_label(cluster: LiveCluster) -> None:
    for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
        namespace = cluster.store.get("namespaces", "", name)
        assert managers(namespace) == [("kube-apiserver", "Update", "")]
        assert owned(namespace, "kube-apiserver") == {
            "f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}
        }


def test_the_simulators_control_plane_records_no_managed_fields() -> None:
    clock = VirtualClock()
    store = MemoryStore(clock)
    plane = ControlPlane(store, clock, seed=1)
    plane.start()
    plane.fleet.add({"metadata": {"name": "node-1"}})
    plane.registry.create("deployments.apps", DEPLOYMENT)
    clock.advance(30)
    written = [
        *store.list("pods").items,
        *store.list("replicasets.apps").items,
        *store.list("nodes").items,
        *store.list("namespaces").items,
    ]
    assert len(written) > 4
    assert all("managedFields" not in obj["metadata"] for obj in written)
    plane.stop()


def test_kube_apiservers_own_objects_carry_its_entry(cluster: LiveCluster) -> None:
    service = cluster.store.get("services", "default", "kubernetes")
    assert managers(service) == [("kube-apiserver", "Update", "")]
    spec = owned(service, "kube-apiserver")["f:spec"]
    assert "f:clusterIP" in spec
    assert "f:clusterIPs" not in spec  # the service REST's allocation: owned by no one
    for resource in ("endpoints", "endpointslices.discovery.k8s.io"):
        assert managers(cluster.store.get(resource, "default", "kubernetes")) == [
            ("kube-apiserver", "Update", "")
        ]
    role = cluster.store.get("clusterroles.rbac.authorization.k8s.io", "", "cluster-admin")
    assert managers(role) == [("kube-apiserver", "Update", "")]
