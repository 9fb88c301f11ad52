"""Reliability check 5 (see reliability.py): two `kubetaint up --leader-elect` replicas on one
private etcd; the one holding the kube-scheduler and kube-controller-manager Leases (started
with --no-kubelets) is killed with SIGKILL after its pods were scheduled; the other takes both
Leases, evicts the pods from a NoExecute-tainted node, and each pod's deletions (DELETED watch
events) and TaintManagerEviction events are counted."""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from reliability_restart import HARNESS, load

ETCD = load("tests/store/etcd_server.py", "reliability_etcd")
FAST = ("--leader-elect", "--leader-elect-lease-duration=2", "--leader-elect-renew-deadline=1.5")
LEASES = ("kube-scheduler", "kube-controller-manager")


def _replica(workdir: Path, name: str, store: str, *args: str) -> Any:
    return HARNESS.UpServer(
        workdir,
        "--store",
        store,
        "--nodes",
        "2",
        *FAST,
        "--leader-elect-retry-period=0.25",
        *args,
        data_dir=workdir / name,
    ).start()


def _leads(server: Any, seen: list[str]) -> bool:
    while not server._lines.empty():
        seen.append(server._lines.get())
    return all(f"{lease}: started leading" in seen for lease in LEASES)


def _pod(name: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node},
            "containers": [{"name": "web", "image": "nginx"}],
        },
    }


def failover(pods: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "etcd").mkdir()
        etcd = ETCD.EtcdServer(workdir / "etcd")
        store = "etcd://" + etcd.url.removeprefix("http://")
        first_seen: list[str] = []
        second_seen: list[str] = []
        first = _replica(workdir, "first", store, "--no-kubelets")
        second = None
        try:
            HARNESS.eventually(lambda: _leads(first, first_seen), "the first replica to lead")
            second = _replica(workdir, "second", store)
            api = second.client(timeout=10)
            names = [f"web-{i}" for i in range(pods)]
            HARNESS.eventually(lambda: api.get("/api/v1/nodes/node-1").status_code == 200, "node-1")
            for name in names:
                api.post("/api/v1/namespaces/default/pods", json=_pod(name, "node-1"))

            def scheduled() -> bool:
                items = api.get("/api/v1/namespaces/default/pods").json()["items"]
                return sum(1 for p in items if p["spec"].get("nodeName") == "node-1") == pods

            HARNESS.eventually(scheduled, "the pods scheduled by the first replica")
            rv = api.get("/api/v1/pods").json()["metadata"]["resourceVersion"]
            first.kill()
            killed = time.perf_counter()
            second.kubectl("taint", "nodes", "node-1", "maintenance=true:NoExecute")
            HARNESS.eventually(lambda: _leads(second, second_seen), "the second replica to lead")
            takeover = time.perf_counter() - killed

            def evicted() -> bool:
                items = api.get("/api/v1/namespaces/default/pods").json()["items"]
                return not any(p["metadata"]["name"].startswith("web-") for p in items)

            HARNESS.eventually(evicted, "the pods evicted by the second replica")
            all_gone = time.perf_counter() - killed
            deletions: Counter[str] = Counter()
            params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "1"}
            with api.stream("GET", "/api/v1/pods", params=params) as response:
                for line in response.iter_lines():
                    if line.strip():
                        event = json.loads(line)
                        if event["type"] == "DELETED":
                            deletions[event["object"]["metadata"]["name"]] += 1
            marked: Counter[str] = Counter()
            for event in api.get("/api/v1/namespaces/default/events").json()["items"]:
                if event.get("reason") == "TaintManagerEviction":
                    marked[event["involvedObject"]["name"]] += int(event.get("count") or 1)
            api.close()
        finally:
            if second is not None:
                second.kill()
            first.kill()
            etcd.stop()
    return {
        "pods": pods,
        "takeover": takeover,
        "all_gone": all_gone,
        "deletions": Counter(deletions[n] for n in names),
        "marked": Counter(marked[n] for n in names),
    }


def run_ha(pods: int) -> bool:
    print(f"== Two `kubetaint up --leader-elect` replicas on one etcd, leader SIGKILLed, {pods} pods")
    if ETCD.ETCD_BINARY is None or HARNESS.KUBECTL is None:
        print("-- skipped: etcd or kubectl is not installed")
        return True
    result = failover(pods)
    print(
        f"-- other replica leading {result['takeover']:.1f} s after the kill (lease duration 2 s), "
        f"all {pods} pods evicted after {result['all_gone']:.1f} s"
    )
    print(
        f"   pods by number of deletions: {dict(result['deletions'])}; "
        f"by number of TaintManagerEviction events: {dict(result['marked'])}"
    )
    return set(result["deletions"]) == {1} and 0 not in result["marked"]
