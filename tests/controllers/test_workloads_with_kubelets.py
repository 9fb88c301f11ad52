"""Workload controllers and hollow kubelets together: evictions and deletions have consequences."""

from __future__ import annotations

import random

from controllers.workload_builders import daemonset, make_env, names, replicaset
from kubetaint.controllers.daemonset import DaemonSetController
from kubetaint.controllers.replicaset import ReplicaSetController
from kubetaint.kubelet import HollowNodePool, NodeConfig


def bind_all(store) -> None:
    """Stand-in for the scheduler: bind pending pods to their DaemonSet node or to n1."""
    for pod in store.list("pods", namespace="").items:
        if pod["spec"].get("nodeName"):
            continue
        terms = (
            ((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            )
            or {}
        ).get("nodeSelectorTerms") or []
        target = terms[0]["matchFields"][0]["values"][0] if terms else "n1"
        store.update("pods", {**pod, "spec": {**pod["spec"], "nodeName": target}})


def test_memory_pressure_eviction_is_replaced_by_the_replicaset() -> None:
    clock, store, rng = make_env()
    pool = HollowNodePool(store, clock, [NodeConfig("n1", internal_ip="10.1.0.1", pod_cidr="10.2.0.0/24")])
    pool.start()
    ReplicaSetController(store, clock, rng).start()
    store.create("replicasets.apps", replicaset("web", 2))
    clock.run_pending()
    bind_all(store)
    clock.run_pending()
    assert sorted(p["status"]["phase"] for p in store.list("pods").items) == ["Running", "Running"]
    pool.fault(["n1"], "memory-pressure")
    clock.run_pending()
    phases = sorted(p.get("status", {}).get("phase", "Pending") for p in store.list("pods").items)
    assert phases == ["Failed", "Pending", "Running"]
    assert store.get("replicasets.apps", "default", "web")["status"]["replicas"] == 2


def test_daemonset_pods_run_on_every_hollow_node_and_are_admitted_despite_noschedule() -> None:
    clock, store, _ = make_env()
    configs = [
        NodeConfig("n1"),
        NodeConfig(
            "n2", register_with_taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
        ),
    ]
    pool = HollowNodePool(store, clock, configs)
    pool.start()
    DaemonSetController(store, clock, random.Random(7)).start()
    store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    bind_all(store)
    clock.run_pending()
    pods = store.list("pods", namespace="kube-system").items
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["n1", "n2"]
    assert {p["status"]["phase"] for p in pods} == {"Running"}
    pool.fault(["n1", "n2"], "stop")
    clock.advance(600)
    assert len(names(store.list("pods", namespace="kube-system").items)) == 2
