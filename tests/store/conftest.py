"""Store fixtures: `open_store` opens fresh stores of one backend (parametrised over memory,
SQLite and etcd) and closes them afterwards; `etcd_server` is one private etcd per session."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from etcd_server import ETCD_BINARY, SKIP_REASON, EtcdServer

from kubetaint.clock import VirtualClock
from kubetaint.store.interface import Store, StoreOptions

BACKENDS = ["memory", "sqlite", "etcd"]
_prefixes = itertools.count()


@pytest.fixture(scope="session")
def etcd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    if ETCD_BINARY is None:
        pytest.skip(SKIP_REASON)
    server = EtcdServer(tmp_path_factory.mktemp("etcd"))
    yield server
    server.stop()


def open_backend(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, history_size: int, index: int
) -> Store:
    clock = VirtualClock()
    if backend == "memory":
        from kubetaint.store.memory import MemoryStore

        return MemoryStore(clock, options=StoreOptions(history_size=history_size))
    if backend == "sqlite":
        from kubetaint.store.sqlite import SqliteStore

        return SqliteStore(tmp_path / f"data-{index}", clock, options=StoreOptions(history_size=history_size))
    from kubetaint.store.etcd import EtcdStore

    server: EtcdServer = request.getfixturevalue("etcd_server")
    prefix = f"/test-{next(_prefixes)}/registry"
    return EtcdStore(server.url, clock, options=StoreOptions(prefix=prefix, history_size=history_size))


@pytest.fixture(params=BACKENDS)
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    opened: list[Store] = []
    backend: str = request.param

    def open_one(*, history_size: int = 100_000) -> Store:
        store = open_backend(backend, tmp_path, request, history_size, len(opened))
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()
