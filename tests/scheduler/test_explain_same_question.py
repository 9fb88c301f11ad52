"""Pods that ask the scheduler the same question (one template) of an unchanged cluster get the
answer a pod explained alone gets: the verdicts of the cycle's diagnosis, shared among them."""

from __future__ import annotations

from typing import Any

from kubetaint.scheduler.explain import explain


def _node(i: int) -> dict[str, Any]:
    node: dict[str, Any] = {
        "kind": "Node",
        "metadata": {"name": f"node-{i}", "labels": {"zone": "a" if i % 3 == 0 else "b"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }
    if i % 3 == 0:
        node["spec"] = {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}
    return node


def _pod(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
    }


NODES = [_node(i) for i in range(120)]  # more than 100: the search samples nodes


def _without_name(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k not in ("name", "namespace")}


def test_pods_of_one_template_that_fit_nowhere_get_the_verdicts_of_one_explained_alone() -> None:
    alone = explain([*NODES, _pod("huge-0", "64")])["pods"][0]
    many = explain([*NODES, *(_pod(f"huge-{i}", "64") for i in range(4))])["pods"]
    assert [p["name"] for p in many] == [f"huge-{i}" for i in range(4)]
    assert all(_without_name(p) == _without_name(alone) for p in many)
    assert alone["result"] == "Unschedulable"
    assert alone["message"].startswith("0/120 nodes are available: 40 node(s) had untolerated taint(s)")


def test_the_pods_after_a_placed_pod_are_answered_on_the_cluster_with_it() -> None:
    pods = [
        _pod("big-0", "3", nodeSelector={"zone": "b"}),
        *(_pod(f"small-{i}", "2", nodeName="") for i in range(2)),
        _pod("big-1", "3", nodeSelector={"zone": "b"}),
    ]
    one_node = [_node(1), _node(0)]  # node-1 takes one 3-cpu pod; node-0 is tainted
    reports = {p["name"]: p for p in explain([*one_node, *pods])["pods"]}
    assert reports["big-0"]["result"] == "Scheduled"
    assert reports["small-0"]["result"] == "Unschedulable"
    assert reports["small-1"]["nodes"] == reports["small-0"]["nodes"]
    assert reports["big-1"]["result"] == "Unschedulable"
    assert "Insufficient cpu" in reports["big-1"]["message"]
