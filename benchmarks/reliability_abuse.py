"""Issue 22's abusive requests against `kubetaint up` as users run it (HTTPS, Node,RBAC, SQLite),
each timed while a prober hits /healthz every 20 ms. One command:

    PYTHONPATH=src .venv/bin/python benchmarks/reliability_abuse.py [--idle 300]

For every reproducer it prints the status code, the time to the answer, and the slowest /healthz
answer meanwhile; then it opens --idle connections that send nothing (and one that sends half a
request) and times a new client's request. Exit 1 when a reproducer gets a 5xx, an answer takes
more than a second, or /healthz stops answering. Bounded: a few seconds in all.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
PODS = "/api/v1/namespaces/default/pods"
SELF_COPYING_PATCH = [{"op": "add", "path": "/spec/x", "value": ["a" * 30] * 10}] + [
    {"op": "copy", "from": "/spec/x", "path": "/spec/x/-"}
] * 20


def _load(relative: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HARNESS = _load("tests/e2e/harness.py", "abuse_harness")
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])


@dataclass
class Prober:
    """/healthz every 20 ms on its own connection; keeps the slowest answer and the failures."""

    client: httpx.Client
    slowest: float = 0.0
    failures: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.is_set():
            started = time.perf_counter()
            try:
                ok = self.client.get("/healthz").text == "ok"
            except httpx.HTTPError:
                ok = False
            self.slowest = max(self.slowest, time.perf_counter() - started)
            self.failures += not ok
            self.stop.wait(0.02)


def _timed(server: Any, send: Callable[[httpx.Client], httpx.Response]) -> tuple[int, float, float, int]:
    with server.client(timeout=30) as probing, server.client(timeout=60) as client:
        prober = Prober(probing)
        thread = threading.Thread(target=prober.run)
        thread.start()
        started = time.perf_counter()
        try:
            code = send(client).status_code
        except httpx.HTTPError:
            code = 0
        took = time.perf_counter() - started
        time.sleep(0.1)
        prober.stop.set()
        thread.join(5)
        return code, took, prober.slowest, prober.failures


def _watch_from_past_int64(client: httpx.Client) -> httpx.Response:
    """The time to the watch's response headers (the stream then waits for that version)."""
    params = {"watch": "1", "resourceVersion": str(2**63), "timeoutSeconds": "5"}
    response = client.send(client.build_request("GET", PODS, params=params), stream=True)
    response.close()
    return response


def reproducers() -> list[tuple[str, Callable[[httpx.Client], httpx.Response]]]:
    jsonpatch = {"Content-Type": "application/json-patch+json"}
    body = json.dumps(SELF_COPYING_PATCH)
    grace = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "grace"},
        "spec": {
            "nodeName": "node-1",
            "terminationGracePeriodSeconds": 2**63 - 1,
            "containers": [{"name": "c", "image": "nginx"}],
        },
    }
    euro = json.dumps(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "euro"}, "x€": 1, "spec": grace["spec"]},
        ensure_ascii=False,
    ).encode()
    digits = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: digits}}\nspec: {{priority: {'9' * 4301}}}\n"
    return [
        ("self-copying JSON patch", lambda c: c.patch(f"{PODS}/target", content=body, headers=jsonpatch)),
        (
            "self-copying JSON patch, dryRun=All",
            lambda c: c.patch(f"{PODS}/target", params={"dryRun": "All"}, content=body, headers=jsonpatch),
        ),
        ('unknown field "x€"', lambda c: c.post(PODS, content=euro)),
        (
            "YAML 4301-digit integer",
            lambda c: c.post(PODS, content=digits, headers={"Content-Type": "application/yaml"}),
        ),
        ("WATCH ?resourceVersion=2^63 (headers)", _watch_from_past_int64),
        ("create, grace period 2^63-1", lambda c: c.post(PODS, json=grace)),
        ("DELETE, grace period 2^63-1", lambda c: c.delete(f"{PODS}/grace")),
        ("?watch=0&watch=1", lambda c: c.get(f"{PODS}?watch=0&watch=1")),
        (
            "fieldSelector twice",
            lambda c: c.get(f"{PODS}?fieldSelector=spec.nodeName%3Dnode-1&fieldSelector="),
        ),
    ]


def run(idle: int) -> bool:
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        server = HARNESS.UpServer(Path(tmp), "--nodes", "2").start()
        try:
            with server.client() as admin:
                target = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "target"}}
                target["spec"] = {"containers": [{"name": "c", "image": "nginx"}]}
                assert admin.post(PODS, json=target).status_code == 201
            print(f"{'request':40} {'code':>4} {'answer s':>9} {'slowest /healthz s':>19}")
            for name, send in reproducers():
                code, took, slowest, failures = _timed(server, send)
                print(f"{name:40} {code:>4} {took:>9.3f} {slowest:>19.3f}")
                ok &= 0 < code < 500 and took < 1.0 and failures == 0
            host, port = server.url.removeprefix("https://").rsplit(":", 1)
            sockets = [socket.create_connection((host, int(port))) for _ in range(idle)]
            half = socket.create_connection((host, int(port)))
            half.sendall(b"\x16\x03\x01")  # the first bytes of a TLS handshake, and nothing more
            try:
                code, took, slowest, failures = _timed(server, lambda c: c.get("/api/v1/nodes"))
                print(
                    f"{f'GET nodes past {idle} idle connections':40} {code:>4} {took:>9.3f} {slowest:>19.3f}"
                )
                ok &= code == 200 and took < 1.0 and failures == 0
            finally:
                for sock in [*sockets, half]:
                    sock.close()
        finally:
            server.kill()
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--idle", type=int, default=300, help="idle connections held open")
    args = parser.parse_args(argv)
    ok = run(args.idle)
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
