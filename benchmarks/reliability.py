"""Reliability checks with numbers (issue 10, item 4). One command:

    PYTHONPATH=src /work/venv/bin/python benchmarks/reliability.py

Options: --fuzz N (requests per server mode, default 5000, so 10,000 in all), --clients 16,
--updates 25 (read-modify-write updates per client), --load 3, --pods 10, --seed 0,
--only fuzz|rmw|restart|ha.

1. Fuzz: hypothesis-generated and mutated requests (see reliability_requests.py: methods,
   valid and mutated paths, query parameters, headers, content types, credentials; JSON/YAML
   bodies generated from scratch or by mutating valid objects, random bytes, deep nesting, alias
   bombs, NaN, bodies over 3 MiB) against a real uvicorn server on a free port with the memory
   store, once plain (loopback, anonymous, AlwaysAllow) and once with TLS + token authentication
   (Node,RBAC). Asserts zero 5xx and zero crashes; prints the counts by status code.
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
import contextlib
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

from kubetaint.api import errors
from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.security import SecurityConfig
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.apiserver.tls import ensure_self_signed
from kubetaint.clock import RealClock, VirtualClock
from kubetaint.store.interface import Store
from kubetaint.store.memory import MemoryStore

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


def seed_objects(store: Store) -> None:
    """(Re)create what the valid paths name, so fuzzing keeps reaching real objects."""
    objects: list[tuple[str, JSON]] = [
        ("namespaces", {"metadata": {"name": "default"}}),
        ("namespaces", {"metadata": {"name": "kube-node-lease"}}),
        ("nodes", {"metadata": {"name": "n1"}, "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}),
        ("nodes", {"metadata": {"name": "n2"}}),
        (
            "pods",
            {
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]},
            },
        ),
        (
            "leases.coordination.k8s.io",
            {"metadata": {"name": "n1", "namespace": "kube-node-lease"}, "spec": {}},
        ),
    ]
    for resource, obj in objects:
        with contextlib.suppress(errors.StatusError):
            store.create(resource, obj)


@dataclass
class FuzzTarget:
    name: str
    server: BackgroundServer
    store: Store
    verify: ssl.SSLContext | bool
    tokens: list[str]


def fuzz(
    target: FuzzTarget, examples: int, seed: int, progress: Callable[[int], None] | None = None
) -> FuzzResult:
    result = FuzzResult()
    seed_objects(target.store)
    client = httpx.Client(base_url=target.server.url, verify=target.verify, timeout=30)

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
            seed_objects(target.store)
            if progress:
                progress(result.total)

    try:
        run()
    finally:
        client.close()
    return result


class FuzzServers:
    """The two servers under fuzz: plain loopback and TLS + tokens, each on its memory store."""

    def __init__(self, workdir: Path) -> None:
        tokens = workdir / "tokens.csv"
        tokens.write_text(TOKENS_CSV)
        tls = ensure_self_signed(workdir / "pki")
        plain_store, secure_store = MemoryStore(VirtualClock()), MemoryStore(VirtualClock())
        clock = VirtualClock()
        plain = BackgroundServer(create_app(plain_store, clock))
        secure = BackgroundServer(
            create_app(secure_store, clock, security=SecurityConfig(token_auth_file=str(tokens))), tls=tls
        )
        context = ssl.create_default_context(cafile=tls.cert_file)
        self.targets = [
            FuzzTarget("plain HTTP, anonymous, AlwaysAllow", plain, plain_store, False, []),
            FuzzTarget(
                "TLS + token auth, Node,RBAC",
                secure,
                secure_store,
                context,
                ["admin-token", "n1-token", "viewer-token"],
            ),
        ]

    def __enter__(self) -> FuzzServers:
        for target in self.targets:
            target.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for target in self.targets:
            target.server.stop()


def alive(target: FuzzTarget) -> bool:
    """The server thread still runs and answers a probe."""
    try:
        with httpx.Client(base_url=target.server.url, verify=target.verify, timeout=10) as client:
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
