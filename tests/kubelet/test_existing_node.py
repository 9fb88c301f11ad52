"""A kubelet registering a Node that already exists (created by kubectl or a scenario manifest)
reconciles it as upstream's tryRegisterWithAPIServer does: updateDefaultLabels sets the well-known
labels to the kubelet's values, updateDefaultResources fills in capacity and allocatable only when
the Node has none; nodeInfo and daemonEndpoints, which its first status sync writes, are filled in
when missing too. Everything else on the Node is left as it is."""

from __future__ import annotations

from typing import Any

import pytest

from kubelet.builders import make_store, node_config
from kubetaint.clock import VirtualClock
from kubetaint.kubelet import HollowNodePool
from kubetaint.kubelet.node_status import initial_node, reconcile_existing_node

JSON = dict[str, Any]
KUBELET_LABELS = {
    "kubernetes.io/hostname": "n1",
    "kubernetes.io/os": "linux",
    "kubernetes.io/arch": "amd64",
    "beta.kubernetes.io/os": "linux",
    "beta.kubernetes.io/arch": "amd64",
    "topology.kubernetes.io/zone": "zone-a",
}
CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}


def existing(labels: dict[str, str] | None = None, status: JSON | None = None) -> JSON:
    node: JSON = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {}}
    if labels is not None:
        node["metadata"]["labels"] = labels
    if status is not None:
        node["status"] = status
    return node


def initial() -> JSON:
    return initial_node(node_config("n1"))


@pytest.mark.parametrize(
    ("node", "labels", "capacity"),
    [
        pytest.param(
            existing(), KUBELET_LABELS, CAPACITY, id="a bare node gets the default labels and capacity"
        ),
        pytest.param(
            existing({"team": "a", "kubernetes.io/hostname": "other"}),
            {"team": "a", **KUBELET_LABELS},
            CAPACITY,
            id="a default label with another value takes the kubelet's, other labels stay",
        ),
        pytest.param(
            existing(status={"capacity": {"cpu": "2", "pods": "10"}, "allocatable": {"cpu": "1"}}),
            KUBELET_LABELS,
            {"cpu": "2", "pods": "10"},
            id="a node that has capacity keeps it",
        ),
        pytest.param(
            existing(status={"capacity": {}, "allocatable": {}}),
            KUBELET_LABELS,
            CAPACITY,
            id="empty capacity counts as none",
        ),
    ],
)
def test_reconcile_existing_node(node: JSON, labels: dict[str, str], capacity: dict[str, str]) -> None:
    reconciled = reconcile_existing_node(initial(), node)
    assert reconciled is not None
    assert reconciled["metadata"]["labels"] == labels
    assert reconciled["status"]["capacity"] == capacity
    assert reconciled["spec"] == node["spec"] and reconciled["metadata"]["name"] == "n1"


def test_allocatable_is_filled_in_separately_from_capacity() -> None:
    node = existing(status={"capacity": {"cpu": "2"}})
    reconciled = reconcile_existing_node(initial(), node)
    assert reconciled is not None
    assert reconciled["status"]["capacity"] == {"cpu": "2"}
    assert reconciled["status"]["allocatable"] == CAPACITY


def test_node_info_and_daemon_endpoints_are_filled_in_only_when_missing() -> None:
    reconciled = reconcile_existing_node(initial(), existing())
    assert reconciled is not None
    assert (
        reconciled["status"]["nodeInfo"]["kubeletVersion"]
        == initial()["status"]["nodeInfo"]["kubeletVersion"]
    )
    assert reconciled["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 10250}}
    real = {"kubeletVersion": "v1.29.3", "osImage": "Ubuntu"}
    kept = reconcile_existing_node(
        initial(), existing(KUBELET_LABELS, status={**initial()["status"], "nodeInfo": real})
    )
    assert kept is None  # a snapshot's node keeps the nodeInfo its real kubelet reported


def test_a_node_the_kubelet_registered_needs_nothing() -> None:
    assert reconcile_existing_node(initial(), initial()) is None


def test_an_empty_default_label_is_removed() -> None:
    init = initial()
    init["metadata"]["labels"]["topology.kubernetes.io/zone"] = ""
    reconciled = reconcile_existing_node(init, existing({"topology.kubernetes.io/zone": "zone-q"}))
    assert reconciled is not None
    assert "topology.kubernetes.io/zone" not in reconciled["metadata"]["labels"]


def test_the_input_node_is_not_changed() -> None:
    node = existing({"team": "a"})
    reconcile_existing_node(initial(), node)
    assert node == existing({"team": "a"})


def test_a_kubelet_adopting_a_bare_node_makes_it_schedulable() -> None:
    clock = VirtualClock()
    store = make_store(clock)
    store.create("nodes", existing({"team": "a"}))
    pool = HollowNodePool(store, clock, [node_config("n1", labels={"team": "a"})])
    pool.start()
    node = store.get("nodes", "", "n1")
    assert node["metadata"]["labels"] == {"team": "a", **KUBELET_LABELS}
    assert node["status"]["capacity"] == CAPACITY and node["status"]["allocatable"] == CAPACITY
    assert node["status"]["nodeInfo"]["kubeletVersion"].startswith("v1.")
    ready = [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert ready == ["True"]


def test_a_kubelet_adopting_a_complete_node_writes_nothing_extra() -> None:
    clock = VirtualClock()
    store = make_store(clock)
    config = node_config("n1")
    store.create("nodes", initial_node(config))
    before = store.current_resource_version()
    HollowNodePool(store, clock, [config]).start()
    # the lease creation and the first status post only
    assert store.current_resource_version() == before + 2
