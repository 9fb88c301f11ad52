"""When the SQLite store's writes are acknowledged: only after an fsync of the WAL that covers
them (`sqlite_sync.WalSyncer`), on the caller's thread, or, on a thread that deferred durability
(the API server's loop), through `when_durable`. The fsync is replaced by a gate the test opens,
so every assertion is about order, never about timing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conformance import WAIT, pod, relabelled, rv, status_of

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.store.sqlite import SqliteStore


class GatedFsync:
    """An fsync that blocks until `release()` (or fails with `error` when set)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.calls = 0
        self.error: OSError | None = None

    def __call__(self, fd: int) -> None:
        self.calls += 1
        if not self.gate.wait(WAIT):
            raise AssertionError("the test never released the fsync")
        if self.error is not None:
            raise self.error

    def release(self) -> None:
        self.gate.set()


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[tuple[SqliteStore, GatedFsync]]:
    store = SqliteStore(tmp_path, VirtualClock())
    fsync = GatedFsync()
    store._syncer._fsync = fsync
    yield store, fsync
    fsync.release()
    store.close()


def in_thread(target: object) -> tuple[threading.Thread, list[object]]:
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(target())  # type: ignore[operator]
        except Exception as err:
            outcome.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_the_sqlite_store_offers_deferred_durability(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path, VirtualClock())
    assert store.capabilities.durability is store
    store.close()


def test_a_write_returns_only_after_the_fsync_covering_it(gated: tuple[SqliteStore, GatedFsync]) -> None:
    store, fsync = gated
    thread, outcome = in_thread(lambda: store.create("pods", pod("a")))
    thread.join(0.2)
    assert thread.is_alive() and outcome == []  # committed, but the fsync has not finished
    fsync.release()
    thread.join(WAIT)
    assert [o["metadata"]["name"] for o in outcome] == ["a"]  # type: ignore[index]
    assert store._syncer.durable == rv(outcome[0])  # type: ignore[arg-type]


def test_a_deferring_thread_gets_its_write_at_once_and_is_told_when_it_is_durable(
    gated: tuple[SqliteStore, GatedFsync],
) -> None:
    store, fsync = gated
    store.defer_durability()
    created = store.create("pods", pod("a"))
    updated = store.update("pods", relabelled(created, x="1"))
    assert fsync.calls == 0  # nobody asked yet: no fsync at all
    assert store.get("pods", "default", "a")["metadata"]["labels"] == {"x": "1"}  # visible at once
    told: list[BaseException | None] = []
    done = threading.Event()
    assert store.when_durable(lambda error: (told.append(error), done.set())) is False
    assert not done.wait(0.2)
    fsync.release()
    assert done.wait(WAIT) and told == [None]
    assert store._syncer.durable >= rv(updated)
    assert store.when_durable(told.append) is True  # nothing new: durable
    assert told == [None]


def test_other_threads_still_wait_for_the_disk_when_one_thread_defers(
    gated: tuple[SqliteStore, GatedFsync],
) -> None:
    store, fsync = gated
    store.defer_durability()
    store.create("pods", pod("loop"))
    thread, outcome = in_thread(lambda: store.create("pods", pod("other")))
    thread.join(0.2)
    assert thread.is_alive()
    fsync.release()
    thread.join(WAIT)
    assert [o["metadata"]["name"] for o in outcome] == ["other"]  # type: ignore[index]


def test_a_failed_fsync_fails_every_wait_from_then_on(gated: tuple[SqliteStore, GatedFsync]) -> None:
    store, fsync = gated
    store.defer_durability()
    store.create("pods", pod("a"))
    fsync.error = OSError(5, "Input/output error")
    told: list[BaseException | None] = []
    done = threading.Event()
    store.when_durable(lambda error: (told.append(error), done.set()))
    fsync.release()
    assert done.wait(WAIT)
    assert isinstance(told[0], StatusError) and told[0].code == 500
    assert "Input/output error" in told[0].message
    store.create("pods", pod("b"))
    store.when_durable(told.append)
    assert len(told) == 2 and isinstance(told[1], StatusError)  # at once: failure is permanent
    thread, outcome = in_thread(lambda: store.create("pods", pod("c")))
    thread.join(WAIT)
    assert isinstance(outcome[0], StatusError) and outcome[0].code == 500


def test_closing_syncs_the_deferred_writes(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path, VirtualClock())
    store.defer_durability()
    created = store.create("pods", pod("a"))
    store.close()
    assert store._syncer.durable == rv(created)


@pytest.mark.parametrize(
    "write",
    [
        pytest.param("update", id="an update replaces the object a later read returns"),
        pytest.param("delete", id="a delete forgets the object"),
        pytest.param("dry-run", id="a dry-run update leaves the stored object as it was"),
    ],
)
@pytest.mark.usefixtures("default_mode")
def test_reads_reuse_decoded_objects_only_at_their_version(tmp_path: Path, write: str) -> None:
    store = SqliteStore(tmp_path, VirtualClock())
    created = store.create("pods", pod("a", node="n1"))
    assert store.get("pods", "default", "a") is created  # decoded once, shared read-only
    if write == "update":
        updated = store.update("pods", relabelled(created, x="1"))
        assert store.get("pods", "default", "a") is updated
        assert store.list("pods", field_selector="spec.nodeName=n1").items == [updated]
    elif write == "delete":
        store.delete("pods", "default", "a")
        assert status_of(lambda: store.get("pods", "default", "a")).code == 404
        assert store.list("pods").items == []
    else:
        store.update("pods", relabelled(created, x="1"), dry_run=True)
        assert store.get("pods", "default", "a") is created
    store.close()


def _gate_commits(store: SqliteStore) -> threading.Event:
    """Hold the syncing thread's commits of the open transaction until the event is set."""
    gate = threading.Event()
    commit_open = store._syncer._commit_open
    assert commit_open is not None

    def gated() -> None:
        gate.wait(WAIT)
        commit_open()

    store._syncer._commit_open = gated
    return gate


@pytest.mark.usefixtures("default_mode")
def test_a_deferring_threads_writes_share_one_commit_made_by_the_syncing_thread(
    gated: tuple[SqliteStore, GatedFsync],
) -> None:
    store, fsync = gated
    commits = _gate_commits(store)
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    store.defer_durability()
    created = [store.create("pods", pod(name)) for name in ("a", "b", "c")]
    assert store.get("pods", "default", "c") is created[-1]  # its own writes, at once
    thread, outcome = in_thread(lambda: store.get("pods", "default", "a"))
    thread.join(WAIT)
    assert isinstance(outcome[0], StatusError) and outcome[0].code == 404  # not committed yet
    assert statements.count("COMMIT") == 0
    told: list[BaseException | None] = []
    done = threading.Event()
    assert store.when_durable(lambda error: (told.append(error), done.set())) is False
    commits.set()
    fsync.release()
    assert done.wait(WAIT) and told == [None]
    assert statements.count("COMMIT") == 1 and store._syncer.durable == rv(created[-1])
    thread, outcome = in_thread(lambda: store.get("pods", "default", "a"))
    thread.join(WAIT)
    assert outcome == [created[0]]


@pytest.mark.usefixtures("default_mode")
def test_a_list_on_the_deferring_thread_commits_its_open_writes_first(
    gated: tuple[SqliteStore, GatedFsync],
) -> None:
    store, _ = gated
    commits = _gate_commits(store)  # the syncing thread does not get to commit them
    store.defer_durability()
    store.create("pods", pod("a"))
    assert store._committer.open_rv
    listed = store.list("pods")
    assert [o["metadata"]["name"] for o in listed.items] == ["a"]
    assert store._committer.open_rv == 0 and store._syncer.committed == int(listed.resource_version)
    commits.set()


def test_in_reference_mode_a_deferring_threads_write_is_committed_before_it_returns(tmp_path: Path) -> None:
    from kubetaint.speed.reference import reference_mode_set

    with reference_mode_set(True):
        store = SqliteStore(tmp_path, VirtualClock())
    store.defer_durability()
    created = store.create("pods", pod("a"))
    assert store._committer.open_rv == 0 and store._syncer.committed == rv(created)
    store.close()


@pytest.mark.usefixtures("default_mode")
def test_an_open_transaction_that_fails_to_commit_fails_every_wait_and_write(tmp_path: Path) -> None:
    import sqlite3

    store = SqliteStore(tmp_path, VirtualClock())
    commits = _gate_commits(store)
    store.defer_durability()
    store.create("pods", pod("a"))

    def disk_full(db: sqlite3.Connection, rv: int) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    store._committer._before_commit = disk_full  # type: ignore[assignment]
    told: list[BaseException | None] = []
    done = threading.Event()
    assert store.when_durable(lambda error: (told.append(error), done.set())) is False
    commits.set()
    assert done.wait(WAIT)
    assert isinstance(told[0], StatusError) and told[0].code == 500
    assert "database or disk is full" in told[0].message
    assert status_of(lambda: store.create("pods", pod("b"))).code == 500
    assert status_of(lambda: store.get("pods", "default", "a")).code == 404  # never committed
    store.close()
