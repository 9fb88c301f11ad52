"""The live server (`kubetaint up` as a subprocess, a temporary data dir, a free port), per store:

(a) pods created over HTTP by concurrent clients and scheduled end to end: the time from the first
    POST until a watch has seen spec.nodeName on every pod → pods/s (target ≥ 200 pods/s);
(b) p50/p99 latency of `kubectl taint nodes node-1 k=v:NoSchedule` and `k-` round trips with
    the real kubectl (fresh KUBECACHEDIR, warmed by one untimed call);
(c) LIST of 30,000 pods: `GET /api/v1/pods` as JSON and as a Table (kubectl's Accept header).
    The pods are created over HTTP already bound to a node that does not exist, on a server
    started with --no-controllers (nothing schedules, runs or collects them).

    PYTHONPATH=src python benchmarks/bench_http.py [--stores sqlite,memory] [--pods 2000]
        [--clients 8] [--nodes 25] [--taints 20] [--list-pods 30000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from kubetaint.store.remote_config import Connection, load_kubeconfig

NAMESPACE = "bench"
TABLE_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
    "application/json"
)


class Up:
    """One `kubetaint up` subprocess on a temporary data dir and a free port, reached over HTTPS
    through the kubeconfig it writes (the cluster CA, the admin client certificate and token)."""

    def __init__(self, workdir: Path, store: str, *args: str) -> None:
        self.workdir = workdir
        self.env = {
            **os.environ,
            "HOME": str(workdir),
            "KUBECONFIG": str(workdir / "data" / "kubeconfig"),
            "KUBECACHEDIR": str(workdir / "kubecache"),
        }
        cmd = [sys.executable, "-m", "kubetaint", "up", "--data-dir", str(workdir / "data"), "--port", "0"]
        self.proc = subprocess.Popen(
            [*cmd, "--store", store, *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if not first.startswith("kubetaint is serving"):
            raise SystemExit(f"kubetaint up did not start: {first!r}")
        self.url = first.split(" at ", 1)[1].split()[0]
        for line in self.proc.stdout:
            if line.startswith("Press Ctrl-C"):
                break
        self.connection: Connection = load_kubeconfig(workdir / "data" / "kubeconfig")

    def client(self, timeout: float | httpx.Timeout = 60) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            verify=self.connection.ssl_context(),
            headers=self.connection.headers(),
            timeout=timeout,
        )

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


@contextmanager
def up(store: str, *args: str) -> Iterator[Up]:
    workdir = Path(tempfile.mkdtemp(prefix="kubetaint-bench-http-"))
    server = Up(workdir, store, *args)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def pod(name: str, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "app",
                "image": "registry.k8s.io/pause:3.9",
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
            }
        ]
    }
    if node:
        spec["nodeName"] = node
    meta = {"name": name, "namespace": NAMESPACE, "labels": {"app": "bench"}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def create_namespace(server: Up) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    with server.client(30) as http:
        http.post("/api/v1/namespaces", json=body).raise_for_status()


def create_pods(server: Up, count: int, clients: int, node: str | None = None) -> None:
    """`count` pods POSTed by `clients` threads, each with its own keep-alive connection."""
    failures: list[str] = []

    def client(index: int) -> None:
        with server.client(60) as http:
            for i in range(index, count, clients):
                response = http.post(f"/api/v1/namespaces/{NAMESPACE}/pods", json=pod(f"p-{i:06d}", node))
                if response.status_code != 201:
                    failures.append(response.text)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise SystemExit(f"{len(failures)} creates failed, first: {failures[0]}")


class ScheduledWatch:
    """A watch on the namespace's pods that notes when every one of `count` pods has a node."""

    def __init__(self, server: Up, count: int) -> None:
        self.count = count
        self.bound: set[str] = set()
        self.done = threading.Event()
        self.finished_at = 0.0
        self._server = server
        with server.client(30) as http:
            rv = http.get(f"/api/v1/namespaces/{NAMESPACE}/pods").json()["metadata"]
        self._path = f"/api/v1/namespaces/{NAMESPACE}/pods?watch=1&resourceVersion={rv['resourceVersion']}"
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with (
            self._server.client(httpx.Timeout(30, read=None)) as http,
            http.stream("GET", self._path) as response,
        ):
            for line in response.iter_lines():
                event = json.loads(line)
                obj = event["object"]
                if event["type"] in ("ADDED", "MODIFIED") and obj["spec"].get("nodeName"):
                    self.bound.add(obj["metadata"]["name"])
                    if len(self.bound) == self.count:
                        self.finished_at = time.perf_counter()
                        self.done.set()
                        return


def bench_schedule(server: Up, count: int, clients: int) -> float:
    watch = ScheduledWatch(server, count)
    start = time.perf_counter()
    create_pods(server, count, clients)
    if not watch.done.wait(600):
        raise SystemExit(f"only {len(watch.bound)} of {count} pods were scheduled")
    return count / (watch.finished_at - start)


def bench_taint(server: Up, rounds: int) -> tuple[float, float] | None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return None

    def run(*args: str) -> float:
        start = time.perf_counter()
        subprocess.run([kubectl, *args], env=server.env, check=True, capture_output=True)
        return time.perf_counter() - start

    run("get", "nodes")  # fills the discovery cache, as any earlier kubectl command would
    samples = []
    for _ in range(rounds):
        samples.append(run("taint", "nodes", "node-1", "k=v:NoSchedule"))
        samples.append(run("taint", "nodes", "node-1", "k-"))
    samples.sort()
    p99 = samples[min(len(samples) - 1, round(0.99 * (len(samples) - 1)))]
    return statistics.median(samples), p99


def bench_list(server: Up, accept: str, repeat: int = 3) -> float:
    best = float("inf")
    with server.client(120) as http:
        for _ in range(repeat):
            start = time.perf_counter()
            response = http.get("/api/v1/pods", headers={"Accept": accept})
            response.raise_for_status()
            response.json()
            best = min(best, time.perf_counter() - start)
    return best


def run_store(store: str, args: argparse.Namespace) -> dict[str, str]:
    row: dict[str, str] = {"store": store}
    with up(store, "--nodes", str(args.nodes)) as server:
        create_namespace(server)
        row["pods/s"] = f"{bench_schedule(server, args.pods, args.clients):.0f}"
        taint = bench_taint(server, args.taints)
        row["taint p50"], row["taint p99"] = (
            (f"{taint[0] * 1000:.0f} ms", f"{taint[1] * 1000:.0f} ms") if taint else ("-", "-")
        )
    if not args.list_pods:
        return row
    with up(store, "--nodes", "0", "--no-controllers") as server:
        create_namespace(server)
        create_pods(server, args.list_pods, args.clients, node="parked")
        row["LIST json"] = f"{bench_list(server, 'application/json'):.2f} s"
        row["LIST table"] = f"{bench_list(server, TABLE_ACCEPT):.2f} s"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--stores", default="sqlite,memory")
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--nodes", type=int, default=25)
    parser.add_argument("--taints", type=int, default=20, help="taint add/remove pairs")
    parser.add_argument("--list-pods", type=int, default=30000, help="0: skip the LIST part")
    args = parser.parse_args()
    rows = []
    for store in args.stores.split(","):
        rows.append(run_store(store, args))
        print(rows[-1], flush=True)
    headers = list(rows[0])
    print("| " + " | ".join(headers) + " |")
    print("|" + "---|" * len(headers))
    for row in rows:
        print("| " + " | ".join(row[h] for h in headers) + " |")


if __name__ == "__main__":
    main()
