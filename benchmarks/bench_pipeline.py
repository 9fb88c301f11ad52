"""The whole scheduling pipeline as a user runs it: `kubetaint simulate FILE` of a generated scenario
with N nodes (4 CPU, 32Gi, 110 pods, 3 zones) and P unbound pods created at t=0 (100m CPU, 500Mi:
upstream scheduler_perf's SchedulingBasic shape), timed end to end (the CLI process: start-up,
parsing, node registration, scheduling, the timeline printed). Prints pods/s next to a full-scan
Python scheduler run in the same process on the same shape.

Variants: `basic`; `taints` (20 taint classes: node group i has taint class=c<i>, each pod
tolerates one class); `spread` (a zone topology spread constraint on every pod and required
hostname pod anti-affinity on half of them).

    PYTHONPATH=src python benchmarks/bench_pipeline.py                    # 5,000 nodes, 10,000 pods
    PYTHONPATH=src python benchmarks/bench_pipeline.py --nodes 500 --variants basic
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_scheduler import bench_naive, make_nodes, make_pods

ZONES = ["zone-a", "zone-b", "zone-c"]
TAINT_CLASSES = 20
NODE_STATUS = {
    "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
    "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
}


def _pod(i: int, variant: str, rng: random.Random) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "pause",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
            }
        ]
    }
    labels = {"app": f"app-{i % 100}"}
    if variant == "taints":
        cls = rng.randrange(TAINT_CLASSES)
        spec["tolerations"] = [
            {"key": "class", "operator": "Equal", "value": f"c{cls}", "effect": "NoSchedule"}
        ]
    if variant == "spread":
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": labels},
            }
        ]
        if i % 2 == 0:
            spec["affinity"] = {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": labels}}
                    ]
                }
            }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i}", "labels": labels},
        "spec": spec,
    }


def scenario(nodes: int, pods: int, variant: str, until: str) -> dict[str, Any]:
    rng = random.Random(1)
    if variant == "taints":
        per_class = nodes // TAINT_CLASSES
        groups = [
            {
                "name": f"class{c}",
                "count": per_class + (1 if c < nodes % TAINT_CLASSES else 0),
                "zones": ZONES,
                "template": {
                    "spec": {"taints": [{"key": "class", "value": f"c{c}", "effect": "NoSchedule"}]},
                    "status": NODE_STATUS,
                },
            }
            for c in range(TAINT_CLASSES)
        ]
    else:
        groups = [{"name": "node", "count": nodes, "zones": ZONES, "template": {"status": NODE_STATUS}}]
    return {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"pipeline-{variant}-{nodes}-{pods}"},
        "spec": {
            "seed": 1,
            "until": until,
            "nodeGroups": groups,
            "objects": [_pod(i, variant, rng) for i in range(pods)],
        },
    }


def run_simulate(doc: dict[str, Any]) -> tuple[float, float, int, int]:
    """(wall seconds of `kubetaint simulate FILE -o json`, its CPU seconds, pods bound, pods in the
    scenario). On a machine shared with other work the CPU time is the steadier figure."""
    handle, path = tempfile.mkstemp(suffix=".json", prefix="bench-pipeline-")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(doc, out)
    command = [sys.executable, "-m", "kubetaint", "simulate", path, "-o", "json"]
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    finally:
        os.unlink(path)
    if done.returncode != 0:
        raise SystemExit(f"kubetaint simulate failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    result = json.loads(done.stdout)
    bound = sum(1 for r in result["timeline"] if r.get("reason") == "Scheduled")
    return elapsed, cpu, bound, len(doc["spec"]["objects"])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--until", default="2m")
    parser.add_argument("--variants", default="basic,taints,spread")
    parser.add_argument("--naive-pods", type=int, default=200)
    args = parser.parse_args()
    naive_nodes, naive_pods = make_nodes(args.nodes), make_pods(args.naive_pods)
    cpu_started = time.process_time()
    naive = bench_naive(naive_nodes, naive_pods)
    naive_cpu = args.naive_pods / (time.process_time() - cpu_started)
    print(
        f"full-scan baseline, {args.nodes} nodes, {args.naive_pods} pods: {naive:8.0f} pods/s, "
        f"{naive_cpu:6.0f} pods per CPU second",
        flush=True,
    )
    basic_cpu_rate: float | None = None
    for variant in args.variants.split(","):
        doc = scenario(args.nodes, args.pods, variant, args.until)
        elapsed, cpu, bound, total = run_simulate(doc)
        rate, cpu_rate = total / elapsed, total / cpu
        if variant == "basic":
            basic_cpu_rate = cpu_rate
        relative = (
            f", {cpu_rate / basic_cpu_rate:.2f}x basic" if basic_cpu_rate and variant != "basic" else ""
        )
        print(
            f"simulate {variant:6} {args.nodes} nodes, {total} pods ({bound} bound): "
            f"{elapsed:5.1f} s end to end, "
            f"{rate:5.0f} pods/s ({rate / naive:4.1f}x the full scan); {cpu:5.1f} s CPU, "
            f"{cpu_rate:5.0f} pods per CPU second ({cpu_rate / naive_cpu:4.1f}x the full scan){relative}",
            flush=True,
        )


if __name__ == "__main__":
    main()
