"""Group commit for the SQLite store: writers that arrive while a COMMIT is in progress are
committed together by the next one.

Each write still runs in its own savepoint (it succeeds or fails alone, with its own error); the
writes of one `run_many` (a store commit) are committed in the same transaction, in order.
COMMIT writes the WAL without fsyncing it; `committed(rv)` hands the batch to the store's
`sqlite_sync.WalSyncer`, which makes it durable before anyone acknowledges it.

A thread that defers durability (the API server's event loop) may leave its transaction open
(`run_many(keep_open=True)`): its writes return once executed, and the next COMMIT, whoever
makes it (`commit_open`, from the syncing thread; or another thread's batch), commits them with
everything written since. See `SqliteStore.commit` for who reads what meanwhile.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path

from kubetaint.api import errors
from kubetaint.store.interface import JSON, WatchEvent

#: A write: runs inside the shared transaction, returns (result, committed change or None).
#: It must raise before changing anything when it fails (savepoints undo the rest anyway).
Operation = Callable[[sqlite3.Connection], tuple[JSON, WatchEvent | None]]
#: Called before COMMIT with the batch's last resourceVersion; returns what to do after it.
BeforeCommit = Callable[[sqlite3.Connection, int], Callable[[], None] | None]


class _Pending:
    """One caller's writes: `operations` and, once committed, their results (an object or an
    error each, in order; shorter when `stop_at_failure` ended them) and events."""

    __slots__ = ("done", "error", "events", "keep_open", "operations", "results", "stop_at_failure")

    def __init__(self, operations: list[Operation], stop_at_failure: bool, keep_open: bool) -> None:
        self.operations = operations
        self.stop_at_failure = stop_at_failure
        self.keep_open = keep_open
        self.results: list[JSON | BaseException] = []
        self.events: list[WatchEvent] = []
        #: the whole batch failed (the file could not be written): nothing was committed
        self.error: BaseException | None = None
        self.done = False


class GroupCommitter:
    """Serialises writes on one connection; `lock` is held while a batch commits and publishes,
    so holding it guarantees no commit is in progress."""

    def __init__(
        self,
        db: sqlite3.Connection,
        path: Path,
        before_commit: BeforeCommit,
        publish: Callable[[list[WatchEvent]], None],
        committed: Callable[[int], None] = lambda rv: None,
    ) -> None:
        self._db = db
        self._path = path
        self._before_commit = before_commit
        self._publish = publish
        self._committed = committed
        self._queue: deque[_Pending] = deque()
        self._queue_lock = threading.Lock()
        self.lock = threading.Lock()
        self.closed = False
        #: The resourceVersion of the last write of the transaction left open (0: none is open).
        self.open_rv = 0
        #: Why the file can no longer be written: a transaction holding writes that had already
        #: returned failed to commit; every later write fails with it.
        self.broken: errors.StatusError | None = None

    def run_many(
        self, operations: list[Operation], *, stop_at_failure: bool = False, keep_open: bool = False
    ) -> list[JSON | BaseException]:
        """Run `operations` in order in the next commit: each one's result or error (with
        `stop_at_failure`, up to the first error). Raises when the commit itself failed.
        `keep_open`: return before COMMIT, leaving the transaction open (`commit_open`)."""
        pending = _Pending(operations, stop_at_failure, keep_open)
        with self._queue_lock:
            self._queue.append(pending)
        with self.lock:
            if not pending.done:
                self._commit_batch()
        if pending.error is not None:
            raise pending.error
        return pending.results

    def _commit_batch(self) -> None:
        with self._queue_lock:
            batch = list(self._queue)
            self._queue.clear()
        try:
            if self.closed:
                raise errors.internal_error("the store is closed")
            if self.broken is not None:
                raise self.broken
            after = self._execute(batch, keep_open=all(pending.keep_open for pending in batch))
        except errors.StatusError as failure:
            for pending in batch:
                pending.results, pending.events, pending.error = [], [], failure
            after = None
        finally:
            for pending in batch:
                pending.done = True
        if after is not None:
            after()
        for pending in batch:
            if pending.events:
                self._publish(pending.events)  # one caller's commit: one batch

    def commit_open(self) -> None:
        """COMMIT the transaction left open, if any (from any thread); raises the error that
        leaves the store broken when it fails."""
        with self.lock:
            if not self.open_rv:
                return
            try:
                after = self._commit(self.open_rv)
            except sqlite3.Error as err:
                raise self._failed(err) from None
        if after is not None:
            after()

    def _commit(self, last_rv: int) -> Callable[[], None] | None:
        """COMMIT the transaction in progress, whose last write is `last_rv` (0: none)."""
        db = self._db
        after = self._before_commit(db, last_rv) if last_rv else None
        db.execute("COMMIT")  # the WAL frames are written; `committed` has them synced
        if last_rv:
            self._committed(last_rv)  # before `open_rv` is cleared: one of them always covers it
        self.open_rv = 0
        return after

    def _failed(self, err: sqlite3.Error) -> errors.StatusError:
        """The transaction failed: rolled back; when it held writes that had already returned
        (a transaction left open), the store is broken from now on."""
        db = self._db
        if db.in_transaction:
            db.execute("ROLLBACK")
        failure = errors.internal_error(f"cannot write to {self._path}: {err}")
        if self.open_rv:
            self.broken = failure
            self.open_rv = 0
        return failure

    def _execute(self, batch: list[_Pending], *, keep_open: bool = False) -> Callable[[], None] | None:
        db = self._db
        try:
            if not self.open_rv:
                db.execute("BEGIN IMMEDIATE")
            last_rv = self.open_rv
            for pending in batch:
                for operation in pending.operations:
                    db.execute("SAVEPOINT write")
                    failed = False
                    try:
                        result, event = operation(db)
                        pending.results.append(result)
                        if event is not None:
                            pending.events.append(event)
                            last_rv = event.resource_version
                    except sqlite3.Error:
                        raise  # the file itself failed: the whole batch fails, nothing acknowledged
                    except Exception as err:  # this write alone fails, with its own error
                        db.execute("ROLLBACK TO write")
                        pending.results.append(err)
                        failed = True
                    db.execute("RELEASE write")
                    if failed and pending.stop_at_failure:
                        break
            if keep_open and last_rv:
                self.open_rv = last_rv
                return None
            return self._commit(last_rv)
        except sqlite3.Error as err:
            raise self._failed(err) from None
