"""test/e2e/node/taints.go, NoExecuteTaintManager Single Pod and Multiple Pods, ported with
their assertions against a virtual-clock `kubetaint up`: every timer of the tests runs on the
cluster's clock (e2e_framework.Framework.wait), so the minute-long waits take seconds."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

import pytest

from ..harness import UpServer
from .e2e_framework import Framework, get_test_taint

KUBELET_POD_DELETION_DELAY_SECONDS = 60
ADDITIONAL_WAIT_PER_DELETE_SECONDS = 5
TEST_FINALIZER = "example.com/test-finalizer"


def create_pod_for_taints_test(
    has_toleration: bool, toleration_seconds: int, pod_name: str, pod_label: str, ns: str
) -> dict[str, Any]:
    """createPodForTaintsTest"""
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name,
            "namespace": ns,
            "labels": {"group": pod_label},
            "deletionGracePeriodSeconds": 1,
        },
        "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}]},
    }
    if not has_toleration:
        return pod
    toleration: dict[str, Any] = {
        "key": "kubernetes.io/e2e-evict-taint-key",
        "value": "evictTaintVal",
        "effect": "NoExecute",
    }
    if toleration_seconds > 0:
        toleration["tolerationSeconds"] = toleration_seconds
    pod["spec"]["tolerations"] = [toleration]
    return pod


@pytest.fixture(scope="module")
def api_client(virtual_cluster: UpServer) -> Iterator[Any]:
    from kubernetes import config

    client = config.new_client_from_config(config_file=str(virtual_cluster.kubeconfig))
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def single_pod(virtual_cluster: UpServer, api_client: Any) -> Framework:
    f = Framework(virtual_cluster, api_client, "taint-single-pod")
    f.wait_for_total_healthy()
    return f


@pytest.fixture
def multiple_pods(virtual_cluster: UpServer, api_client: Any) -> Framework:
    f = Framework(virtual_cluster, api_client, "taint-multiple-pods")
    f.wait_for_total_healthy()
    return f


def _deleted(observed: queue.Queue[str]) -> str | None:
    try:
        return observed.get_nowait()
    except queue.Empty:
        return None


class Deletions:
    """The informer's channel: `seen()` takes the next deletion it observed, if any."""

    def __init__(self, observed: queue.Queue[str]) -> None:
        self.observed = observed
        self.names: list[str] = []

    def seen(self) -> bool:
        name = _deleted(self.observed)
        if name is None:
            return False
        self.names.append(name)
        return True


# NoExecuteTaintManager Single Pod [Serial] ------------------------------------------------


def test_evicts_pods_from_tainted_nodes(single_pod: Framework) -> None:
    f, ns = single_pod, single_pod.namespace
    pod_name = "taint-eviction-1"
    pod = create_pod_for_taints_test(False, 0, pod_name, pod_name, ns)
    with f.deletions(pod_name) as observed:
        node_name = f.run_pod_and_get_node_name(pod)
        test_taint = get_test_taint(f.server)
        f.add_or_update_taint_on_node(node_name, test_taint)
        f.expect_node_has_taint(node_name, test_taint)
        try:
            # Waiting for Pod to be deleted
            seen = f.wait(
                KUBELET_POD_DELETION_DELAY_SECONDS + ADDITIONAL_WAIT_PER_DELETE_SECONDS,
                Deletions(observed).seen,
            )
            assert seen, "Failed to evict Pod"
        finally:
            f.remove_taint_off_node(node_name, test_taint)


def test_doesnt_evict_pod_with_tolerations_from_tainted_nodes(single_pod: Framework) -> None:
    f, ns = single_pod, single_pod.namespace
    pod_name = "taint-eviction-2"
    pod = create_pod_for_taints_test(True, 0, pod_name, pod_name, ns)
    with f.deletions(pod_name) as observed:
        node_name = f.run_pod_and_get_node_name(pod)
        test_taint = get_test_taint(f.server)
        f.add_or_update_taint_on_node(node_name, test_taint)
        f.expect_node_has_taint(node_name, test_taint)
        try:
            seen = f.wait(
                KUBELET_POD_DELETION_DELAY_SECONDS + ADDITIONAL_WAIT_PER_DELETE_SECONDS,
                Deletions(observed).seen,
            )
            assert not seen, "Pod was evicted despite toleration"
        finally:
            f.remove_taint_off_node(node_name, test_taint)


def test_eventually_evict_pod_with_finite_tolerations_from_tainted_nodes(single_pod: Framework) -> None:
    f, ns = single_pod, single_pod.namespace
    pod_name = "taint-eviction-3"
    pod = create_pod_for_taints_test(
        True,
        KUBELET_POD_DELETION_DELAY_SECONDS + 2 * ADDITIONAL_WAIT_PER_DELETE_SECONDS,
        pod_name,
        pod_name,
        ns,
    )
    with f.deletions(pod_name) as observed:
        node_name = f.run_pod_and_get_node_name(pod)
        test_taint = get_test_taint(f.server)
        f.add_or_update_taint_on_node(node_name, test_taint)
        f.expect_node_has_taint(node_name, test_taint)
        try:
            deletions = Deletions(observed)
            # Waiting to see if a Pod won't be deleted
            wait = KUBELET_POD_DELETION_DELAY_SECONDS + ADDITIONAL_WAIT_PER_DELETE_SECONDS
            assert not f.wait(wait, deletions.seen), "Pod was evicted despite toleration"
            # Waiting for Pod to be deleted
            assert f.wait(wait, deletions.seen), "Pod wasn't evicted"
        finally:
            f.remove_taint_off_node(node_name, test_taint)


def test_removing_taint_cancels_eviction(single_pod: Framework) -> None:
    f, ns = single_pod, single_pod.namespace
    pod_name = "taint-eviction-4"
    pod = create_pod_for_taints_test(True, 2 * ADDITIONAL_WAIT_PER_DELETE_SECONDS, pod_name, pod_name, ns)
    with f.deletions(pod_name) as observed:
        # 1. Run a pod with short toleration
        node_name = f.run_pod_and_get_node_name(pod)
        # 2. Taint the node running this pod with a no-execute taint
        test_taint = get_test_taint(f.server)
        f.add_or_update_taint_on_node(node_name, test_taint)
        f.expect_node_has_taint(node_name, test_taint)
        taint_removed = False
        try:
            deletions = Deletions(observed)
            # 3. Wait some time: upstream's timer is time.NewTimer(additionalWaitPerDeleteSeconds),
            # a Duration of 5 (nanoseconds)
            assert not f.wait(ADDITIONAL_WAIT_PER_DELETE_SECONDS * 1e-9, deletions.seen), (
                "Pod was evicted despite toleration"
            )
            # 4. Remove the taint
            f.remove_taint_off_node(node_name, test_taint)
            taint_removed = True
            # 5. See if Pod won't be evicted.
            wait = KUBELET_POD_DELETION_DELAY_SECONDS + 3 * ADDITIONAL_WAIT_PER_DELETE_SECONDS
            assert not f.wait(wait, deletions.seen), "Pod was evicted despite toleration"
        finally:
            if not taint_removed:
                f.remove_taint_off_node(node_name, test_taint)


def test_pods_evicted_from_tainted_nodes_have_pod_disruption_condition(single_pod: Framework) -> None:
    f, ns = single_pod, single_pod.namespace
    pod_name = "taint-eviction-pod-disruption"
    pod = create_pod_for_taints_test(False, 0, pod_name, pod_name, ns)
    pod["metadata"]["finalizers"] = [TEST_FINALIZER]
    node_name = f.run_pod_and_get_node_name(pod)
    test_taint = get_test_taint(f.server)
    try:
        f.add_or_update_taint_on_node(node_name, test_taint)
        f.expect_node_has_taint(node_name, test_taint)
        # Waiting for Pod to be terminating
        timeout = KUBELET_POD_DELETION_DELAY_SECONDS + 3 * ADDITIONAL_WAIT_PER_DELETE_SECONDS

        def terminating() -> bool:
            return f.cs.read_namespaced_pod(pod_name, ns).metadata.deletion_timestamp is not None

        assert f.wait(timeout, terminating), "the pod did not become terminating"
        # Verifying the pod has the pod disruption condition
        conditions = f.cs.read_namespaced_pod(pod_name, ns).status.conditions or []
        assert any(c.type == "DisruptionTarget" for c in conditions), conditions
    finally:
        f.remove_taint_off_node(node_name, test_taint)
        f.cs.patch_namespaced_pod(pod_name, ns, [{"op": "remove", "path": "/metadata/finalizers"}])


# NoExecuteTaintManager Multiple Pods [Serial] ---------------------------------------------


def test_only_evicts_pods_without_tolerations_from_tainted_nodes(multiple_pods: Framework) -> None:
    f, ns = multiple_pods, multiple_pods.namespace
    pod_group = "taint-eviction-a"
    with f.deletions(pod_group) as observed:
        pod1 = create_pod_for_taints_test(False, 0, pod_group + "1", pod_group, ns)
        pod2 = create_pod_for_taints_test(True, 0, pod_group + "2", pod_group, ns)
        node_name1 = f.run_pod_and_get_node_name(pod1)
        node_name2 = f.run_pod_and_get_node_name(pod2)
        test_taint = get_test_taint(f.server)
        f.add_or_update_taint_on_node(node_name1, test_taint)
        f.expect_node_has_taint(node_name1, test_taint)
        if node_name2 != node_name1:
            f.add_or_update_taint_on_node(node_name2, test_taint)
            f.expect_node_has_taint(node_name2, test_taint)
        try:
            # Waiting for Pod1 to be deleted: the whole timer runs (a second eviction fails)
            deletions = Deletions(observed)
            f.wait(
                KUBELET_POD_DELETION_DELAY_SECONDS + ADDITIONAL_WAIT_PER_DELETE_SECONDS,
                lambda: deletions.seen() and False,
            )
            assert deletions.names, "Failed to evict Pod1."
            assert pod_group + "2" not in deletions.names, (
                f"Unexepected Pod {pod_group + '2'!r} gets evicted."
            )
            assert len(deletions.names) != 2, "Pod1 is evicted. But unexpected Pod2 also get evicted."
        finally:
            f.remove_taint_off_node(node_name1, test_taint)
            if node_name2 != node_name1:
                f.remove_taint_off_node(node_name2, test_taint)


def test_evicts_pods_with_min_toleration_seconds(multiple_pods: Framework) -> None:
    f, ns = multiple_pods, multiple_pods.namespace
    pod_group = "taint-eviction-b"
    with f.deletions(pod_group) as observed:
        # 1. Run two pods both with toleration; one with tolerationSeconds=5, the other with 25
        pod1 = create_pod_for_taints_test(
            True, ADDITIONAL_WAIT_PER_DELETE_SECONDS, pod_group + "1", pod_group, ns
        )
        pod2 = create_pod_for_taints_test(
            True, 5 * ADDITIONAL_WAIT_PER_DELETE_SECONDS, pod_group + "2", pod_group, ns
        )
        node_name = f.run_pod_and_get_node_name(pod1)
        node = f.cs.read_node(node_name)
        host_name_label = (node.metadata.labels or {}).get("kubernetes.io/hostname")
        assert host_name_label, f"error getting kubernetes.io/hostname label on node {node_name}"
        # ensure pod2 lands on the same node as pod1
        pod2["spec"]["nodeSelector"] = {"kubernetes.io/hostname": host_name_label}
        f.run_pod_and_get_node_name(pod2)
        # Wait for pods to be running state before eviction happens
        f.wait_for_pod_running(pod1["metadata"]["name"])
        f.wait_for_pod_running(pod2["metadata"]["name"])
        # 2. Taint the nodes running those pods with a no-execute taint
        test_taint = get_test_taint(f.server)
        f.add_or_update_taint_on_node(node_name, test_taint)
        f.expect_node_has_taint(node_name, test_taint)
        try:
            # 3. Wait to see if both pods get evicted in between [5, 25] seconds
            deletions = Deletions(observed)

            def both() -> bool:
                deletions.seen()
                return len(deletions.names) == 2

            evicted = f.wait(
                KUBELET_POD_DELETION_DELAY_SECONDS + 10 * ADDITIONAL_WAIT_PER_DELETE_SECONDS, both
            )
            assert evicted, f"Failed to evict all Pods. {2 - len(deletions.names)} pod(s) is not evicted."
        finally:
            f.remove_taint_off_node(node_name, test_taint)
