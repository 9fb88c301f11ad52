"""Reliability checks with numbers (issue 10, item 4). One command:

    PYTHONPATH=src /work/venv/bin/python benchmarks/reliability.py

Options: --fuzz N (requests per server mode, default 5000, so 10,000 in all), --clients 16,
--updates 25 (read-modify-write updates per client), --load 3, --pods 10, --seed 0,
--only fuzz|rmw|restart|ha.

1. Fuzz: hypothesis-generated and mutated requests (see reliability_requests.py: methods,
   valid and mutated paths, query parameters, headers, content types, credentials; JSON/YAML
   bodies generated from scratch or by mutating valid objects, random bytes, deep nesting, alias
   bombs, NaN, bodies over 3 MiB) against `kubetaint up` processes as users run them (memory
   store, no hollow node, a free port): once `--insecure-serving` (plain HTTP on loopback, no
   authentication or authorization) and once with the defaults (HTTPS, client certificates,
   --anonymous-auth=true, --authorization-mode=Node,RBAC) and a --token-auth-file of an admin, a
   node and a viewer. Asserts zero 5xx and zero crashes; prints the counts by status code.
2. Concurrent read-modify-write: 16 clients GET a node, append a taint and PUT it back with its
   resourceVersion (retrying on 409) on the same few nodes, through the SQLite store; asserts
   that every acknowledged update is present at the end (no lost update).
3. kill -9 (reliability_restart.py): `kubetaint up` (SQLite) under 8 writers creating namespaces is
   SIGKILLed after --load seconds and restarted on its data dir; every acknowledged create must be
   there.
4. Watch across the restart: a watch followed since before the load resumes, on the restarted
   server, from the last resourceVersion it saw (more writes in between); every committed object
   must be delivered as ADDED exactly once, resourceVersions strictly increasing.
5. Two replicas on etcd (reliability_ha.py): two `kubetaint up --leader-elect` on a private etcd
   (the first, leading, with --no-kubelets); the leader is SIGKILLed after its scheduler placed
   --pods pods on node-1, node-1 gets a NoExecute taint, the other replica must take both Leases
   and evict every pod; prints each pod's DELETED events and TaintManagerEviction events.
"""

from __future__ import annotations

import argparse
import json
import ssl
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from reliability_requests import HUGE, FuzzRequest, requests_for

from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import RealClock

JSON = dict[str, Any]
TOKENS_CSV = (
    "admin-token,admin,1,system:masters\nn1-token,system:node:n1,2,system:nodes\nviewer-token,viewer,3,\n"
)

# 1. Fuzz --------------------------------------------------------------------------------------


@dataclass
class FuzzResult:
    counts: Counter[int] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    bad_error_bodies: list[str] = field(default_factory=list)
    transport_errors: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values()) + sum(self.transport_errors.values())


def send(client: httpx.Client, request: FuzzRequest, result: FuzzResult) -> None:
    """One request: count its status; a 4xx/5xx must be a JSON Status. Watches are closed as
    soon as their status is known."""
    query = list(request.query)
    if any(key == "watch" for key, _ in query):
        query.append(("timeoutSeconds", "1"))
    try:
        with client.stream(
            request.method, request.path, params=query, headers=list(request.headers), content=request.body
        ) as response:
            code = response.status_code
            result.counts[code] += 1
            if code >= 500:
                response.read()
                result.server_errors.append(f"{code} {response.text[:300]} <- {request.describe()}")
            elif code >= 400 and request.method != "HEAD":
                response.read()
                if not _is_status(response.content, code):
                    result.bad_error_bodies.append(f"{code} {response.text[:200]} <- {request.describe()}")
    except httpx.TransportError as exc:
        # The server may close a connection whose oversized body it refused before reading it.
        result.transport_errors[type(exc).__name__] += 1
        if request.body is not HUGE:
            result.server_errors.append(f"{type(exc).__name__}: {exc} <- {request.describe()}")


def _is_status(content: bytes, code: int) -> bool:
    try:
        body = json.loads(content)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("kind") == "Status" and body.get("code") == code


#: What the valid paths name, (re)created so that fuzzing keeps reaching real objects.
SEED_OBJECTS: list[tuple[str, JSON]] = [
    ("/api/v1/namespaces", {"metadata": {"name": "default"}}),
    ("/api/v1/namespaces", {"metadata": {"name": "kube-node-lease"}}),
    (
        "/api/v1/nodes",
        {"metadata": {"name": "n1"}, "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}},
    ),
    ("/api/v1/nodes", {"metadata": {"name": "n2"}}),
    (
        "/api/v1/namespaces/default/pods",
        {
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]},
        },
    ),
    (
        "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
        {"metadata": {"name": "n1", "namespace": "kube-node-lease"}, "spec": {}},
    ),
]


@dataclass
class FuzzTarget:
    """One `kubetaint up` process under fuzz, and an admin client that seeds it."""

    name: str
    server: Any  # tests/e2e/harness.py UpServer
    verify: ssl.SSLContext | bool
    tokens: list[str]

    @property
    def url(self) -> str:
        return str(self.server.url)

    def seed_objects(self) -> None:
        with self.server.client(timeout=30) as admin:
            for path, obj in SEED_OBJECTS:
                admin.post(path, json=obj)  # 409 when it is there already


def fuzz(
    target: FuzzTarget, examples: int, seed: int, progress: Callable[[int], None] | None = None
) -> FuzzResult:
    result = FuzzResult()
    target.seed_objects()
    client = httpx.Client(base_url=target.url, verify=target.verify, timeout=30)

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(request=requests_for(target.tokens))
    def run(request: FuzzRequest) -> None:
        send(client, request, result)
        if result.total % 500 == 0:
            target.seed_objects()
            if progress:
                progress(result.total)

    try:
        run()
    finally:
        client.close()
    return result


class FuzzServers:
    """The two `kubetaint up` processes under fuzz, as users run them, each on the memory store
    with no hollow node: `--insecure-serving` (plain HTTP on loopback, no authentication or
    authorization) and the defaults (HTTPS, client certificates, `--anonymous-auth=true`,
    `--authorization-mode=Node,RBAC`) with a `--token-auth-file` of an admin, a node and a viewer."""

    def __init__(self, workdir: Path) -> None:
        from reliability_restart import HARNESS

        tokens = workdir / "tokens.csv"
        tokens.write_text(TOKENS_CSV)
        common = ("--store", "memory", "--nodes", "0")
        (workdir / "plain").mkdir()
        (workdir / "secure").mkdir()
        plain = HARNESS.UpServer(workdir / "plain", *common, "--insecure-serving")
        secure = HARNESS.UpServer(workdir / "secure", *common, "--token-auth-file", str(tokens))
        self.targets = [
            FuzzTarget("kubetaint up --insecure-serving (plain HTTP, no authentication)", plain, False, []),
            FuzzTarget(
                "kubetaint up (HTTPS, tokens, Node,RBAC)",
                secure,
                True,
                ["admin-token", "n1-token", "viewer-token"],
            ),
        ]

    def __enter__(self) -> FuzzServers:
        try:
            for target in self.targets:
                target.server.start()
                if target.server.connection.ca_pem:
                    target.verify = ssl.create_default_context(cadata=target.server.connection.ca_pem)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for target in self.targets:
            target.server.kill()


def alive(target: FuzzTarget) -> bool:
    """The server process still runs and answers a probe."""
    if target.server.proc is None or target.server.proc.poll() is not None:
        return False
    try:
        with httpx.Client(base_url=target.url, verify=target.verify, timeout=10) as client:
            return client.get("/healthz").text == "ok"
    except httpx.HTTPError:
        return False


def run_fuzz(examples: int, seed: int) -> bool:
    print(f"== Fuzz: {examples} requests per server mode, seed {seed}")
    ok = True
    with tempfile.TemporaryDirectory() as tmp, FuzzServers(Path(tmp)) as servers:
        for target in servers.targets:
            started = time.perf_counter()
            result = fuzz(target, examples, seed)
            elapsed = time.perf_counter() - started
            up = alive(target)
            codes = ", ".join(f"{code}: {n}" for code, n in sorted(result.counts.items()))
            rate = result.total / elapsed
            print(f"-- {target.name}: {result.total} requests in {elapsed:.1f} s ({rate:.0f}/s)")
            print(f"   by status: {codes}")
            if result.transport_errors:
                print(f"   connections closed on oversized bodies: {dict(result.transport_errors)}")
            fives = sum(n for code, n in result.counts.items() if code >= 500)
            print(
                f"   5xx: {fives}; non-Status error bodies: {len(result.bad_error_bodies)}; crashed: {not up}"
            )
            for line in (result.server_errors + result.bad_error_bodies)[:10]:
                print(f"   ! {line}")
            ok = ok and up and not result.server_errors and not result.bad_error_bodies and fives == 0
    return ok


# 2. Concurrent read-modify-write ---------------------------------------------------------------


@dataclass
class RMWResult:
    acknowledged: int
    conflicts: int
    lost: int
    unexpected: int
    elapsed: float


def read_modify_write(clients: int, updates: int, nodes: int, data_dir: Path) -> RMWResult:
    """`clients` threads each append `updates` taints (GET, append, PUT with resourceVersion,
    retry on 409) to `nodes` shared nodes through the SQLite store."""
    from kubetaint.store.factory import open_store

    clock = RealClock()
    store = open_store("sqlite", data_dir=data_dir, clock=clock)
    names = [f"rmw-{i}" for i in range(nodes)]
    for name in names:
        store.create("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {}})
    acked: dict[str, set[str]] = {name: set() for name in names}
    lock = threading.Lock()
    conflicts = Counter[str]()
    failures: list[str] = []

    def worker(server_url: str, index: int) -> None:
        with httpx.Client(base_url=server_url, timeout=30) as client:
            for j in range(updates):
                name = names[(index + j) % nodes]
                key = f"client-{index}-update-{j}"
                while True:
                    node = client.get(f"/api/v1/nodes/{name}").json()
                    taints = [*(node["spec"].get("taints") or []), {"key": key, "effect": "NoSchedule"}]
                    node["spec"]["taints"] = taints
                    response = client.put(f"/api/v1/nodes/{name}", json=node)
                    if response.status_code == 200:
                        with lock:
                            acked[name].add(key)
                        break
                    if response.status_code == 409:
                        with lock:
                            conflicts["409"] += 1
                        continue
                    with lock:
                        failures.append(f"{response.status_code} {response.text[:200]}")
                    return

    started = time.perf_counter()
    with BackgroundServer(create_app(store, clock)) as server:
        threads = [threading.Thread(target=worker, args=(server.url, i)) for i in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        present = {
            name: {t["key"] for t in (store.get("nodes", "", name)["spec"].get("taints") or [])}
            for name in names
        }
    store.close()
    if failures:
        raise AssertionError(f"unexpected answers: {failures[:5]}")
    lost = sum(len(acked[n] - present[n]) for n in names)
    unexpected = sum(len(present[n] - acked[n]) for n in names)
    return RMWResult(sum(len(v) for v in acked.values()), conflicts["409"], lost, unexpected, elapsed)


def run_rmw(clients: int, updates: int) -> bool:
    nodes = 4
    print(f"== Concurrent read-modify-write: {clients} clients x {updates} taint updates on {nodes} nodes")
    with tempfile.TemporaryDirectory() as tmp:
        result = read_modify_write(clients, updates, nodes, Path(tmp))
    print(
        f"-- {result.acknowledged} updates acknowledged in {result.elapsed:.1f} s "
        f"({result.acknowledged / result.elapsed:.0f}/s), {result.conflicts} 409 conflicts retried, "
        f"lost updates: {result.lost}, unacknowledged taints present: {result.unexpected}"
    )
    return result.lost == 0 and result.unexpected == 0 and result.acknowledged == clients * updates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--fuzz", type=int, default=5000, help="requests per server mode (two modes)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--updates", type=int, default=25, help="read-modify-write updates per client")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--load", type=float, default=3.0, help="seconds of write load before kill -9")
    parser.add_argument("--pods", type=int, default=10, help="pods evicted after the failover")
    parser.add_argument("--only", choices=["fuzz", "rmw", "restart", "ha"])
    args = parser.parse_args(argv)
    ok = True
    if args.only in (None, "fuzz"):
        ok = run_fuzz(args.fuzz, args.seed) and ok
    if args.only in (None, "rmw"):
        ok = run_rmw(args.clients, args.updates) and ok
    # Imported here: tests load this module by path without its process-running siblings.
    if args.only in (None, "restart"):
        from reliability_restart import run_restart

        ok = run_restart(8, args.load) and ok
    if args.only in (None, "ha"):
        from reliability_ha import run_ha

        ok = run_ha(args.pods) and ok
    print("== all checks passed" if ok else "== FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
