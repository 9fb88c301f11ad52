"""Reliability checks 3 and 4 (see reliability.py): `kill -9` of `kubetaint up` (SQLite) under
write load, then a restart on the same data dir; and a watch resumed across that restart from
the last resourceVersion it saw. Runs `python -m kubetaint up` through the e2e test harness."""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent


def load(relative: str, name: str) -> ModuleType:
    """A test helper module by path (tests/ is not a package on the benchmark's path)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HARNESS = load("tests/e2e/harness.py", "reliability_harness")
# The servers run with the harness's environment: make sure they find this checkout's src/.
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])


@dataclass
class Watcher:
    """Follows /api/v1/namespaces from a resourceVersion, keeping (type, name, rv) of every event."""

    events: list[tuple[str, str, int]] = field(default_factory=list)
    last_rv: str = ""

    def follow(self, server: Any, stop: threading.Event) -> None:
        params = {"watch": "true", "resourceVersion": self.last_rv, "timeoutSeconds": "60"}
        try:
            with server.stream("/api/v1/namespaces", params, timeout=70) as response:
                for line in response.iter_lines():
                    if line.strip():
                        event = json.loads(line)
                        meta = event["object"]["metadata"]
                        self.events.append((event["type"], meta["name"], int(meta["resourceVersion"])))
                        self.last_rv = meta["resourceVersion"]
                    if stop.is_set():
                        return
        except httpx.HTTPError:
            return  # the server was killed: resume from last_rv after the restart


@dataclass
class RestartResult:
    acknowledged: int
    lost: int
    elapsed: float
    events: int
    missing: int
    duplicated: int
    out_of_order: int


def _writers(
    server: Any, prefix: str, clients: int, stop: threading.Event, acked: list[str]
) -> list[threading.Thread]:
    def write(index: int) -> None:
        with server.client(timeout=5) as client:
            i = 0
            while not stop.is_set():
                name = f"{prefix}-{index}-{i}"
                body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
                try:
                    response = client.post("/api/v1/namespaces", json=body)
                except httpx.HTTPError:
                    return
                if response.status_code == 201:
                    acked.append(name)
                i += 1

    threads = [threading.Thread(target=write, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    return threads


def kill_and_resume(clients: int, seconds: float) -> RestartResult:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        server = HARNESS.UpServer(workdir, "--nodes", "0").start()
        watcher = Watcher(last_rv=server.get("/api/v1/namespaces").json()["metadata"]["resourceVersion"])
        watch_stop, stop = threading.Event(), threading.Event()
        follower = threading.Thread(target=watcher.follow, args=(server, watch_stop))
        follower.start()
        acked: list[str] = []
        started = time.perf_counter()
        writers = _writers(server, "before", clients, stop, acked)
        time.sleep(seconds)
        server.kill()  # SIGKILL mid-load
        elapsed = time.perf_counter() - started
        stop.set()
        for thread in [*writers, follower]:
            thread.join(10)
        restarted = HARNESS.UpServer(workdir, "--nodes", "0").start()
        try:
            stored = {i["metadata"]["name"] for i in restarted.get("/api/v1/namespaces").json()["items"]}
            lost = len(set(acked) - stored)
            # More writes after the restart, then the watch resumes from the last rv it saw.
            stop.clear()
            after: list[str] = []
            later = _writers(restarted, "after", 2, stop, after)
            time.sleep(1)
            stop.set()
            for thread in later:
                thread.join(10)
            final = restarted.get("/api/v1/namespaces").json()
            committed = {i["metadata"]["name"] for i in final["items"]} - {
                "default",
                "kube-system",
                "kube-public",
                "kube-node-lease",
            }
            watch_stop.set()
            params = {"watch": "true", "resourceVersion": watcher.last_rv, "timeoutSeconds": "2"}
            with restarted.stream("/api/v1/namespaces", params) as r:
                for line in r.iter_lines():
                    if line.strip():
                        event = json.loads(line)
                        meta = event["object"]["metadata"]
                        watcher.events.append((event["type"], meta["name"], int(meta["resourceVersion"])))
        finally:
            restarted.kill()
    added = [name for kind, name, _ in watcher.events if kind == "ADDED"]
    rvs = [rv for _, _, rv in watcher.events]
    return RestartResult(
        acknowledged=len(acked),
        lost=lost,
        elapsed=elapsed,
        events=len(watcher.events),
        missing=len(committed - set(added)),
        duplicated=len(added) - len(set(added)),
        out_of_order=sum(1 for a, b in itertools.pairwise(rvs) if b <= a),
    )


def run_restart(clients: int, seconds: float) -> bool:
    print(f"== kill -9 under write load (SQLite): {clients} writers for {seconds:.0f} s, then restart")
    result = kill_and_resume(clients, seconds)
    print(
        f"-- {result.acknowledged} creates acknowledged before SIGKILL "
        f"({result.acknowledged / result.elapsed:.0f}/s); after restart lost: {result.lost}"
    )
    print("== Watch resumed across the restart from its last resourceVersion")
    print(
        f"-- {result.events} events delivered; committed objects missing from the watch: {result.missing}, "
        f"delivered twice: {result.duplicated}, out of order: {result.out_of_order}"
    )
    return result.lost == 0 and result.missing == 0 and result.duplicated == 0 and result.out_of_order == 0
