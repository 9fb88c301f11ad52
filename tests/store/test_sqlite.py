"""What only the SQLite store has: a file that outlives the process, its layout, the data-dir
lock and clear start-up errors."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from conformance import collect, pod, relabelled, rv, status_of, summary

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.store.interface import StoreError, StoreOptions
from kubetaint.store.sqlite import SqliteStore


def open_sqlite(data_dir: Path, **options: object) -> SqliteStore:
    return SqliteStore(data_dir, VirtualClock(), options=StoreOptions(**options))  # type: ignore[arg-type]


def test_objects_versions_and_history_survive_a_restart(tmp_path: Path) -> None:
    store = open_sqlite(tmp_path)
    a = store.create("pods", pod("a"))
    checkpoint = store.current_resource_version()
    store.update("pods", relabelled(a, x="1"))
    store.create("pods", pod("b"))
    store.close()

    reopened = open_sqlite(tmp_path)
    assert reopened.current_resource_version() == checkpoint + 2
    assert reopened.get("pods", "default", "a")["metadata"]["labels"] == {"x": "1"}
    stream = reopened.watch("pods", resource_version=str(checkpoint))
    assert summary(stream.drain()) == [("MODIFIED", "a"), ("ADDED", "b")]
    c = reopened.create("pods", pod("c"))
    assert rv(c) == checkpoint + 3
    assert summary(collect(stream, "c")) == [("ADDED", "c")]
    reopened.close()


def test_compaction_is_remembered_across_restarts(tmp_path: Path) -> None:
    store = open_sqlite(tmp_path, history_size=3)
    for i in range(10):
        store.create("pods", pod(f"p{i}"))
    store.close()
    reopened = open_sqlite(tmp_path, history_size=3)
    err = status_of(lambda: reopened.watch("pods", resource_version="2"))
    assert (err.code, err.reason, err.message) == (410, "Expired", "too old resource version: 2 (7)")
    kept = reopened.watch("pods", resource_version="7")
    assert summary(kept.drain()) == [("ADDED", "p7"), ("ADDED", "p8"), ("ADDED", "p9")]
    rows = (
        sqlite3.connect(tmp_path / "kubetaint.db").execute("SELECT min(rv), count(*) FROM changes").fetchone()
    )
    assert rows == (8, 3)
    reopened.close()


@pytest.mark.parametrize(
    ("prefix", "resource", "namespace", "name", "key"),
    [
        pytest.param("/registry", "pods", "default", "a", "/registry/pods/default/a", id="namespaced"),
        pytest.param("/registry", "nodes", "", "n1", "/registry/nodes/n1", id="cluster-scoped"),
        pytest.param(
            "/registry", "deployments.apps", "web", "d", "/registry/deployments/web/d", id="grouped"
        ),
        pytest.param("/kt/", "pods", "ns", "p", "/kt/pods/ns/p", id="a configurable prefix"),
    ],
)
def test_rows_carry_kube_apiserver_keys(
    tmp_path: Path, prefix: str, resource: str, namespace: str, name: str, key: str
) -> None:
    store = open_sqlite(tmp_path, prefix=prefix)
    store.create(resource, {"metadata": {"name": name, "namespace": namespace}, "spec": {}})
    db = sqlite3.connect(tmp_path / "kubetaint.db")
    assert db.execute("SELECT key, resource, namespace, name FROM objects").fetchall() == [
        (key, resource, namespace, name)
    ]
    db.close()
    store.close()


def test_the_file_is_in_wal_mode_and_a_returned_write_has_been_synced(tmp_path: Path) -> None:
    store = open_sqlite(tmp_path)
    assert store._db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert store._db.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL: the syncer fsyncs
    created = store.create("pods", pod("a"))
    assert store._syncer.durable == store._syncer.committed == rv(created)
    store.close()


def test_a_second_store_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    first = open_sqlite(tmp_path)
    with pytest.raises(StoreError) as err:
        open_sqlite(tmp_path)
    assert (
        str(err.value)
        == f"data directory {tmp_path} is in use by another kubetaint process (pid {os.getpid()})"
    )
    first.close()
    open_sqlite(tmp_path).close()


def test_a_corrupt_file_is_a_clear_start_up_error(tmp_path: Path) -> None:
    (tmp_path / "kubetaint.db").write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError) as err:
        open_sqlite(tmp_path)
    assert str(err.value) == (
        f"cannot open SQLite store {tmp_path / 'kubetaint.db'}: the file is damaged (file is not a database)"
    )
    (tmp_path / "kubetaint.db").unlink()
    open_sqlite(tmp_path).close()  # the failed attempt released the data-dir lock


def test_a_file_locked_by_another_program_is_a_clear_start_up_error(tmp_path: Path) -> None:
    open_sqlite(tmp_path).close()
    holder = sqlite3.connect(tmp_path / "kubetaint.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    with pytest.raises(StoreError) as err:
        SqliteStore(tmp_path, VirtualClock(), busy_timeout=0.05)
    assert str(err.value) == f"cannot open SQLite store {tmp_path / 'kubetaint.db'}: database is locked"
    holder.execute("ROLLBACK")
    holder.close()


def test_an_unusable_data_dir_is_a_clear_start_up_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError) as err:
        open_sqlite(tmp_path / "file" / "data")
    assert str(err.value).startswith(f"cannot use data directory {tmp_path / 'file' / 'data'}: ")


def test_a_closed_store_refuses_writes(tmp_path: Path) -> None:
    store = open_sqlite(tmp_path)
    store.close()
    store.close()
    assert status_of(lambda: store.create("pods", pod("a"))).code == 500


def test_reads_from_many_threads_see_the_latest_commit(tmp_path: Path) -> None:
    import threading

    store = open_sqlite(tmp_path)
    store.create("pods", pod("a"))
    seen: list[str] = []

    def read() -> None:
        seen.append(store.get("pods", "default", "a")["metadata"]["resourceVersion"])

    a = store.update("pods", relabelled(store.get("pods", "default", "a"), x="1"))
    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [a["metadata"]["resourceVersion"]] * 4
    store.close()


def test_concurrent_writers_share_one_commit_and_fail_alone(tmp_path: Path) -> None:
    import threading
    import time

    store = open_sqlite(tmp_path)
    store.create("pods", pod("taken"))
    before = store.current_resource_version()
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    outcomes: dict[str, object] = {}

    def write(name: str, body: dict) -> None:
        try:
            outcomes[name] = rv(store.create("pods", body))
        except Exception as err:
            outcomes[name] = err

    bodies = {
        "a": pod("a"),
        "taken": pod("taken"),
        "unserialisable": {**pod("unserialisable"), "x": object()},
        "b": pod("b"),
    }
    with store._committer.lock:  # hold the commit so that all four queue up behind it
        threads = [threading.Thread(target=write, args=item) for item in bodies.items()]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while len(store._committer._queue) < 4 and time.monotonic() < deadline:
            time.sleep(0.001)
    for thread in threads:
        thread.join()
    assert statements.count("COMMIT") == 1
    assert isinstance(outcomes["taken"], StatusError) and outcomes["taken"].reason == "AlreadyExists"
    assert isinstance(outcomes["unserialisable"], TypeError)
    assert sorted(v for v in outcomes.values() if isinstance(v, int)) == [before + 1, before + 2]
    assert store.current_resource_version() == before + 2
    assert sorted(o["metadata"]["name"] for o in store.list("pods").items) == ["a", "b", "taken"]
    store.close()


def test_a_write_has_reached_every_subscriber_when_it_returns(tmp_path: Path) -> None:
    store = open_sqlite(tmp_path)
    seen: list[tuple[str, str]] = []
    store.subscribe(lambda batch: seen.extend((e.type, e.object["metadata"]["name"]) for e in batch))
    store.defer_durability()  # as under `kubetaint up`: the write returns before the fsync
    store.create("pods", pod("a"))
    assert store.delivers_synchronously
    assert seen == [("ADDED", "a")]
    store.close()


@pytest.mark.usefixtures("default_mode")
def test_the_syncing_thread_checkpoints_the_log_after_enough_writes(tmp_path: Path) -> None:
    from kubetaint.store.sqlite_checkpoint import EVERY, WRITER_PAGES

    store = open_sqlite(tmp_path)
    assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone() == (WRITER_PAGES,)
    assert store._checkpointer is not None and store._checkpointer.runs == 0
    for i in range(EVERY + 1):
        store.create("pods", pod(f"p{i}"))  # each returns once synced
    assert store._checkpointer.runs >= 1
    store.close()
    reopened = open_sqlite(tmp_path)
    assert len(reopened.list("pods").items) == EVERY + 1
    reopened.close()


def test_in_reference_mode_sqlite_checkpoints_from_the_committing_writer(tmp_path: Path) -> None:
    from kubetaint.speed.reference import reference_mode_set

    with reference_mode_set(True):
        store = open_sqlite(tmp_path)
    assert store._checkpointer is None
    assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone() == (1000,)
    store.close()
