"""Speeds up the SQLite store's writes under `kubetaint up` by checkpointing its WAL in the
syncing thread, outside the write lock (off with `KUBETAINT_REFERENCE=1`: SQLite's automatic
checkpoints, made by the COMMIT that fills the log).

SQLite checkpoints a WAL database from the connection whose COMMIT made the log pass
`wal_autocheckpoint` pages: that COMMIT then copies the logged pages into the database file and
fsyncs both files, holding the store's write lock, so the event loop's next read or write waits
for it. With the event loop's writes committed by the syncing thread (`sqlite_commit`), that
thread runs `PRAGMA wal_checkpoint(PASSIVE)` on a connection of its own after a commit or sync,
once `EVERY` more writes have been committed, while the loop keeps writing. The log is started
afresh only by a COMMIT whose transaction began with the log fully copied, which a loop that
always has a transaction open rarely gives, so the writer keeps SQLite's own checkpoint at
`WRITER_PAGES` as the bound of the log's size: by then the thread has copied most of it.
A checkpoint changes where committed pages live, never what is committed or when it is durable.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable

log = logging.getLogger(__name__)

#: Committed writes (resourceVersions) between two checkpoints.
EVERY = 200
#: The writer's own `wal_autocheckpoint` (SQLite's default: 1000 pages).
WRITER_PAGES = 10000


class Checkpointer:
    """Passive checkpoints on a connection from `connect`, when `due` (called by one thread)."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], every: int = EVERY) -> None:
        self._connect = connect
        self._every = every
        self._done = 0
        self._conn: sqlite3.Connection | None = None
        #: Checkpoints run so far.
        self.runs = 0

    def due(self, committed_rv: int) -> None:
        """Checkpoint when `every` writes have been committed since the last checkpoint."""
        if committed_rv - self._done < self._every:
            return
        self._done = committed_rv
        try:
            if self._conn is None:
                self._conn = self._connect()
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            self.runs += 1
        except sqlite3.Error as err:  # the pages stay in the log, which the next one copies
            log.warning("WAL checkpoint failed: %s", err)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
