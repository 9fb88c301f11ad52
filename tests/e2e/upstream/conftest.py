"""Upstream's tests ported against `kubetaint up`: one server per module, on the virtual clock
(the e2e suites' waits are clock advances; the test/cmd scripts need nodes without a kubelet that
no node controller marks unreachable while they run)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..harness import UpServer


@pytest.fixture(scope="module")
def virtual_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    server = UpServer(tmp_path_factory.mktemp("up-upstream"), "--clock", "virtual", "--nodes", "2").start()
    yield server
    server.kill()


@pytest.fixture(scope="module")
def bare_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    """test/cmd's cluster: no hollow node; the test registers the nodes it names."""
    server = UpServer(tmp_path_factory.mktemp("up-test-cmd"), "--clock", "virtual", "--nodes", "0").start()
    server.kubectl("delete", "node", "control-plane")
    yield server
    server.kill()
