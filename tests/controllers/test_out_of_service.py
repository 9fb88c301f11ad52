"""Non-graceful node shutdown: the out-of-service taint's NoExecute effect evicts the pods through
the taint eviction controller (the pod GC force-deletes those stuck terminating:
test_workloads_podgc.py)."""

from __future__ import annotations

from kubetaint.controllers.tainteviction import TaintEvictionController

from .builders import Cluster, condition, node, pod, taint

OOS = "node.kubernetes.io/out-of-service"


def test_the_no_execute_effect_evicts_running_pods_at_once() -> None:
    c = Cluster()
    c.create("nodes", node("down", conditions=[condition("Ready", "Unknown", c.stamp(0))]))
    c.create("pods", pod("web", "down"))
    TaintEvictionController(c.store, c.clock).start()
    c.run_until(5)
    c.set_node_taints("down", [taint(OOS, "nodeshutdown", "NoExecute")])
    c.run_until(6)
    assert c.deletions() == [(5.0, "web")]
