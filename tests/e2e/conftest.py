"""Fixtures: `kubetaint up` servers (real and virtual clock) on fresh data dirs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import UpServer


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    server = UpServer(tmp_path_factory.mktemp("up-real"), "--nodes", "3").start()
    yield server
    server.kill()


@pytest.fixture(scope="module")
def virtual_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    server = UpServer(tmp_path_factory.mktemp("up-virtual"), "--clock", "virtual", "--nodes", "2").start()
    yield server
    server.kill()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path
