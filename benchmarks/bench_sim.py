"""Simulator benchmark: N nodes in 3 zones, bound pods owned by ReplicaSets plus a DaemonSet, one
zone fails at 60 s, 1 simulated hour. Reports wall time and peak RSS.

    PYTHONPATH=src python benchmarks/bench_sim.py            # 1,000 nodes / 30,000 pods
    PYTHONPATH=src python benchmarks/bench_sim.py --nodes 5000 --pods 150000
    PYTHONPATH=src python benchmarks/bench_sim.py --file json   # the scenario read from a file

With --file json|yaml the scenario is first written to a temporary file (not timed) and the
simulation reads it from there, as `kubetaint simulate FILE` does: the load then includes parsing
the text.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from typing import Any

from kubetaint.sim.api import Simulation

PODS_PER_RS = 100
ZONES = ["zone-a", "zone-b", "zone-c"]


def scenario(nodes: int, pods: int, until: str) -> dict[str, Any]:
    objects: list[dict[str, Any]] = []
    replicasets = max(1, pods // PODS_PER_RS)
    template_spec = {
        "containers": [{"name": "app", "image": "app", "resources": {"requests": {"cpu": "100m"}}}]
    }
    for r in range(replicasets):
        labels = {"app": f"app-{r}"}
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": f"app-{r}"},
                "spec": {
                    "replicas": PODS_PER_RS,
                    "selector": {"matchLabels": labels},
                    "template": {"metadata": {"labels": labels}, "spec": template_spec},
                },
            }
        )
    for i in range(pods):
        r = i // PODS_PER_RS
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"app-{r}-{i % PODS_PER_RS}", "labels": {"app": f"app-{r}"}},
                "spec": {**template_spec, "nodeName": f"node-{i % nodes}"},
                "status": {"phase": "Running"},
            }
        )
    objects.append(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "agent"},
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {
                    "metadata": {"labels": {"app": "agent"}},
                    "spec": {"containers": [{"name": "a", "image": "a"}]},
                },
            },
        }
    )
    return {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"bench-{nodes}"},
        "spec": {
            "seed": 1,
            "until": until,
            "nodeGroups": [{"name": "node", "count": nodes, "zones": ZONES}],
            "objects": objects,
            "events": [{"at": "60s", "zone": "zone-a", "fault": "stop"}],
        },
    }


def write_scenario(doc: dict[str, Any], form: str) -> str:
    """`doc` written to a temporary file in `form` (json or yaml, block style); its path."""
    handle, path = tempfile.mkstemp(suffix=f".{form}", prefix="bench-sim-")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        if form == "json":
            json.dump(doc, out, indent=2)
        else:
            import yaml

            yaml.dump(doc, out, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
    return path


def time_heartbeat_rounds() -> list[float]:
    """The CPU seconds the hollow nodes' heartbeat rounds take from now on (`HollowNodePool._beat`:
    the renewals and status posts written and every handler they reach), summed in the list."""
    from kubetaint.kubelet.pool import HollowNodePool

    total = [0.0]
    beat = HollowNodePool._beat

    def timed(pool: HollowNodePool, phase: float) -> None:
        started = time.process_time()
        beat(pool, phase)
        total[0] += time.process_time() - started

    HollowNodePool._beat = timed  # type: ignore[method-assign]
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=30000)
    parser.add_argument("--until", default="1h")
    parser.add_argument(
        "--file", choices=["json", "yaml"], help="read the scenario from a file of this format"
    )
    parser.add_argument(
        "--beats", action="store_true", help="also report the CPU time of the hollow nodes' heartbeat rounds"
    )
    args = parser.parse_args()
    beats = time_heartbeat_rounds() if args.beats else None
    doc = scenario(args.nodes, args.pods, args.until)
    source: dict[str, Any] | str = write_scenario(doc, args.file) if args.file else doc
    started = time.perf_counter()
    try:
        sim = Simulation(source)
    finally:
        if isinstance(source, str):
            os.unlink(source)
    loaded = time.perf_counter()
    result = sim.run()
    finished = time.perf_counter()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    rss_mb = usage.ru_maxrss / 1024
    cpu = usage.ru_utime + usage.ru_stime  # the wall time on a busy machine overstates the cost
    rounds = f", heartbeat rounds {beats[0]:.2f}s CPU" if beats is not None else ""
    print(
        f"nodes={args.nodes} pods={args.pods} until={args.until}"
        f"{' from ' + args.file + ' file' if args.file else ''}: load {loaded - started:.1f}s, "
        f"run {finished - loaded:.1f}s, total {finished - started:.1f}s wall ({cpu:.1f}s CPU), "
        f"peak RSS {rss_mb:.0f} MB{rounds}; "
        f"summary {result['summary']}, {len(result['timeline'])} records"
    )


if __name__ == "__main__":
    main()
