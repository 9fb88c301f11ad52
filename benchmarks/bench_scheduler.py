"""Scheduler throughput: upstream scheduler_perf "SchedulingBasic" shape, in process.

Nodes as upstream's node-default.yaml (4 CPU, 32Gi, 110 pods), pods as pod-default.yaml (100m CPU,
500Mi). Each bound pod is fed back as an informer update, like a real host. Prints pods/s for
kubetaint at 500 and 5,000 nodes, the 20-taint-class variant, and a naive full-scan baseline.

    PYTHONPATH=src python benchmarks/bench_scheduler.py [--pods 10000] [--naive-pods 200]

With --workloads N it instead measures the simulator's zone-outage shape: 5,000 nodes holding
150,000 bound pods of 1,500 ReplicaSets (listed, then adopted), then N pods of those ReplicaSets
(PodTopologySpread's system default constraints apply) scheduled one at a time, each binding and
a kubelet's status post fed back (timed from the second: the first counts every pod once).
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from kubetaint.clock.virtual import VirtualClock
from kubetaint.core.matching import find_untolerated_taint
from kubetaint.scheduler.resources import node_allocatable, pod_requests
from kubetaint.scheduler.scheduler import Scheduler

ZONES = ("zone-a", "zone-b", "zone-c")


def make_nodes(count: int, taint_classes: int = 0) -> list[dict[str, Any]]:
    nodes = []
    for i in range(count):
        taints = (
            [{"key": "class", "value": f"c{i % taint_classes}", "effect": "NoSchedule"}]
            if taint_classes
            else []
        )
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": f"node-{i}",
                    "labels": {
                        "kubernetes.io/hostname": f"node-{i}",
                        "topology.kubernetes.io/zone": ZONES[i % 3],
                    },
                },
                "spec": {"taints": taints},
                "status": {
                    "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                    "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                },
            }
        )
    return nodes


def make_pods(count: int, taint_classes: int = 0, seed: int = 1) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    pods = []
    for i in range(count):
        tolerations = []
        if taint_classes:
            cls = rng.randrange(taint_classes)
            tolerations = [{"key": "class", "operator": "Equal", "value": f"c{cls}", "effect": "NoSchedule"}]
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{i}", "namespace": "default", "uid": f"uid-{i}"},
                "spec": {
                    "containers": [
                        {
                            "name": "pause",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
                        }
                    ],
                    "tolerations": tolerations,
                },
            }
        )
    return pods


def bench_kubetaint(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> float:
    scheduler = Scheduler(VirtualClock(), random.Random(1))
    for node in nodes:
        scheduler.add_node(node)
    for pod in pods:
        scheduler.add_pod(pod)
    started = time.perf_counter()
    scheduled = 0
    while True:
        result = scheduler.schedule_one()
        if result is None:
            break
        if result.node is not None:
            scheduled += 1
            pod = result.pod
            scheduler.update_pod({**pod, "spec": {**pod["spec"], "nodeName": result.node}})
    elapsed = time.perf_counter() - started
    assert scheduled == len(pods), f"only {scheduled}/{len(pods)} scheduled"
    return len(pods) / elapsed


def bench_naive(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> float:
    """A straightforward full-scan scheduler: every node filtered and scored for every pod."""
    state = [
        {"node": n, "alloc": node_allocatable(n), "used": {"cpu": 0, "memory": 0}, "pods": 0} for n in nodes
    ]
    rng = random.Random(1)
    started = time.perf_counter()
    for pod in pods:
        req = pod_requests(pod)
        best: list[int] = []
        best_score = -1
        for i, s in enumerate(state):
            taints = s["node"]["spec"].get("taints") or []
            if find_untolerated_taint(
                taints, pod["spec"].get("tolerations") or [], effects=("NoSchedule", "NoExecute")
            ):
                continue
            if s["pods"] + 1 > s["alloc"]["pods"]:
                continue
            if any(req.get(r, 0) > s["alloc"].get(r, 0) - s["used"].get(r, 0) for r in ("cpu", "memory")):
                continue
            fractions = [(s["used"][r] + req.get(r, 0)) / s["alloc"][r] for r in ("cpu", "memory")]
            least = sum((1 - f) * 100 for f in fractions) / 2
            balanced = (1 - abs(fractions[0] - fractions[1]) / 2) * 100
            score = int(least) + int(balanced) + 300
            if score > best_score:
                best, best_score = [i], score
            elif score == best_score:
                best.append(i)
        chosen = state[best[rng.randrange(len(best))]]
        chosen["pods"] += 1
        for r in ("cpu", "memory"):
            chosen["used"][r] += req.get(r, 0)
    return len(pods) / (time.perf_counter() - started)


def bench_workloads(count: int, nodes: int = 5000, replica_sets: int = 1500, per_set: int = 100) -> float:
    """Pods/s of `count` ReplicaSet pods over `nodes` nodes holding `replica_sets` x `per_set`
    bound pods of the ReplicaSets (the zone-outage shape; see the module's docstring)."""
    scheduler = Scheduler(VirtualClock(), random.Random(1))
    for node in make_nodes(nodes):
        scheduler.add_node(node)
    spec = {"containers": [{"name": "app", "image": "app", "resources": {"requests": {"cpu": "100m"}}}]}

    def owner(r: int) -> list[dict[str, Any]]:
        return [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": f"app-{r}",
                "uid": f"rs-{r}",
                "controller": True,
            }
        ]

    for r in range(replica_sets):
        meta = {"name": f"app-{r}", "namespace": "default", "uid": f"rs-{r}", "resourceVersion": "1"}
        selector = {"matchLabels": {"app": f"app-{r}"}}
        scheduler.add_replica_set(
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta, "spec": {"selector": selector}}
        )
    bound = []
    for i in range(replica_sets * per_set):
        r = i // per_set
        meta = {
            "name": f"app-{r}-{i % per_set}",
            "namespace": "default",
            "uid": f"u{i}",
            "labels": {"app": f"app-{r}"},
        }
        bound.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta,
                "spec": {**spec, "nodeName": f"node-{i % nodes}"},
                "status": {"phase": "Running"},
            }
        )
    scheduler.pods_changed([("ADDED", None, None, p) for p in bound])
    adopted = []
    for p in bound:
        r = int(p["metadata"]["labels"]["app"][4:])
        adopted.append(
            ("MODIFIED", None, p, {**p, "metadata": {**p["metadata"], "ownerReferences": owner(r)}})
        )
    scheduler.pods_changed(adopted)
    rng = random.Random(1)
    started = time.perf_counter()
    for j in range(-1, count):  # (the clock starts after pod -1: the first counts over every pod)
        if j == 0:
            started = time.perf_counter()
        r = rng.randrange(replica_sets)
        meta = {
            "name": f"new-{j}",
            "namespace": "default",
            "uid": f"n{j}",
            "labels": {"app": f"app-{r}"},
            "ownerReferences": owner(r),
        }
        scheduler.pods_changed(
            [("ADDED", None, None, {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": dict(spec)})]
        )
        for result in scheduler.run():
            assert result.node is not None, result.message
            pod = {**result.pod, "spec": {**result.pod["spec"], "nodeName": result.node}}
            scheduler.pods_changed([("MODIFIED", None, result.pod, pod)])
            running = {**pod, "status": {"phase": "Running", "startTime": "2024-01-01T00:00:00Z"}}
            scheduler.pods_changed([("MODIFIED", None, pod, running)])
    return count / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--naive-pods", type=int, default=200)
    parser.add_argument("--workloads", type=int, default=0, metavar="N")
    args = parser.parse_args()
    if args.workloads:
        rate = bench_workloads(args.workloads)
        print(f"kubetaint  5000 nodes, 150000 ReplicaSet pods, {args.workloads} more: {rate:8.0f} pods/s")
        return
    small = bench_kubetaint(make_nodes(500), make_pods(args.pods))
    print(f"kubetaint   500 nodes, {args.pods} pods:                 {small:8.0f} pods/s")
    large = bench_kubetaint(make_nodes(5000), make_pods(args.pods))
    print(f"kubetaint  5000 nodes, {args.pods} pods:                 {large:8.0f} pods/s")
    tainted = bench_kubetaint(make_nodes(5000, 20), make_pods(args.pods, 20))
    print(
        f"kubetaint  5000 nodes, {args.pods} pods, 20 taint classes: {tainted:6.0f} pods/s "
        f"({tainted / large:.2f}x)"
    )
    naive = bench_naive(make_nodes(5000), make_pods(args.naive_pods))
    print(f"naive full scan 5000 nodes, {args.naive_pods} pods:          {naive:8.0f} pods/s")
    print(f"speed-up over naive: {large / naive:.1f}x")


if __name__ == "__main__":
    main()
