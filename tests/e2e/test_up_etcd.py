"""`kubetaint up --store etcd://HOST:PORT` serves the same cluster as on SQLite, on a private etcd
(Debian's etcd-server) started on free ports and stopped by PID."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from .harness import KUBECTL, UpServer, eventually


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
def etcd_server(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "etcd").mkdir()
    server = ETCD.EtcdServer(tmp_path / "etcd")
    try:
        yield server.url
    finally:
        server.stop()


def test_up_on_etcd_schedules_around_a_taint_and_keeps_the_cluster_across_a_restart(
    tmp_path: Path, etcd_server: str
) -> None:
    store = "etcd://" + etcd_server.removeprefix("http://")
    server = UpServer(tmp_path, "--store", store, "--nodes", "2").start()
    try:
        assert "node-1" in server.kubectl("get", "nodes").stdout
        assert server.kubectl("taint", "nodes", "node-1", "dedicated=gpu:NoSchedule").stdout.strip() == (
            "node/node-1 tainted"
        )
        server.kubectl("run", "web", "--image=nginx")
        node = eventually(
            lambda: server.kubectl("get", "pod", "web", "-o", "jsonpath={.spec.nodeName}").stdout or None,
            "web to be scheduled",
        )
        assert node == "node-2"
    finally:
        server.stop()
    again = UpServer(tmp_path, "--store", store, "--nodes", "2").start()
    try:
        taints = again.kubectl("get", "node", "node-1", "-o", "jsonpath={.spec.taints[*].key}").stdout
        assert "dedicated" in taints.split()
        assert again.kubectl("get", "pod", "web", "-o", "jsonpath={.spec.nodeName}").stdout == "node-2"
    finally:
        again.stop()
