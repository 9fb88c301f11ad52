"""A short run of benchmarks/reliability.py: generated and mutated requests against real
`kubetaint up` processes (`--insecure-serving`, and the default HTTPS with tokens and Node,RBAC)
get no 5xx and never crash them, and concurrent
read-modify-write taint updates through the SQLite store lose nothing (issue 10, item 4)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str) -> ModuleType:
    """A benchmarks/ script by path, registered under its own name (the script imports its
    sibling `reliability_requests` that way, and dataclasses resolve through sys.modules)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


for _sibling in ("reliability_requests", "reliability_restart", "reliability_ha"):
    _load(_sibling)
reliability = _load("reliability")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    with reliability.FuzzServers(tmp_path_factory.mktemp("fuzz")) as running:
        yield running


@pytest.mark.parametrize(
    "mode", [0, 1], ids=["kubetaint up --insecure-serving", "kubetaint up with HTTPS, tokens and Node,RBAC"]
)
def test_fuzzed_requests_get_no_5xx_and_no_crash(servers, mode: int) -> None:  # type: ignore[no-untyped-def]
    target = servers.targets[mode]
    result = reliability.fuzz(target, examples=400, seed=mode)
    assert result.total == 400
    assert result.server_errors == []
    assert result.bad_error_bodies == []
    assert not [code for code in result.counts if code >= 500]
    assert reliability.alive(target)
    # the run reached past authentication and routing, not only error paths
    assert sum(n for code, n in result.counts.items() if code < 300) > 0
    assert sum(n for code, n in result.counts.items() if code in (400, 404, 405, 415)) > 0


def test_concurrent_read_modify_write_loses_no_update(tmp_path: Path) -> None:
    result = reliability.read_modify_write(clients=6, updates=5, nodes=2, data_dir=tmp_path)
    assert result.acknowledged == 30
    assert result.lost == 0
    assert result.unexpected == 0
