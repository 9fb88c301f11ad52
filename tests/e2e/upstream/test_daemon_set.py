"""test/e2e/apps/daemon_set.go, "Daemon set [Serial] should run and stop simple daemon", ported
with its assertions against a virtual-clock `kubetaint up`: the daemon pods run on every node
the DaemonSet should run on (NodeShouldRunDaemonPod: the control plane's NoSchedule taint keeps
them off it), the status counts agree, a deleted daemon pod is revived, and deleting the
DaemonSet (the AfterEach) leaves no daemon pod (checkRunningOnNoNodes)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ..harness import UpServer
from .e2e_framework import Framework

DS_RETRY_TIMEOUT = 5 * 60.0  # dsRetryTimeout
DAEMONSET_NAME_LABEL = "daemonset-name"
DS_NAME = "daemon-set"
IMAGE = "registry.k8s.io/e2e-test-images/agnhost:2.53"


@pytest.fixture(scope="module")
def api_client(virtual_cluster: UpServer) -> Iterator[Any]:
    from kubernetes import config

    client = config.new_client_from_config(config_file=str(virtual_cluster.kubeconfig))
    try:
        yield client
    finally:
        client.close()


def new_daemon_set(name: str, image: str, label: dict[str, str]) -> dict[str, Any]:
    """newDaemonSet"""
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": label},
            "template": {
                "metadata": {"labels": label},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": image,
                            "args": ["serve-hostname"],
                            "ports": [{"containerPort": 9376}],
                        }
                    ]
                },
            },
        },
    }


def _tolerates(tolerations: list[dict[str, Any]], taint: Any) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.effect:
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == taint.key):
            return True
        if t.get("key") == taint.key and t.get("value", "") == (taint.value or ""):
            return True
    return False


def schedulable_nodes(f: Framework, ds: Any) -> list[str]:
    """e2edaemonset.SchedulableNodes: the nodes daemon.NodeShouldRunDaemonPod accepts (no node
    selector here: the NoSchedule/NoExecute taints the pod template with the daemon tolerations
    does not tolerate keep it off a node)."""
    tolerations = [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
    ]
    names = []
    for node in f.cs.list_node().items:
        taints = [t for t in node.spec.taints or [] if t.effect in ("NoSchedule", "NoExecute")]
        if all(_tolerates(tolerations, t) for t in taints):
            names.append(node.metadata.name)
    return names


def _is_pod_available(pod: Any) -> bool:
    """podutil.IsPodAvailable with minReadySeconds 0: Ready."""
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def check_daemon_pod_on_nodes(f: Framework, ds: Any, node_names: list[str]) -> Callable[[], bool]:
    def check() -> bool:
        nodes_to_pod_count: dict[str, int] = {}
        for pod in f.cs.list_namespaced_pod(f.namespace).items:
            owners = pod.metadata.owner_references or []
            if not any(o.controller and o.uid == ds.metadata.uid for o in owners):
                continue
            if pod.metadata.deletion_timestamp is not None:
                continue
            if _is_pod_available(pod):
                nodes_to_pod_count[pod.spec.node_name] = nodes_to_pod_count.get(pod.spec.node_name, 0) + 1
        if any(nodes_to_pod_count.get(name) != 1 for name in node_names):
            return False
        return len(nodes_to_pod_count) == len(node_names)

    return check


def check_running_on_all_nodes(f: Framework, ds: Any) -> Callable[[], bool]:
    def check() -> bool:  # the schedulable nodes as they are at each poll
        return check_daemon_pod_on_nodes(f, ds, schedulable_nodes(f, ds))()

    return check


def check_running_on_no_nodes(f: Framework, ds: Any) -> Callable[[], bool]:
    return check_daemon_pod_on_nodes(f, ds, [])


def check_daemon_status(f: Framework, ds_name: str) -> None:
    """e2edaemonset.CheckDaemonStatus: polls for 30 s until desired, scheduled and ready agree."""
    counts: tuple[int, int, int] = (0, 0, 0)

    def agree() -> bool:
        nonlocal counts
        status = f.apps.read_namespaced_daemon_set(ds_name, f.namespace).status
        counts = (status.desired_number_scheduled, status.current_number_scheduled, status.number_ready)
        return counts[0] == counts[1] == counts[2]

    assert f.wait(30, agree), (
        f"error in daemon status. DesiredScheduled: {counts[0]}, CurrentScheduled: {counts[1]}, Ready: {counts[2]}"
    )


def test_should_run_and_stop_simple_daemon(virtual_cluster: UpServer, api_client: Any) -> None:
    f = Framework(virtual_cluster, api_client, "daemonsets")
    label = {DAEMONSET_NAME_LABEL: DS_NAME}
    # Creating simple DaemonSet "daemon-set"
    ds = f.apps.create_namespaced_daemon_set(f.namespace, new_daemon_set(DS_NAME, IMAGE, label))
    try:
        # Check that daemon pods launch on every node of the cluster.
        assert f.wait(DS_RETRY_TIMEOUT, check_running_on_all_nodes(f, ds)), (
            "error waiting for daemon pod to start"
        )
        assert (
            len(schedulable_nodes(f, ds)) == 2
        )  # not vacuous: the two workers, not the tainted control plane
        check_daemon_status(f, DS_NAME)

        # Stop a daemon pod, check that the daemon pod is revived.
        pod = f.cs.list_namespaced_pod(f.namespace, label_selector=f"{DAEMONSET_NAME_LABEL}={DS_NAME}").items[
            0
        ]
        f.cs.delete_namespaced_pod(pod.metadata.name, f.namespace)
        assert f.wait(DS_RETRY_TIMEOUT, check_running_on_all_nodes(f, ds)), (
            "error waiting for daemon pod to revive"
        )
    finally:
        # AfterEach: delete the DaemonSet and wait for its pods to go
        f.apps.delete_namespaced_daemon_set(DS_NAME, f.namespace, propagation_policy="Background")
        no_nodes, selector = check_running_on_no_nodes(f, ds), f"{DAEMONSET_NAME_LABEL}={DS_NAME}"
        # DeleteResourceAndWaitForGC, then checkRunningOnNoNodes
        assert f.wait(
            DS_RETRY_TIMEOUT,
            lambda: no_nodes() and not f.cs.list_namespaced_pod(f.namespace, label_selector=selector).items,
        ), "error waiting for daemon pod to be reaped"
