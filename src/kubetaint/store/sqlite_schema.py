"""Opening the SQLite store's file: the data-dir lock, connection settings and the schema.

The layout mirrors what kube-apiserver keeps in etcd: one row per object under its registry key
(`/registry/<plural>/<namespace>/<name>`), a global revision counter, and a bounded log of
changes so watches can resume from a resourceVersion (etcd's MVCC history, compacted likewise).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from pathlib import Path

from kubetaint.store.interface import StoreError
from kubetaint.store.sqlite_check import (
    PRIVATE_FILE,
    check_before_open,
    check_contents,
    companions,
    create_private,
    damaged,
    restrict,
)

DB_FILE = "kubetaint.db"
LOCK_FILE = "kubetaint.lock"
SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (key, value) VALUES ('rv', 0), ('compacted_rv', 0), ('schema', 1);
-- The current objects. `node` is spec.nodeName for pods (NULL otherwise): the pods-by-node index.
CREATE TABLE IF NOT EXISTS objects (
    resource TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    key TEXT NOT NULL,
    rv INTEGER NOT NULL,
    node TEXT,
    json TEXT NOT NULL,
    PRIMARY KEY (resource, namespace, name)
) WITHOUT ROWID;
-- Lists come in etcd key order (`<namespace>/<name>`), hence the `namespace || '/'` term.
CREATE INDEX IF NOT EXISTS objects_in_key_order ON objects (resource, (namespace || '/'), name);
CREATE INDEX IF NOT EXISTS objects_by_node ON objects (resource, node, (namespace || '/'), name)
    WHERE node IS NOT NULL;
-- Every committed change since `compacted_rv`, for watch resumption.
CREATE TABLE IF NOT EXISTS changes (
    rv INTEGER PRIMARY KEY,
    resource TEXT NOT NULL,
    type TEXT NOT NULL,
    json TEXT NOT NULL,
    old_json TEXT
);
"""


class DataDirLock:
    """An exclusive `flock` on `<data dir>/kubetaint.lock`, holding the owner's pid.

    flock (not a lock inside SQLite) because it is released by the kernel when the owner dies,
    even by kill -9, and a second opener can say which process holds it."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOCK_FILE
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        except OSError as err:
            raise StoreError(f"cannot use data directory {data_dir}: {err.strerror or err}") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(self._fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(self._fd)
            raise StoreError(
                f"data directory {data_dir} is in use by another kubetaint process (pid {owner})"
            ) from None
        restrict((self.path,))
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{os.getpid()}\n".encode(), 0)
        os.fsync(self._fd)

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = -1


def connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), usable from any thread that
    holds the caller's lock."""
    conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    return conn


def open_database(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """The write connection, with the schema in place; StoreError (one line) for a locked, empty,
    truncated or corrupt file or a row that is not a JSON object (`sqlite_check`). The file and
    its -wal/-shm companions are 0600."""
    conn: sqlite3.Connection | None = None
    existed = check_before_open(path)
    if not existed:
        create_private(path)
    restrict(companions(path))
    try:
        conn = connect(path, busy_timeout)
        # WAL: readers never block the writer and one fsync per commit suffices.
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"cannot open SQLite store {path}: cannot switch to WAL mode (got {mode})")
        if existed:
            check_contents(conn, path)
        # FULL while the schema is set up (every COMMIT fsyncs the WAL); see below for writes.
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("BEGIN IMMEDIATE")  # fails now, not at the first write, when someone holds the file
        conn.execute("COMMIT")
        conn.executescript("BEGIN IMMEDIATE;" + SCHEMA + "COMMIT;")
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise StoreError(f"cannot open SQLite store {path}: unknown schema version {version}")
        # NORMAL for the store's writes: COMMIT writes the WAL (safe from kill -9) without the
        # fsync; `sqlite_sync.WalSyncer` fsyncs it before any write is acknowledged, so an
        # acknowledged write survives power loss too, as with FULL, for one fsync per batch.
        conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.Error as err:
        if conn is not None:
            conn.close()
        if isinstance(err, sqlite3.DatabaseError) and not isinstance(err, sqlite3.OperationalError):
            raise damaged(path, err) from None  # "file is not a database", "malformed", ...
        raise StoreError(f"cannot open SQLite store {path}: {err}") from None
    except StoreError:
        if conn is not None:
            conn.close()
        raise
    return conn
