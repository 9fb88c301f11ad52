"""High availability end to end, over HTTP exactly as against a real cluster: two leader-elected
`kubetaint scheduler` and two `kubetaint controllers` processes against `kubetaint up
--no-controllers`, the leaders killed with SIGKILL and the others taking over with no pod
evicted twice; `kill -9` of `kubetaint up` (SQLite) under write load keeping every acknowledged
write; a watch resumed across the restart missing no event."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]

#: Short leases so a failover takes seconds (flags as kube-scheduler's).
FAST_ELECTION = (
    "--leader-elect-lease-duration=2",
    "--leader-elect-renew-deadline=1.5",
    "--leader-elect-retry-period=0.25",
)


class Component:
    """One `kubetaint scheduler|controllers` process; stdout lines collected by a thread."""

    def __init__(self, server: UpServer, *args: str) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kubetaint",
                *args,
                "--kubeconfig",
                str(server.kubeconfig),
                *FAST_ELECTION,
            ],
            env=server.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self._pumper = threading.Thread(target=self._pump, daemon=True)
        self._pumper.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())

    def leading(self) -> bool:
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return "started leading" in self.seen

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self._pumper.join(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


POD = """apiVersion: v1
kind: Pod
metadata: {name: %(name)s}
spec:
  schedulerName: kubetaint
  nodeSelector: {kubernetes.io/hostname: %(node)s}
  containers: [{name: web, image: nginx}]
"""


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[tuple[UpServer, list[Component]]]:
    server = UpServer(tmp_path, "--nodes", "2", "--no-controllers").start()
    components: list[Component] = []
    try:
        yield server, components
    finally:
        for component in components:
            component.kill()
        server.kill()


def _create_pod(server: UpServer, name: str, node: str) -> None:
    path = server.workdir / f"{name}.yaml"
    path.write_text(POD % {"name": name, "node": node})
    server.kubectl("apply", "-f", str(path))


def _node_of(server: UpServer, name: str) -> str:
    return server.kubectl("get", "pod", name, "-o", "jsonpath={.spec.nodeName}", ok=False).stdout.strip()


def _pod_events(server: UpServer, resource_version: str) -> list[tuple[str, str]]:
    """(type, pod name) of every pod change after `resource_version` (a 1 s watch)."""
    params = {"watch": "true", "resourceVersion": resource_version, "timeoutSeconds": "1"}
    seen = []
    with server.stream("/api/v1/pods", params) as response:
        for line in response.iter_lines():
            if line.strip():
                event = json.loads(line)
                seen.append((str(event["type"]), str(event["object"]["metadata"]["name"])))
    return seen


def _leader(components: list[Component]) -> Component:
    leaders = eventually(lambda: [c for c in components if c.leading()], "a leader")
    assert len(leaders) == 1
    return leaders[0]


def test_leaders_killed_the_others_take_over_and_no_pod_is_evicted_twice(
    plane: tuple[UpServer, list[Component]],
) -> None:
    server, components = plane
    schedulers = [Component(server, "scheduler", "--scheduler-name", "kubetaint") for _ in range(2)]
    controllers = [Component(server, "controllers") for _ in range(2)]
    components += schedulers + controllers
    first_scheduler, first_controllers = _leader(schedulers), _leader(controllers)
    for i in range(3):
        _create_pod(server, f"web-{i}", "node-1")
    for i in range(3):
        eventually(lambda i=i: _node_of(server, f"web-{i}") == "node-1", f"web-{i} scheduled")
    first_scheduler.kill()
    first_controllers.kill()
    taint_rv = server.get("/api/v1/pods").json()["metadata"]["resourceVersion"]
    server.kubectl("taint", "nodes", "node-1", "maintenance=true:NoExecute")
    _create_pod(server, "late", "node-2")
    eventually(lambda: _node_of(server, "late") == "node-2", "the new scheduler leader binds a pod")
    eventually(
        lambda: not server.kubectl("get", "pods", "-o", "name").stdout.count("web-"),
        "the new controllers leader evicts the pods on node-1",
    )
    assert _leader([s for s in schedulers if s is not first_scheduler])
    assert _leader([c for c in controllers if c is not first_controllers])
    deletions = Counter(
        name for kind, name in _pod_events(server, taint_rv) if kind == "DELETED" and name.startswith("web-")
    )
    assert deletions == {"web-0": 1, "web-1": 1, "web-2": 1}, f"a pod was evicted more than once: {deletions}"
    holders = server.kubectl(
        "get",
        "leases",
        "-n",
        "kube-system",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name}={.spec.leaseTransitions}{'\\n'}{end}",
    ).stdout.split()
    assert sorted(holders) == ["kube-controller-manager=1", "kube-scheduler=1"]


def test_kill_9_under_write_load_keeps_every_acknowledged_write_and_a_watch_resumes(tmp_path: Path) -> None:
    server = UpServer(tmp_path, "--nodes", "0").start()
    start_rv = server.get("/api/v1/namespaces").json()["metadata"]["resourceVersion"]
    acknowledged: list[str] = []
    stop = threading.Event()

    def write() -> None:
        with server.client(timeout=5) as client:
            i = 0
            while not stop.is_set():
                body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns-{i}"}}
                try:
                    response = client.post("/api/v1/namespaces", json=body)
                except httpx.HTTPError:
                    return
                if response.status_code == 201:
                    acknowledged.append(f"ns-{i}")
                i += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        eventually(lambda: len(acknowledged) >= 50, "50 acknowledged writes")
    finally:
        server.kill()
        stop.set()
    writer.join(10)
    restarted = UpServer(tmp_path, "--nodes", "0").start()
    try:
        stored = {item["metadata"]["name"] for item in restarted.get("/api/v1/namespaces").json()["items"]}
        assert set(acknowledged) <= stored
        watched: list[str] = []
        params = {"watch": "true", "resourceVersion": start_rv, "timeoutSeconds": "2"}
        with restarted.stream("/api/v1/namespaces", params) as response:
            for line in response.iter_lines():
                if not line.strip():
                    continue
                event = json.loads(line)
                watched.append(event["object"]["metadata"]["name"])
                if len(watched) == len(stored) - 4:  # all but the four system namespaces
                    break
        assert set(acknowledged) <= set(watched)
        assert len(watched) == len(set(watched))
    finally:
        restarted.kill()
