"""What managedFields cost an HTTP write: pods created and merge-patched over real HTTP against
one in-process server, in alternating blocks with the field manager switched off (A) and on (B),
so that a loaded host's drift falls on both alike; prints the median time per request of each
and the throughput ratio B/A.

    PYTHONPATH=src python benchmarks/bench_field_manager.py [--blocks 12] [--requests 100]

In an "off" block the pods are created without managedFields, so its patches also write smaller
objects: the patch ratio includes the cost of carrying managedFields, not only of computing them.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

import httpx

from kubetaint.apiserver import fieldmanagement
from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "labels": {"app": "x"}},
    "spec": {
        "containers": [
            {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
        ],
        "tolerations": [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
    },
}
MERGE = {"Content-Type": "application/merge-patch+json"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blocks", type=int, default=12)
    parser.add_argument("--requests", type=int, default=100)
    args = parser.parse_args()
    real = fieldmanagement.record
    clock = VirtualClock()
    store = MemoryStore(clock)
    store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    times: dict[str, dict[str, list[float]]] = {m: {"create": [], "patch": []} for m in "AB"}
    app = create_app(store, clock, rng=random.Random(7))
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url) as client:
        for block in range(args.blocks):
            mode = "AB"[block % 2]
            fieldmanagement.record = real if mode == "B" else (lambda target, new, old, request, clock: new)
            names = [f"b{block}-{i}" for i in range(args.requests)]
            start = time.perf_counter()
            for name in names:
                pod = {**POD, "metadata": {"name": name, "labels": {"app": "x"}}}
                client.post("/api/v1/namespaces/default/pods", json=pod).raise_for_status()
            times[mode]["create"].append((time.perf_counter() - start) / len(names))
            start = time.perf_counter()
            for name in names:
                body = b'{"metadata":{"labels":{"b":"y"}}}'
                client.patch(
                    f"/api/v1/namespaces/default/pods/{name}", content=body, headers=MERGE
                ).raise_for_status()
            times[mode]["patch"].append((time.perf_counter() - start) / len(names))
    fieldmanagement.record = real
    for op in ("create", "patch"):
        off, on = statistics.median(times["A"][op]), statistics.median(times["B"][op])
        print(f"{op}: off {off * 1e3:.2f} ms, on {on * 1e3:.2f} ms, throughput on/off {off / on:.2f}")


if __name__ == "__main__":
    main()
