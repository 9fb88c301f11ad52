"""`kubetaint up --store etcd://…` while its etcd is away: a hung etcd (SIGSTOP) and a dead one
(SIGKILL, then restarted on the same ports and data). Health probes answer at once throughout,
/readyz names the failed etcd check, writes answer a 503/504 Status within their timeout, and
the cluster works again (writes, scheduling) once etcd is back."""

from __future__ import annotations

import importlib.util
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .harness import KUBECTL, UpServer, eventually

PROBE_SECONDS = 1.0


def _etcd_module() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "store" / "etcd_server.py"
    spec = importlib.util.spec_from_file_location("kubetaint_tests_etcd_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ETCD = _etcd_module()
pytestmark = [
    pytest.mark.skipif(ETCD.ETCD_BINARY is None, reason=ETCD.SKIP_REASON),
    pytest.mark.skipif(KUBECTL is None, reason="kubectl not found on PATH"),
]


@pytest.fixture
def etcd(tmp_path: Path) -> Iterator[Any]:
    (tmp_path / "etcd").mkdir()
    server = ETCD.EtcdServer(tmp_path / "etcd")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def up(tmp_path: Path, etcd: Any) -> Iterator[UpServer]:
    server = UpServer(
        tmp_path, "--store", "etcd://" + etcd.url.removeprefix("http://"), "--nodes", "1"
    ).start()
    try:
        yield server
    finally:
        server.kill()


def _probe_quickly(up: UpServer, seconds: float) -> set[int]:
    """Probe /healthz every 0.2 s for `seconds`: each answers within PROBE_SECONDS."""
    codes: set[int] = set()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        before = time.monotonic()
        codes.add(up.get("/healthz").status_code)
        assert time.monotonic() - before < PROBE_SECONDS
        time.sleep(0.2)
    return codes


def _readyz_reports_etcd_failed(up: UpServer) -> str | None:
    answer = up.get("/readyz?verbose")
    return (
        answer.text
        if answer.status_code == 500 and "[-]etcd failed: reason withheld" in answer.text
        else None
    )


def _scheduled(up: UpServer, name: str) -> str | None:
    return up.kubectl("get", "pod", name, "-o", "jsonpath={.spec.nodeName}", ok=False).stdout or None


def _write_during_the_outage(up: UpServer) -> None:
    before = time.monotonic()
    result = up.kubectl("run", "lost", "--image=nginx", "--request-timeout=5s", ok=False)
    assert time.monotonic() - before < 15
    assert result.returncode != 0
    assert "(ServiceUnavailable)" in result.stderr or "(Timeout)" in result.stderr, result.stderr


def _works_again(up: UpServer, name: str) -> None:
    eventually(lambda: up.get("/readyz").text == "ok", "/readyz to pass")
    up.kubectl("run", name, "--image=nginx")
    assert eventually(lambda: _scheduled(up, name), f"{name} to be scheduled") == "node-1"


def test_a_hung_etcd_fails_health_checks_and_writes_promptly_and_the_cluster_resumes(
    up: UpServer, etcd: Any
) -> None:
    up.kubectl("run", "before", "--image=nginx")
    etcd.pause()
    try:
        text = eventually(lambda: _readyz_reports_etcd_failed(up), "/readyz to report etcd failed")
        assert text.endswith("readyz check failed\n")
        assert "[-]etcd-readiness failed: reason withheld" in text
        assert _probe_quickly(up, 3) == {500}  # kube-apiserver's /healthz includes the etcd check
        assert "[-]etcd failed: reason withheld\nlivez check failed" in up.get("/livez").text
        _write_during_the_outage(up)
    finally:
        etcd.resume()
    _works_again(up, "after")
    assert up.get("/healthz").text == "ok"


def _watch_in_background(up: UpServer) -> tuple[threading.Event, list[str]]:
    """A pod watch that sets the returned event when its stream ends, and the lines it got."""
    ended = threading.Event()
    lines: list[str] = []

    def follow() -> None:
        with up.stream("/api/v1/namespaces/default/pods", {"watch": "1"}, timeout=120) as stream:
            assert stream.status_code == 200
            for line in stream.iter_lines():
                lines.append(line)
        ended.set()

    threading.Thread(target=follow, daemon=True).start()
    return ended, lines


def test_a_killed_etcd_restarted_on_its_data_serves_the_same_cluster_again(up: UpServer, etcd: Any) -> None:
    up.kubectl("run", "before", "--image=nginx")
    assert eventually(lambda: _scheduled(up, "before"), "before to be scheduled") == "node-1"
    watch_ended, lines = _watch_in_background(up)
    eventually(lambda: lines, "the watch to start")  # its ADDED event of `before`
    etcd.kill()
    assert watch_ended.wait(15), "a watch etcd ended did not end for its client"  # which re-lists
    eventually(lambda: _readyz_reports_etcd_failed(up), "/readyz to report etcd failed")
    _probe_quickly(up, 2)
    _write_during_the_outage(up)
    etcd.restart()
    _works_again(up, "after")
    names = up.kubectl("get", "pods", "-o", "jsonpath={.items[*].metadata.name}").stdout.split()
    assert sorted(names) == ["after", "before"]
