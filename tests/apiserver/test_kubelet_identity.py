"""The hollow kubelets write as system:node:<name> through the server's authorizer (Node, RBAC)
and NodeRestriction, as real kubelets' requests do: a cluster under Node,RBAC runs as usual, and a
write a real kubelet would be refused is refused with the same 403 and logged (issue 22)."""

from __future__ import annotations

import logging

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.apiserver.kubelet_identity import NodeIdentityStore
from kubetaint.apiserver.live import LiveCluster
from kubetaint.apiserver.security import SecurityConfig
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

NODE_RBAC = SecurityConfig(authorization_mode=("Node", "RBAC"))
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}


@pytest.fixture
def cluster() -> LiveCluster:
    clock = VirtualClock()
    cluster = LiveCluster(
        MemoryStore(clock), clock, workers=2, seed=1, server_address="http://127.0.0.1:1", security=NODE_RBAC
    )
    cluster.start()
    clock.advance(1)
    return cluster


def _ready(node: dict) -> str:
    return next(c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready")


def kubelet_store(cluster: LiveCluster, node: str) -> NodeIdentityStore:
    store = cluster.plane.fleet.pool[node].store
    assert isinstance(store, NodeIdentityStore)
    return store


def test_kubelets_register_renew_and_run_pods_under_node_authorization(cluster: LiveCluster) -> None:
    clock = cluster.clock
    assert isinstance(clock, VirtualClock)
    cluster.plane.registry.create("pods", dict(POD))
    clock.advance(30)
    nodes = {n["metadata"]["name"]: n for n in cluster.store.list("nodes").items}
    assert sorted(nodes) == ["control-plane", "node-1", "node-2"]
    assert all(_ready(n) == "True" for n in nodes.values())
    # the control-plane node carries the role label a kubelet may not set: created as kubeadm does
    assert "node-role.kubernetes.io/control-plane" in nodes["control-plane"]["metadata"]["labels"]
    leases = cluster.store.list("leases.coordination.k8s.io", namespace="kube-node-lease").items
    assert sorted(lease["metadata"]["name"] for lease in leases) == sorted(nodes)
    pod = cluster.store.get("pods", "default", "web")
    assert pod["status"]["phase"] == "Running"
    assert all(kubelet_store(cluster, name).refused == 0 for name in nodes)
    cluster.stop()


@pytest.mark.parametrize(
    ("write", "message"),
    [
        pytest.param(
            lambda c, s: s.update(
                "leases.coordination.k8s.io",
                dict(c.store.get("leases.coordination.k8s.io", "kube-node-lease", "node-2")),
            ),
            'leases.coordination.k8s.io "node-2" is forbidden: User "system:node:node-1" cannot update resource '
            '"leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease": '
            "can only access node lease with the same name as the requesting node",
            id="another node's lease (Node authorizer)",
        ),
        pytest.param(
            lambda c, s: s.update(
                "nodes",
                {
                    **c.store.get("nodes", "", "node-1"),
                    "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
                },
            ),
            'nodes "node-1" is forbidden: node "node-1" is not allowed to modify taints',
            id="its own taints (NodeRestriction)",
        ),
        pytest.param(
            lambda c, s: s.update("nodes", c.store.get("nodes", "", "node-2")),
            'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"',
            id="another node (NodeRestriction)",
        ),
        pytest.param(
            lambda c, s: s.delete("pods", "default", "on-node-2"),
            'pods "on-node-2" is forbidden: node "node-1" can only delete pods with spec.nodeName set to itself',
            id="a pod bound elsewhere (NodeRestriction)",
        ),
        pytest.param(
            lambda c, s: s.update(
                "pods", {**c.store.get("pods", "default", "on-node-2"), "status": {"phase": "Failed"}}
            ),
            'pods "on-node-2" is forbidden: node "node-1" can only update pod status for pods with spec.nodeName '
            "set to itself",
            id="the status of a pod bound elsewhere (NodeRestriction)",
        ),
        pytest.param(
            lambda c, s: s.create(
                "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}
            ),
            'namespaces is forbidden: User "system:node:node-1" cannot create resource "namespaces" in API group "" '
            "at the cluster scope",
            id="anything outside a node's rules",
        ),
    ],
)
def test_a_refused_kubelet_write_is_the_403_and_is_logged(
    cluster: LiveCluster, write, message: str, caplog: pytest.LogCaptureFixture
) -> None:
    pod = {
        **POD,
        "metadata": {"name": "on-node-2", "namespace": "default"},
        "spec": {**POD["spec"], "nodeName": "node-2"},
    }
    cluster.plane.registry.create("pods", pod)
    store = kubelet_store(cluster, "node-1")
    with caplog.at_level(logging.WARNING), pytest.raises(StatusError) as err:
        write(cluster, store)
    assert (err.value.code, err.value.message) == (403, message)
    assert store.refused == 1
    assert f"kubelet node-1: write refused: {message}" in caplog.text
    cluster.stop()


def test_a_kubelet_that_would_set_restricted_labels_is_refused_visibly(
    cluster: LiveCluster, caplog: pytest.LogCaptureFixture
) -> None:
    manifest = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-9", "labels": {"node-role.kubernetes.io/worker": ""}},
    }
    with caplog.at_level(logging.WARNING):
        cluster.plane.fleet.add(manifest)
    assert (
        'node "node-9" is not allowed to set the following labels: node-role.kubernetes.io/worker'
        in caplog.text
    )
    assert "registration failed" in caplog.text
    with pytest.raises(StatusError):
        cluster.store.get("nodes", "", "node-9")
    cluster.stop()


def test_a_restarted_cluster_keeps_its_kubelets_registered(cluster: LiveCluster) -> None:
    cluster.stop()
    clock = cluster.clock
    assert isinstance(clock, VirtualClock)
    again = LiveCluster(
        cluster.store, clock, workers=2, seed=2, server_address="http://127.0.0.1:1", security=NODE_RBAC
    )
    assert again.start() == []
    clock.advance(30)
    assert all(kubelet_store(again, name).refused == 0 for name in ("control-plane", "node-1", "node-2"))
    node = again.store.get("nodes", "", "control-plane")
    assert "node-role.kubernetes.io/control-plane" in node["metadata"]["labels"]
    assert _ready(node) == "True"
    again.stop()


def test_a_repeated_refusal_is_logged_the_1st_10th_and_100th_time(
    cluster: LiveCluster, caplog: pytest.LogCaptureFixture
) -> None:
    store = kubelet_store(cluster, "node-1")
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}
    with caplog.at_level(logging.WARNING):
        for _ in range(100):
            with pytest.raises(StatusError):
                store.create("namespaces", dict(namespace))
    refusals = [r.getMessage() for r in caplog.records if "write refused" in r.getMessage()]
    assert len(refusals) == 3
    assert refusals[0].startswith("kubelet node-1: write refused: namespaces is forbidden: ")
    assert refusals[1].startswith("kubelet node-1: write refused (10 times): namespaces is forbidden: ")
    assert refusals[2].startswith("kubelet node-1: write refused (100 times): namespaces is forbidden: ")
    assert store.refused == 100
    cluster.stop()


def test_a_kubelet_registering_its_node_records_the_kubelet_field_manager(cluster: LiveCluster) -> None:
    node = cluster.store.get("nodes", "", "node-1")
    entry, status = node["metadata"]["managedFields"]  # the registration, then its status posts
    assert (entry["manager"], entry["operation"], entry["apiVersion"]) == ("kubelet", "Update", "v1")
    assert (status["manager"], status["subresource"]) == ("kubelet", "status")
    assert "f:labels" in entry["fieldsV1"]["f:metadata"]


def test_the_control_plane_node_carries_the_kubelet_and_kubeadm_entries(cluster: LiveCluster) -> None:
    node = cluster.store.get("nodes", "", "control-plane")
    owners = {
        e["manager"]: e["fieldsV1"] for e in node["metadata"]["managedFields"] if "subresource" not in e
    }
    # (node lifecycle took the not-ready taint off: kube-controller-manager owns the taints, as on
    # a kubeadm cluster)
    assert sorted(owners) == ["kube-controller-manager", "kubeadm", "kubelet"]
    assert owners["kube-controller-manager"] == {"f:spec": {"f:taints": {}}}
    assert "f:status" not in owners["kubelet"]
    assert "f:node-role.kubernetes.io/control-plane" in owners["kubeadm"]["f:metadata"]["f:labels"]
    assert "f:node-role.kubernetes.io/control-plane" not in owners["kubelet"]["f:metadata"]["f:labels"]
