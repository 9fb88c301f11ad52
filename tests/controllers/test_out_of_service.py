"""Non-graceful node shutdown: terminating pods on not-Ready out-of-service nodes are force-deleted
by the pod GC pass every 20 s; the NoExecute effect evicts the rest through the taint eviction
controller."""

from __future__ import annotations

from kubetaint.controllers.nodelifecycle.out_of_service import OutOfServicePodGC, is_out_of_service
from kubetaint.controllers.tainteviction import TaintEvictionController
from kubetaint.store.informer import Informer

from .builders import Cluster, condition, node, pod, taint

OOS = "node.kubernetes.io/out-of-service"


def terminating(name: str, node_name: str, **extra: object) -> dict:
    result = pod(name, node_name)
    result["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    result["status"].update(extra)
    return result


def test_out_of_service_means_not_ready_and_the_key_with_any_value_and_effect() -> None:
    down = [condition("Ready", "Unknown", "2026-01-01T00:00:00Z")]
    up = [condition("Ready", "True", "2026-01-01T00:00:00Z")]
    assert is_out_of_service(node("n", conditions=down, taints=[taint(OOS, "nodeshutdown", "NoExecute")]))
    assert is_out_of_service(node("n", conditions=down, taints=[taint(OOS, "", "NoSchedule")]))
    assert is_out_of_service(node("n", conditions=[], taints=[taint(OOS)])), "no Ready condition is not Ready"
    assert not is_out_of_service(node("n", conditions=up, taints=[taint(OOS)]))
    assert not is_out_of_service(node("n", conditions=down, taints=[taint("other")]))


def test_terminating_pods_are_force_deleted_every_20_seconds() -> None:
    c = Cluster()
    c.create("nodes", node("down", conditions=[condition("Ready", "Unknown", c.stamp(0))]))
    c.create("nodes", node("up", conditions=[condition("Ready", "True", c.stamp(0))]))
    c.create("pods", terminating("stuck", "down"))
    c.create("pods", terminating("fine", "up"))
    c.create("pods", terminating("done", "down", phase="Succeeded"))
    gc = OutOfServicePodGC(c.store, c.clock, pods=Informer(c.store, "pods"), nodes=Informer(c.store, "nodes"))
    gc.start()
    c.run_until(30)
    assert c.deletions() == []
    c.set_node_taints("down", [taint(OOS, "nodeshutdown", "NoExecute")])
    c.run_until(100)
    assert c.deletions() == [(40.0, "done"), (40.0, "stuck")]
    assert c.last_state[("pods", "stuck")]["status"]["phase"] == "Failed"
    assert c.last_state[("pods", "done")]["status"]["phase"] == "Succeeded"
    assert c.pod("fine") is not None


def test_the_no_execute_effect_evicts_running_pods_at_once() -> None:
    c = Cluster()
    c.create("nodes", node("down", conditions=[condition("Ready", "Unknown", c.stamp(0))]))
    c.create("pods", pod("web", "down"))
    TaintEvictionController(c.store, c.clock).start()
    c.run_until(5)
    c.set_node_taints("down", [taint(OOS, "nodeshutdown", "NoExecute")])
    c.run_until(6)
    assert c.deletions() == [(5.0, "web")]
