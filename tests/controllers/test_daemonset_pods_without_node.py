"""A DaemonSet's pods whose target node does not exist: upstream's manage deletes the unscheduled
ones (getUnscheduledPodsWithoutNode, pkg/controller/daemon/daemon_controller.go: the scheduler
can never place them and PodGC never deletes them) and leaves the bound ones to PodGC. Ports
daemon_controller_test.go TestDeleteUnscheduledPodForNotExistingNode."""

from __future__ import annotations

import pytest

from controllers.workload_builders import daemonset, events, make_env, node, owner_ref, pod, pods_of
from kubetaint.controllers.daemonset import DaemonSetController
from kubetaint.controllers.daemonset.placement import target_node_name

NS = "kube-system"
LABELS = {"name": "simple-daemon", "type": "production"}


def affinity_to(node_name: str) -> dict:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


@pytest.mark.parametrize("strategy", ["OnDelete", "RollingUpdate"])
def test_an_unscheduled_pod_for_a_node_that_does_not_exist_is_deleted(strategy: str) -> None:
    clock, store, rng = make_env()
    store.create("nodes", node("node-0"))
    spec = daemonset("foo", LABELS)
    spec["spec"]["updateStrategy"] = {"type": strategy}
    ds = store.create("daemonsets.apps", spec)
    ref = owner_ref(ds, "DaemonSet")
    store.create("pods", pod("pod-node-0", labels=LABELS, node_name="node-0", namespace=NS, owner=ref))
    store.create("pods", pod("pod-node-1", labels=LABELS, node_name="node-1", namespace=NS, owner=ref))
    unscheduled = pod("pod1-node-3", labels=LABELS, namespace=NS, owner=ref, phase="Pending")
    unscheduled["spec"]["affinity"] = affinity_to("node-3")
    store.create("pods", unscheduled)
    DaemonSetController(store, clock, rng).start()
    clock.run_pending()
    names = {p["metadata"]["name"] for p in pods_of(store, NS)}
    assert "pod1-node-3" not in names
    assert "pod-node-1" in names  # bound to a node that does not exist: left to PodGC
    deleted = [e["message"] for e in events(store, "SuccessfulDelete")]
    # the first sync deletes it and creates nothing; a rolling update then replaces node-0's pod
    # of no revision (its own later syncs)
    assert deleted[0] == "Deleted pod: pod1-node-3"
    assert deleted[1:] == ([] if strategy == "OnDelete" else ["Deleted pod: pod-node-0"])


def test_the_unscheduled_pod_of_a_deleted_node_goes_at_the_next_sync() -> None:
    clock, store, rng = make_env()
    store.create("nodes", node("n1"))
    store.create("nodes", node("n2"))
    store.create("daemonsets.apps", daemonset("agent"))
    DaemonSetController(store, clock, rng).start()
    clock.run_pending()
    assert len(pods_of(store, NS)) == 2  # created unscheduled (no scheduler here), one per node
    store.delete("nodes", "", "n2")
    clock.run_pending()
    # upstream's node informer has no delete handler: nothing syncs the DaemonSet yet
    assert len(pods_of(store, NS)) == 2
    store.create("nodes", node("n3"))  # a node added: every DaemonSet syncs
    clock.run_pending()
    assert sorted(target_node_name(p) for p in pods_of(store, NS)) == ["n1", "n3"]
