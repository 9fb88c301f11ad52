"""Reliability check: `kubetaint up --store etcd://…` through etcd outages (docs/availability.md).

    PYTHONPATH=src .venv/bin/python benchmarks/reliability_outage.py [--seconds 10]

A private etcd is paused (SIGSTOP) for --seconds, then killed (SIGKILL) for --seconds and
restarted on its data. Throughout, /healthz is probed every 0.1 s (its latency and answers
counted) and a pod is created every second with `?timeout=5s` (its answers and latency
counted). Asserts: every probe answered within 1 s, every write answered (201, 503 or 504)
within its timeout plus 1 s, and after each outage a new pod is created and scheduled.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from reliability_restart import HARNESS, load

ETCD = load("tests/store/etcd_server.py", "reliability_outage_etcd")
PROBE_BOUND = 1.0
WRITE_TIMEOUT = 5.0
PODS = "/api/v1/namespaces/default/pods?timeout=5s"


class Traffic:
    """Probes and writes from two threads until stopped; answers and latencies by phase."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.phase = "healthy"
        self.probes: dict[str, list[tuple[int | str, float]]] = {}
        self.writes: dict[str, list[tuple[int | str, float]]] = {}
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._probe), threading.Thread(target=self._write)]
        self._count = 0

    def __enter__(self) -> Traffic:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def _timed(self, call: Any) -> tuple[int | str, float]:
        before = time.monotonic()
        try:
            code: int | str = call().status_code
        except httpx.HTTPError as err:
            code = type(err).__name__
        return code, time.monotonic() - before

    def _probe(self) -> None:
        with self.server.client(timeout=5) as client:
            while not self._stop.wait(0.1):
                self.probes.setdefault(self.phase, []).append(self._timed(lambda: client.get("/healthz")))

    def _write(self) -> None:
        with self.server.client(timeout=30) as client:
            while not self._stop.wait(1.0):
                self._count += 1
                pod = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"load-{self._count}"},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]},
                }
                phase = self.phase
                self.writes.setdefault(phase, []).append(
                    self._timed(lambda body=pod: client.post(PODS, json=body))
                )


def _scheduled_again(server: Any, name: str) -> None:
    with server.client(timeout=10) as client:
        HARNESS.eventually(lambda: client.get("/readyz").text == "ok", "/readyz to pass")
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"containers": [{"name": "a", "image": "nginx"}]},
        }
        assert client.post("/api/v1/namespaces/default/pods", json=pod).status_code == 201
        HARNESS.eventually(
            lambda: client.get(f"/api/v1/namespaces/default/pods/{name}").json()["spec"].get("nodeName"),
            f"{name} to be scheduled",
        )


def _report(kind: str, samples: dict[str, list[tuple[int | str, float]]], bound: float) -> None:
    for phase, answers in samples.items():
        codes = Counter(str(code) for code, _ in answers)
        slowest = max((seconds for _, seconds in answers), default=0.0)
        print(f"  {kind:7} {phase:8} {len(answers):4} answers {dict(codes)}  slowest {slowest:.3f} s")
        assert slowest < bound, f"{kind} during {phase}: {slowest:.3f} s"
        assert all(isinstance(code, int) for code, _ in answers), f"{kind} during {phase}: {codes}"


def outage(seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "etcd").mkdir()
        etcd = ETCD.EtcdServer(workdir / "etcd")
        up = None
        try:
            up = HARNESS.UpServer(
                workdir, "--store", "etcd://" + etcd.url.removeprefix("http://"), "--nodes", "1"
            )
            up.start()
            with Traffic(up) as traffic:
                time.sleep(2)
                etcd.pause()
                traffic.phase = "paused"
                time.sleep(seconds)
                etcd.resume()
                traffic.phase = "resumed"
                _scheduled_again(up, "after-pause")
                etcd.kill()
                traffic.phase = "killed"
                time.sleep(seconds)
                etcd.restart()
                traffic.phase = "restored"
                _scheduled_again(up, "after-kill")
                time.sleep(2)
            print(f"etcd outages of {seconds:.0f} s (SIGSTOP, then SIGKILL and restart):")
            _report("/healthz", traffic.probes, PROBE_BOUND)
            _report("create", traffic.writes, WRITE_TIMEOUT + 1)
        finally:
            if up is not None:
                up.kill()
            etcd.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    outage(parser.parse_args().seconds)


if __name__ == "__main__":
    main()
