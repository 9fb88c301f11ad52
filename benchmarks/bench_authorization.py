"""Authorization cost: the RBAC decision per request over the bootstrap policy plus N
RoleBindings, the policy rebuild after an RBAC change, and the hollow kubelets' identity checks
(Node authorizer and NodeRestriction on every kubelet write) against the batched writes of an
unchecked fleet.

    PYTHONPATH=src python benchmarks/bench_authorization.py [--bindings 1000] [--nodes 1000]
"""

from __future__ import annotations

import argparse
import time
import timeit

from kubetaint.apiserver.authn import UserInfo
from kubetaint.apiserver.live import LiveCluster
from kubetaint.apiserver.rbac_bootstrap import cluster_role_bindings, cluster_roles
from kubetaint.apiserver.rbac_store import policy_of
from kubetaint.apiserver.requestinfo import request_info
from kubetaint.apiserver.security import SecurityConfig
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore


def bindings(count: int) -> list[dict[str, object]]:
    return [
        {
            "kind": "RoleBinding",
            "metadata": {"name": f"b{i}", "namespace": f"ns{i % 50}"},
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": f"u{i}"}],
        }
        for i in range(count)
    ]


def rbac(count: int) -> None:
    objects = [*cluster_roles(), *cluster_role_bindings(), *bindings(count)]
    policy = policy_of(objects)
    user = UserInfo("u5", "", ("system:authenticated",))
    allowed = request_info("GET", "/api/v1/namespaces/ns5/pods", {})
    denied = request_info("DELETE", "/api/v1/namespaces/ns5/pods/web", {})
    assert policy.authorize(user, allowed)[0] and not policy.authorize(user, denied)[0]
    n = 20_000
    for what, info in (("allowed", allowed), ("denied", denied)):
        per = timeit.timeit(lambda info=info: policy.authorize(user, info), number=n) / n
        print(f"RBAC decision, {count} RoleBindings, {what}: {per * 1e6:.1f} µs")
    rebuilds = 20
    per = timeit.timeit(lambda: policy_of(objects), number=rebuilds) / rebuilds
    print(f"policy rebuild after a change, {len(objects)} objects: {per * 1e3:.1f} ms")


def kubelets(nodes: int) -> None:
    for identity in (False, True):
        clock = VirtualClock()
        security = SecurityConfig(authorization_mode=("Node", "RBAC"))
        cluster = LiveCluster(
            MemoryStore(clock), clock, workers=nodes, seed=1, server_address="x", security=security
        )
        if not identity:
            cluster.plane.fleet.pool.store_for = None  # the simulator's batched, unchecked writes
        cluster.start()
        clock.advance(1)
        start = time.perf_counter()
        clock.advance(60)
        took = time.perf_counter() - start
        cluster.stop()
        label = "as system:node:NAME, checked" if identity else "unchecked, batched"
        print(f"{nodes} hollow kubelets, 60 s of heartbeats and status, {label}: {took:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bindings", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=1000)
    args = parser.parse_args()
    rbac(args.bindings)
    kubelets(args.nodes)


if __name__ == "__main__":
    main()
