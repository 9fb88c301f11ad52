"""Store throughput: writes/s (create, bind-like update, delete) and reads (get, list by node,
full list, watch replay) per backend.

    PYTHONPATH=src python benchmarks/bench_store.py [--pods 3000] [--etcd http://127.0.0.1:2379]

SQLite runs in a temporary directory on the same disk as /tmp (a write returns after the WAL
fsync covering it: one fsync per write from a single thread). etcd runs only when --etcd is given.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from kubetaint.clock import VirtualClock
from kubetaint.store.interface import Store, StoreOptions


def make_pod(i: int) -> dict[str, Any]:
    """A pod about the size of a typical Deployment pod (~1.3 KB of JSON)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"web-{i:06d}",
            "namespace": f"ns{i % 10}",
            "labels": {"app": "web", "pod-template-hash": "5d8f7c9b4", "shard": str(i % 16)},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-5d8f7c9b4",
                    "uid": str(uuid.UUID(int=i)),
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": "registry.k8s.io/pause:3.9",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                }
            ],
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
            ],
            "schedulerName": "default-scheduler",
            "restartPolicy": "Always",
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }


def rate(label: str, count: int, action: Callable[[int], object]) -> float:
    start = time.perf_counter()
    for i in range(count):
        action(i)
    elapsed = time.perf_counter() - start
    print(f"  {label:<38} {count / elapsed:>10.0f}/s   ({elapsed * 1000:8.1f} ms for {count})")
    return count / elapsed


def once(label: str, action: Callable[[], int]) -> None:
    start = time.perf_counter()
    items = action()
    elapsed = time.perf_counter() - start
    print(f"  {label:<38} {elapsed * 1000:>10.1f} ms   ({items} items)")


def bench(name: str, store: Store, pods: int) -> None:
    print(f"{name}:")
    events: list[object] = []
    store.subscribe(events.append)  # an informer-like subscriber, as in the live server
    rate("create pod", pods, lambda i: store.create("pods", make_pod(i)))

    def bind(i: int) -> None:
        current = store.get("pods", f"ns{i % 10}", f"web-{i:06d}")
        store.update("pods", {**current, "spec": {**current["spec"], "nodeName": f"node-{i % 100}"}})

    rate("get + update (bind to a node)", pods, bind)
    rate("get", pods, lambda i: store.get("pods", f"ns{i % 10}", f"web-{i:06d}"))
    rate(
        "list pods on one node (field index)",
        200,
        lambda i: store.list("pods", field_selector=f"spec.nodeName=node-{i % 100}"),
    )
    once("list all pods", lambda: len(store.list("pods").items))
    once("list all pods, 500 per page", lambda: _paged(store))
    once("watch from rv 0 (initial ADDED)", lambda: len(store.watch("pods", resource_version="0").drain()))

    threads = 4
    per_thread = pods // (2 * threads)

    def writer(t: int) -> None:
        for i in range(per_thread):
            store.create(
                "configmaps",
                {"metadata": {"name": f"cm-{t}-{i}", "namespace": "default"}, "data": {"k": "v"}},
            )

    start = time.perf_counter()
    workers = [threading.Thread(target=writer, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - start
    print(f"  {'create from 4 threads':<38} {threads * per_thread / elapsed:>10.0f}/s")
    rate("delete pod", pods // 2, lambda i: store.delete("pods", f"ns{i % 10}", f"web-{i:06d}"))
    print(f"  subscriber saw {len(events)} events")
    store.close()


def _paged(store: Store) -> int:
    total, token = 0, None
    while True:
        page = store.list("pods", limit=500, continue_token=token)
        total += len(page.items)
        token = page.continue_token
        if token is None:
            return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument(
        "--etcd", default=None, help="client URL of an etcd to benchmark (uses a fresh prefix)"
    )
    args = parser.parse_args()

    from kubetaint.store.memory import MemoryStore
    from kubetaint.store.sqlite import SqliteStore

    bench("memory", MemoryStore(VirtualClock()), args.pods)
    with tempfile.TemporaryDirectory() as data_dir:
        bench("sqlite (WAL, fsync per write)", SqliteStore(data_dir, VirtualClock()), args.pods)
    if args.etcd:
        from kubetaint.store.etcd import EtcdStore

        prefix = f"/bench-{uuid.uuid4().hex[:8]}/registry"
        bench("etcd", EtcdStore(args.etcd, VirtualClock(), options=StoreOptions(prefix=prefix)), args.pods)


if __name__ == "__main__":
    main()
