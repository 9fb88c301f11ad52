"""Preemption's dry run with the pod-aware plugins: removing a victim from a node's copy takes it
out of InterPodAffinity's counts (upstream's PreFilterExtensions RemovePod), so a higher-priority
pod rejected for anti-affinity, its own or a running pod's, nominates the node of the pod it
avoids and names that pod as the victim."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.explain import explain

NODE = {
    "kind": "Node",
    "metadata": {"name": "a1", "labels": {"kubernetes.io/hostname": "a1"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}


def _anti(app: str) -> dict[str, Any]:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }


def _pod(
    name: str, app: str, priority: int, node: str = "", affinity: dict[str, Any] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"priority": priority, "containers": [{"name": "c", "image": "x"}]}
    if node:
        spec["nodeName"] = node
    if affinity:
        spec["affinity"] = affinity
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("running", "incoming", "reason"),
    [
        pytest.param(
            _pod("db", "db", 0, node="a1"),
            _pod("hi", "x", 1000, affinity=_anti("db")),
            "node(s) didn't match pod anti-affinity rules",
            id="the incoming pod's anti-affinity",
        ),
        pytest.param(
            _pod("db", "db", 0, node="a1", affinity=_anti("x")),
            _pod("hi", "x", 1000),
            "node(s) didn't satisfy existing pods anti-affinity rules",
            id="the running pod's anti-affinity",
        ),
    ],
)
def test_a_higher_priority_pod_preempts_the_pod_it_is_kept_apart_from(
    running: dict[str, Any], incoming: dict[str, Any], reason: str
) -> None:
    (report,) = explain([NODE, running, incoming])["pods"]
    assert report["result"] == "Unschedulable"
    assert report["message"].startswith(f"0/1 nodes are available: 1 {reason}.")
    assert (report["nominatedNode"], report["victims"]) == ("a1", ["default/db"])


def test_an_equal_priority_pod_kept_apart_preempts_nothing() -> None:
    (report,) = explain([NODE, _pod("db", "db", 0, node="a1"), _pod("lo", "x", 0, affinity=_anti("db"))])[
        "pods"
    ]
    assert report["result"] == "Unschedulable" and "nominatedNode" not in report
