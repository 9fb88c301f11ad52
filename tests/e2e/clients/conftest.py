"""One `kubetaint up` per test module (real clock, two worker nodes and the tainted control
plane), driven by the real clients through the kubeconfig it writes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..harness import UpServer


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    server = UpServer(tmp_path_factory.mktemp("up-clients"), "--nodes", "2").start()
    yield server
    server.kill()
