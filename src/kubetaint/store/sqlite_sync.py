"""Making the SQLite store's commits durable off the writer's path: the WAL is fsynced by a
background thread, and a write is acknowledged only once a sync that covers it has finished.

The writer connection runs with synchronous=NORMAL, so COMMIT appends the transaction to the WAL
(`write(2)`, already safe from the process dying) and returns without an fsync. This thread then
fsyncs the WAL file and marks every commit made before the fsync started as durable. One fsync
covers all commits made meanwhile (group commit), and the writer keeps working while the disk
syncs. The WAL is a log: after a power loss SQLite recovers a prefix of it, so a commit that was
fsynced survives with every commit before it, exactly what synchronous=FULL gives per commit.

Progress is counted in resourceVersions: `committed(rv)` after each COMMIT, `durable` once synced.
An fsync failure is permanent (the kernel may have dropped the dirty pages; a retry could report
success for data that is gone), so every later wait fails too.

The thread also commits the transaction a deferring writer leaves open (`commit_open`, see
`sqlite_commit`): as soon as it gets to run after such a write (`commit_soon`), and before each
fsync, so that a sync covers every write made before it was asked for.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from kubetaint.api import errors

#: Told when the commits it waited for are durable: None, or the error that prevents it.
DurableCallback = Callable[[BaseException | None], None]
Fsync = Callable[[int], None]


class WalSyncer:
    """Fsyncs `<db>-wal` in a daemon thread whenever commits are waiting for it."""

    def __init__(
        self,
        db_path: Path,
        *,
        fsync: Fsync = os.fsync,
        commit_open: Callable[[], None] | None = None,
        after_sync: Callable[[int], None] | None = None,
    ) -> None:
        self._wal = Path(f"{db_path}-wal")
        self._dir = db_path.parent
        self._fsync = fsync
        #: Commits the writer's open transaction, if any (raises when that fails).
        self._commit_open = commit_open
        #: Told, in this thread after each commit or sync it made (and its callbacks), the last
        #: version committed.
        self._after_sync = after_sync
        #: A deferring writer has left writes in an open transaction since the thread last looked.
        self._commit_wanted = False
        self._fd = -1
        self._inode = -1
        self._cond = threading.Condition()
        self.committed = 0
        self.durable = 0
        #: The highest version someone waits for: the thread syncs only on demand.
        self._wanted = 0
        self._waiting: list[tuple[int, DurableCallback]] = []
        self._error: BaseException | None = None
        self._closing = False
        self._thread: threading.Thread | None = None

    # the writer's side ------------------------------------------------------------------------

    def commit(self, rv: int) -> None:
        """A COMMIT up to `rv` has returned: its WAL frames are written, not yet synced."""
        with self._cond:  # no wake-up: the thread syncs when someone waits
            self.committed = max(self.committed, rv)

    def wait(self) -> None:
        """Block until everything committed so far is durable (StatusError 500 when it cannot be)."""
        with self._cond:
            target = self.committed
            if self.durable < target:
                self._want(target)
            while self.durable < target and self._error is None:
                self._cond.wait()
            if self.durable < target:
                raise self._failure()

    def commit_soon(self) -> None:
        """A deferring writer has left writes in an open transaction: have the thread commit them
        (without an fsync unless someone waits)."""
        if self._commit_wanted:
            return  # the thread has not looked yet: it commits these too
        with self._cond:
            self._commit_wanted = True
            self._start()
            self._cond.notify_all()

    def when_durable(self, callback: DurableCallback, written: int = 0) -> bool:
        """True when everything committed so far, and the writes up to `written` left in an open
        transaction, are already durable (the callback is not called); otherwise `callback` runs
        once they are (or with the error that prevents it), in this syncer's thread."""
        with self._cond:
            target = max(self.committed, written)
            if self.durable >= target:
                return True
            if self._error is not None:
                error: BaseException | None = self._failure()
            else:
                self._waiting.append((target, callback))
                self._want(target)
                return False
        callback(error)
        return False

    def fail(self, error: BaseException) -> None:
        """Writes that had returned can no longer be made durable: every wait fails from now on."""
        with self._cond:
            if self._error is None:
                self._error = error
            ready = [callback for _, callback in self._waiting]
            self._waiting = []
            failure = self._failure()
            self._cond.notify_all()
        for callback in ready:
            callback(failure)

    def close(self) -> None:
        """Sync what is committed, then stop the thread (idempotent). Call after the last write."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()
        elif self.durable < self.committed and self._error is None:
            self._sync_once()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    # the syncing thread -------------------------------------------------------------------------

    def _want(self, rv: int) -> None:
        """Called holding the lock: have the thread sync up to at least `rv`."""
        self._wanted = max(self._wanted, rv)
        self._cond.notify_all()
        self._start()

    def _start(self) -> None:
        """Called holding the lock: the thread runs (unless closing)."""
        if self._thread is None and not self._closing:
            self._thread = threading.Thread(target=self._run, name="kubetaint-wal-sync", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self.durable >= self._wanted and not self._commit_wanted and not self._closing:
                    self._cond.wait()
                if self._error is not None:
                    return  # syncing has failed for good
                syncing = self.durable < self._wanted
                if not syncing and not self._commit_wanted:
                    if self.durable >= self.committed:
                        return  # closing, nothing left to sync
                    syncing = True
                self._commit_wanted = False
            self._sync_once(fsync=syncing)

    def _commit_pending(self) -> BaseException | None:
        """Commit the writer's open transaction; a failure is permanent (its writes had returned)."""
        if self._commit_open is None:
            return None
        try:
            self._commit_open()
        except errors.StatusError as err:
            return err
        return None

    def _sync_once(self, *, fsync: bool = True) -> None:
        """Commit the open transaction, then (`fsync`) make every commit so far durable."""
        error = self._commit_pending()
        if error is None and not fsync:
            if self._after_sync is not None:
                self._after_sync(self.committed)
            return
        with self._cond:
            target = self.committed  # every commit up to here has written its frames
        try:
            if error is None:
                self._fsync(self._wal_fd())
        except OSError as err:
            error = err
        with self._cond:
            if error is None:
                self.durable = max(self.durable, target)
            elif self._error is None:
                self._error = error
            ready = [cb for rv, cb in self._waiting if rv <= self.durable or self._error is not None]
            self._waiting = [w for w in self._waiting if w[0] > self.durable and self._error is None]
            failure = self._failure() if self._error is not None else None
            self._cond.notify_all()
        for callback in ready:
            callback(failure)
        if failure is None and self._after_sync is not None:
            self._after_sync(self.committed)

    def _wal_fd(self) -> int:
        """A descriptor of the WAL file, reopened if SQLite replaced the file; the directory is
        synced when the file is (re)opened, so that its entry survives too."""
        inode = os.stat(self._wal).st_ino
        if inode != self._inode:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
            self._fd = os.open(self._wal, os.O_RDONLY)
            self._inode = os.fstat(self._fd).st_ino
            directory = os.open(self._dir, os.O_RDONLY)
            try:
                self._fsync(directory)
            finally:
                os.close(directory)
        return self._fd

    def _failure(self) -> errors.StatusError:
        if isinstance(self._error, errors.StatusError):  # the open transaction failed to commit
            return self._error
        return errors.internal_error(f"cannot sync {self._wal}: {self._error}")
