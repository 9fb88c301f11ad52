"""test/e2e/scheduling/predicates.go, SchedulerPredicates' taint cases ("validates that
taints-tolerations is respected if matching" and "... if not matching"), ported with their
assertions against a virtual-clock `kubetaint up`, with the framework's helpers
(GetReadySchedulableNodes, runPausePod, WaitForSchedulerAfterAction, verifyResult)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ..harness import POLL_TIMEOUT, UpServer
from .e2e_framework import Framework

FOREVER_TEST_TIMEOUT = 30.0  # wait.ForeverTestTimeout


@pytest.fixture(scope="module")
def api_client(virtual_cluster: UpServer) -> Iterator[Any]:
    from kubernetes import config

    client = config.new_client_from_config(config_file=str(virtual_cluster.kubeconfig))
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def f(virtual_cluster: UpServer, api_client: Any) -> Framework:
    framework = Framework(virtual_cluster, api_client, "sched-pred")
    framework.wait_for_total_healthy()
    return framework


def get_ready_schedulable_nodes(f: Framework) -> set[str]:
    """e2enode.GetReadySchedulableNodes: listed with `spec.unschedulable=false`, Ready and
    untainted (NoSchedule/NoExecute)."""
    nodes = f.cs.list_node(field_selector="spec.unschedulable=false").items
    assert nodes, "no schedulable nodes listed with spec.unschedulable=false"
    return {
        n.metadata.name
        for n in nodes
        if any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])
        and not any(t.effect in ("NoSchedule", "NoExecute") for t in n.spec.taints or [])
    }


def pause_pod(
    name: str, *, tolerations: list[dict[str, Any]] | None = None, node_selector: dict[str, str] | None = None
) -> dict[str, Any]:
    """initPausePod"""
    spec: dict[str, Any] = {"containers": [{"name": name, "image": "registry.k8s.io/pause:3.10"}]}
    if tolerations:
        spec["tolerations"] = tolerations
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def get_node_that_can_run_pod_without_toleration(f: Framework) -> str:
    """runPodAndGetNodeName of a pause pod "without-toleration", then deleted at once."""
    node_name = f.run_pod_and_get_node_name(pause_pod("without-toleration"))
    f.cs.delete_namespaced_pod("without-toleration", f.namespace, grace_period_seconds=0)
    return node_name


def add_or_update_label_on_node(f: Framework, node_name: str, key: str, value: str) -> None:
    f.cs.patch_node(node_name, {"metadata": {"labels": {key: value}}})
    assert f.cs.read_node(node_name).metadata.labels.get(key) == value  # ExpectNodeHasLabel


def remove_label_off_node(f: Framework, node_name: str, key: str) -> None:
    f.cs.patch_node(node_name, {"metadata": {"labels": {key: None}}})


def wait_for_pod_not_pending(f: Framework, name: str) -> None:
    def not_pending() -> bool:
        return f.cs.read_namespaced_pod(name, f.namespace).status.phase != "Pending"

    assert f.wait(POLL_TIMEOUT, not_pending), f"pod {name} stayed Pending"


def schedule_success_event(ns: str, pod_name: str) -> Callable[[Any], bool]:
    def predicate(e: Any) -> bool:
        return e.reason == "Scheduled" and (e.message or "").startswith(
            f"Successfully assigned {ns}/{pod_name} to "
        )

    return predicate


def schedule_failure_event(pod_name: str) -> Callable[[Any], bool]:
    def predicate(e: Any) -> bool:
        return e.involved_object.name.startswith(pod_name) and e.reason == "FailedScheduling"

    return predicate


def observe_event_after_action(
    f: Framework, predicate: Callable[[Any], bool], action: Callable[[], None]
) -> bool:
    """observeEventAfterAction: an event added after `action` satisfying `predicate`, within
    wait.ForeverTestTimeout on the cluster's clock."""
    with f.events() as added:
        action()
        seen: list[Any] = []

        def observed() -> bool:
            while not added.empty():
                seen.append(added.get_nowait())
            return any(predicate(e) for e in seen)

        return f.wait(FOREVER_TEST_TIMEOUT, observed)


def wait_for_scheduler_after_action(
    f: Framework, action: Callable[[], None], pod_name: str, expect_success: bool
) -> None:
    predicate = (
        schedule_success_event(f.namespace, pod_name) if expect_success else schedule_failure_event(pod_name)
    )
    observed = observe_event_after_action(f, predicate, action)
    if expect_success:
        assert observed, (
            f"Did not observe success event after performing the supplied action for pod {pod_name}"
        )
    else:
        assert observed, (
            f"Did not observe failed event after performing the supplied action for pod {pod_name}"
        )


def verify_result(
    f: Framework, worker_nodes: set[str], expected_scheduled: int, expected_not_scheduled: int
) -> None:
    """verifyResult with GetPodsScheduled."""
    scheduled, not_scheduled = [], []
    for pod in f.cs.list_namespaced_pod(f.namespace).items:
        node_name = pod.spec.node_name or ""
        condition = next((c for c in pod.status.conditions or [] if c.type == "PodScheduled"), None)
        if node_name and node_name in worker_nodes:
            assert condition is not None
            assert condition.status == "True"
            scheduled.append(pod.metadata.name)
        elif not node_name:
            assert condition is not None
            assert condition.status == "False"
            if condition.reason == "Unschedulable":
                not_scheduled.append(pod.metadata.name)
    assert len(not_scheduled) == expected_not_scheduled, f"Not scheduled Pods: {not_scheduled}"
    assert len(scheduled) == expected_scheduled, f"Scheduled Pods: {scheduled}"


def test_validates_that_taints_tolerations_is_respected_if_matching(f: Framework) -> None:
    get_ready_schedulable_nodes(f)
    node_name = get_node_that_can_run_pod_without_toleration(f)
    # Trying to apply a random taint on the found node.
    test_taint = {
        "key": f"kubernetes.io/e2e-taint-key-{uuid.uuid4()}",
        "value": "testing-taint-value",
        "effect": "NoSchedule",
    }
    f.add_or_update_taint_on_node(node_name, test_taint)
    f.expect_node_has_taint(node_name, test_taint)
    label_key = f"kubernetes.io/e2e-label-key-{uuid.uuid4()}"
    try:
        # Trying to apply a random label on the found node.
        add_or_update_label_on_node(f, node_name, label_key, "testing-label-value")
        # Trying to relaunch the pod, now with tolerations.
        toleration = {k: test_taint[k] for k in ("key", "value", "effect")}
        f.cs.create_namespaced_pod(
            f.namespace,
            pause_pod(
                "with-tolerations", tolerations=[toleration], node_selector={label_key: "testing-label-value"}
            ),
        )
        wait_for_pod_not_pending(f, "with-tolerations")
        deployed = f.cs.read_namespaced_pod("with-tolerations", f.namespace)
        assert deployed.spec.node_name == node_name
    finally:
        remove_label_off_node(f, node_name, label_key)
        f.remove_taint_off_node(node_name, test_taint)


def test_validates_that_taints_tolerations_is_respected_if_not_matching(f: Framework) -> None:
    worker_nodes = get_ready_schedulable_nodes(f)
    node_name = get_node_that_can_run_pod_without_toleration(f)
    test_taint = {
        "key": f"kubernetes.io/e2e-taint-key-{uuid.uuid4()}",
        "value": "testing-taint-value",
        "effect": "NoSchedule",
    }
    f.add_or_update_taint_on_node(node_name, test_taint)
    f.expect_node_has_taint(node_name, test_taint)
    label_key = f"kubernetes.io/e2e-label-key-{uuid.uuid4()}"
    taint_removed = False
    try:
        add_or_update_label_on_node(f, node_name, label_key, "testing-label-value")
        # Trying to relaunch the pod, still no tolerations.
        pod_name = "still-no-tolerations"
        conf = pause_pod(pod_name, node_selector={label_key: "testing-label-value"})
        wait_for_scheduler_after_action(
            f, lambda: f.cs.create_namespaced_pod(f.namespace, conf), pod_name, False
        )
        verify_result(f, worker_nodes, 0, 1)

        # Removing taint off the node
        def remove_taint() -> None:
            nonlocal taint_removed
            f.remove_taint_off_node(node_name, test_taint)
            taint_removed = True

        wait_for_scheduler_after_action(f, remove_taint, pod_name, True)
        verify_result(f, worker_nodes, 1, 0)
    finally:
        remove_label_off_node(f, node_name, label_key)
        if not taint_removed:
            f.remove_taint_off_node(node_name, test_taint)
