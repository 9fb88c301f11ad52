"""`open_store` turns `kubetaint up --store` values into stores, with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from etcd_server import EtcdServer, free_port

from kubetaint.clock import VirtualClock
from kubetaint.store.etcd import EtcdStore
from kubetaint.store.factory import open_store
from kubetaint.store.interface import StoreError
from kubetaint.store.memory import MemoryStore
from kubetaint.store.sqlite import SqliteStore


def test_memory_needs_no_data_dir() -> None:
    store = open_store("memory", data_dir=None, clock=VirtualClock())
    assert isinstance(store, MemoryStore)


def test_sqlite_lives_in_the_data_dir(tmp_path: Path) -> None:
    store = open_store("sqlite", data_dir=tmp_path / "data", clock=VirtualClock())
    assert isinstance(store, SqliteStore)
    store.close()
    assert (tmp_path / "data" / "kubetaint.db").exists()


def test_etcd_by_url(etcd_server: EtcdServer) -> None:
    store = open_store(f"etcd://127.0.0.1:{etcd_server.client_port}", data_dir=None, clock=VirtualClock())
    assert isinstance(store, EtcdStore)
    store.close()


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        pytest.param(
            "mongodb",
            "unknown store 'mongodb': expected memory, sqlite or etcd://HOST:PORT",
            id="unknown kind",
        ),
        pytest.param(
            "sqlite", "the sqlite store needs a data directory (--data-dir)", id="sqlite without data dir"
        ),
        pytest.param(
            "etcd://nohost", "invalid etcd address 'etcd://nohost': expected etcd://HOST:PORT", id="no port"
        ),
    ],
)
def test_bad_store_values_are_clear_errors(kind: str, message: str) -> None:
    with pytest.raises(StoreError) as err:
        open_store(kind, data_dir=None, clock=VirtualClock())
    assert str(err.value) == message


def test_an_unreachable_etcd_is_a_clear_start_up_error() -> None:
    port = free_port()  # nothing listens there
    with pytest.raises(StoreError) as err:
        open_store(f"etcd://127.0.0.1:{port}", data_dir=None, clock=VirtualClock())
    assert str(err.value) == f"cannot reach etcd at http://127.0.0.1:{port}: [Errno 111] Connection refused"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param(
            "HTTPConnectionPool(host='127.0.0.1', port=1): Max retries exceeded with url: /v3/kv/range "
            "(Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f>: "
            "Failed to establish a new connection: [Errno 111] Connection refused'))",
            "[Errno 111] Connection refused",
            id="refused",
        ),
        pytest.param(
            "HTTPConnectionPool(host='nohost.invalid', port=2379): Max retries exceeded with url: /v3/kv/range "
            '(Caused by NameResolutionError("<urllib3.connection.HTTPConnection object at 0x7f>: Failed to '
            "resolve 'nohost.invalid' ([Errno -2] Name or service not known)\"))",
            "[Errno -2] Name or service not known",
            id="unknown host",
        ),
        pytest.param(
            "HTTPConnectionPool(host='10.255.255.1', port=2379): Max retries exceeded with url: /v3/kv/range "
            "(Caused by ConnectTimeoutError(<urllib3.connection.HTTPConnection object at 0x7f>, "
            "'Connection to 10.255.255.1 timed out. (connect timeout=10.0)'))",
            "connection timed out",
            id="timeout",
        ),
    ],
)
def test_connection_errors_are_reduced_to_their_cause(text: str, reason: str) -> None:
    from kubetaint.store.etcd_health import connection_reason

    assert connection_reason(text) == reason
