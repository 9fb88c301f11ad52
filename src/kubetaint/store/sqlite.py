"""The embedded SQLite store: the default for `kubetaint up`, one file in the data directory.

Same semantics as the memory store (see `kubetaint.store.interface`), made durable the way
kube-apiserver's etcd storage is: one transaction per write (counter row bumped, object row
written, change logged), acknowledged only after the WAL holding it has been fsynced
(`sqlite_sync.WalSyncer`, one fsync for every commit made meanwhile). Nothing is cached that
could go stale: every read goes to the file (per-thread read connections see the latest commit;
WAL lets them run while a write is in progress).

Threads: any thread may call any method. Writes are serialised on one connection; writers that
arrive while a commit is in progress share the next commit (`sqlite_commit.GroupCommitter`), each
in its own savepoint. Subscribers run after commit, in commit order (`watch.Dispatcher`).

A write returns once durable, except on a thread that called `defer_durability()` (the API
server's event loop): there it returns once executed, and the thread must not acknowledge it to
anyone outside the process before `when_durable` says it has been committed and synced. The
loop keeps serving while the disk syncs. Its writes share transactions: each is executed in the
transaction its thread left open, which the syncing thread commits a few milliseconds later (at
once when someone waits for durability), with every write made meanwhile: one COMMIT for many
writes, made off the loop (off in reference mode: each write is committed before it returns).
Until then that thread reads its own writes through the writing connection (`get`; `list`,
`watch` and `current_resource_version` commit first), and other threads read the last commit.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from kubetaint.api import errors
from kubetaint.api.selectors import FieldSelector, LabelSelector, parse_field_selector, parse_label_selector
from kubetaint.clock.base import Clock
from kubetaint.speed.reference import reference_mode
from kubetaint.store.base import StoreBase
from kubetaint.store.changes import BatchHandler, ChangeBatch
from kubetaint.store.interface import (
    JSON,
    Capabilities,
    Create,
    Delete,
    EventType,
    ListResult,
    Result,
    StoreOptions,
    Update,
    WatchEvent,
    WriteOp,
    object_key,
    single_writes,
)
from kubetaint.store.mutation import (
    check_delete_preconditions,
    key_order,
    parse_resource_version,
    prepare_create,
    prepare_update,
    registry_key,
    too_old,
    with_resource_version,
)
from kubetaint.store.snapshot import list_at, list_origin, select_page
from kubetaint.store.sqlite_checkpoint import WRITER_PAGES, Checkpointer
from kubetaint.store.sqlite_commit import GroupCommitter, Operation
from kubetaint.store.sqlite_schema import DB_FILE, DataDirLock, connect, open_database
from kubetaint.store.sqlite_sync import DurableCallback, WalSyncer
from kubetaint.store.watch import BufferedWatch, Dispatcher, WatchFilter

_NEXT_RV = "UPDATE meta SET value = value + 1 WHERE key = 'rv' RETURNING value"
_GET = "SELECT json FROM objects WHERE resource = ? AND namespace = ? AND name = ?"
_GET_RV = "SELECT rv, json FROM objects WHERE resource = ? AND namespace = ? AND name = ?"
_INSERT = "INSERT INTO objects (resource, namespace, name, key, rv, node, json) VALUES (?, ?, ?, ?, ?, ?, ?)"
_UPDATE = "UPDATE objects SET rv = ?, node = ?, json = ? WHERE resource = ? AND namespace = ? AND name = ?"
_DELETE = "DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?"
_LOG = "INSERT INTO changes (rv, resource, type, json, old_json) VALUES (?, ?, ?, ?, ?)"


def _dumps(obj: JSON) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _node_of(resource: str, obj: JSON) -> str | None:
    return str((obj.get("spec") or {}).get("nodeName") or "") if resource == "pods" else None


class _ThreadReader(threading.local):
    """Each thread's read-only connection, None until the thread first reads."""

    conn: sqlite3.Connection | None = None


class SqliteStore(StoreBase):
    """Objects in `<data_dir>/kubetaint.db`; the data dir is locked against other processes."""

    #: A write dispatches its commit's batch before it returns (`commit`), as the memory store
    #: does: components may keep what their informers deliver instead of reading the file back.
    delivers_synchronously = True

    def __init__(
        self,
        data_dir: str | Path,
        clock: Clock,
        *,
        options: StoreOptions | None = None,
        uid_factory: Callable[[], str] | None = None,
        busy_timeout: float = 5.0,
    ) -> None:
        self._clock = clock
        self.capabilities = Capabilities(durability=self)
        self._options = options or StoreOptions()
        self._uid = uid_factory or (lambda: str(uuid.uuid4()))
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / DB_FILE
        self._busy_timeout = busy_timeout
        self._lock_file = DataDirLock(self.data_dir)
        try:
            self._db = open_database(self.path, busy_timeout)
        except BaseException:
            self._lock_file.release()
            raise
        self._dispatcher = Dispatcher()
        self._compacted = int(
            self._db.execute("SELECT value FROM meta WHERE key = 'compacted_rv'").fetchone()[0]
        )
        #: False in reference mode (read when the store opens): a deferring thread's writes are
        #: committed before they return, each batch in a transaction of its own, and SQLite
        #: checkpoints the log from the committing writer.
        self._share_transactions = not reference_mode()
        #: Checkpoints in the syncing thread (sqlite_checkpoint), outside the write lock.
        self._checkpointer: Checkpointer | None = None
        if self._share_transactions:
            self._checkpointer = Checkpointer(lambda: connect(self.path, busy_timeout))
            self._db.execute(f"PRAGMA wal_autocheckpoint = {WRITER_PAGES}")
        self._syncer = WalSyncer(
            self.path,
            commit_open=self._commit_for_syncer,
            after_sync=self._checkpointer.due if self._checkpointer is not None else None,
        )
        self._deferred: frozenset[int] = frozenset()
        self._committer = GroupCommitter(
            self._db, self.path, self._before_commit, self._publish, self._syncer.commit
        )
        self._local = _ThreadReader()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        #: Decoded objects by key, with the resourceVersion they were decoded at: a row read at
        #: that same version reuses the object instead of parsing its JSON again (a version is
        #: one committed write, so the object cannot differ). kube-apiserver's watch cache keeps
        #: every object decoded the same way. Objects handed out are read-only (interface).
        self._decoded: dict[tuple[str, str, str], tuple[int, JSON]] = {}
        #: False in reference mode (read when the store opens): every read parses its row
        self._reuse = not reference_mode()

    # connections -------------------------------------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        conn = self._local.conn
        if conn is None:
            if self._closed:
                raise errors.internal_error("the store is closed")
            conn = connect(self.path, self._busy_timeout)
            conn.execute("PRAGMA query_only = ON")
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    # reads -------------------------------------------------------------------------------

    def _own_writes_open(self) -> bool:
        """Whether the calling thread defers durability and writes are left uncommitted."""
        return bool(self._committer.open_rv) and threading.get_ident() in self._deferred

    def _settle(self) -> None:
        """Before a read that is not a `get`: the calling thread's open transaction committed."""
        if self._own_writes_open():
            self._commit_open()

    def _commit_for_syncer(self) -> None:
        self._committer.commit_open()

    def _commit_open(self) -> None:
        try:
            self._committer.commit_open()
        except errors.StatusError as failure:
            self._syncer.fail(failure)
            raise

    def get(self, resource: str, namespace: str, name: str) -> JSON:
        if self._own_writes_open():  # its own writes, not committed yet: the writing connection
            with self._committer.lock:
                row = self._db.execute(_GET_RV, (resource, namespace, name)).fetchone()
        else:
            row = self._reader().execute(_GET_RV, (resource, namespace, name)).fetchone()
        if row is None:
            raise errors.not_found(resource, name)
        return self._decode((resource, namespace, name), row[0], row[1])

    def _decode(self, key: tuple[str, str, str], rv: int, text: str) -> JSON:
        """The object stored under `key` at `rv`, parsed from `text` unless decoded before."""
        known = self._decoded.get(key)
        if known is not None and known[0] == rv:
            return known[1]
        obj: JSON = json.loads(text)
        if not self._reuse:
            return obj
        if known is None or known[0] < rv:  # a reader on an older snapshot keeps the newer one
            self._decoded[key] = (rv, obj)
        return obj

    def _remember(self, resource: str, obj: JSON) -> JSON:
        """Keep a committed write's object for later reads."""
        if not self._reuse:
            return obj
        namespace, name = object_key(obj)
        rv = int(obj["metadata"]["resourceVersion"])
        known = self._decoded.get((resource, namespace, name))
        if known is None or known[0] < rv:
            self._decoded[(resource, namespace, name)] = (rv, obj)
        return obj

    def current_resource_version(self) -> int:
        self._settle()
        return int(self._reader().execute("SELECT value FROM meta WHERE key = 'rv'").fetchone()[0])

    def list(
        self,
        resource: str,
        *,
        namespace: str = "",
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = 0,
        continue_token: str | None = None,
        resource_version: int | None = None,
    ) -> ListResult:
        labels = parse_label_selector(label_selector)
        fields = parse_field_selector(field_selector, resource)
        self._settle()
        start, snapshot = list_origin(continue_token, resource_version)
        node = fields.exact_value("spec.nodeName") if resource == "pods" else None
        conn = self._reader()
        conn.execute("BEGIN")  # one snapshot for the version and the rows
        try:
            list_rv = int(conn.execute("SELECT value FROM meta WHERE key = 'rv'").fetchone()[0])
            if snapshot is not None and snapshot != list_rv:
                return self._list_at(
                    conn,
                    resource,
                    snapshot,
                    list_rv,
                    namespace=namespace,
                    labels=labels,
                    fields=fields,
                    limit=limit,
                    start=start,
                )
            return select_page(
                self._scan(conn, resource, namespace, node, start),
                lambda row: self._decode((resource, row[0], row[1]), row[2], row[3]),
                labels=labels,
                fields=fields,
                limit=limit,
                list_rv=list_rv,
            )
        finally:
            conn.execute("COMMIT")

    def _list_at(
        self,
        conn: sqlite3.Connection,
        resource: str,
        snapshot: int,
        current: int,
        *,
        namespace: str,
        labels: LabelSelector,
        fields: FieldSelector,
        limit: int,
        start: tuple[str, str] | None,
    ) -> ListResult:
        """A page of the state at `snapshot` (in `conn`'s read transaction), rebuilt from the
        change log."""
        compacted = int(conn.execute("SELECT value FROM meta WHERE key = 'compacted_rv'").fetchone()[0])
        objects = (
            ((ns, name), self._decode((resource, ns, name), rv, text))
            for ns, name, rv, text in self._scan(conn, resource, namespace, None, None)
        )
        rows = conn.execute(
            "SELECT rv, type, json, old_json FROM changes WHERE rv > ? AND resource = ? ORDER BY rv",
            (snapshot, resource),
        )
        later = (
            WatchEvent(kind, resource, json.loads(text), rv, json.loads(old) if old is not None else None)
            for rv, kind, text, old in rows
        )
        return list_at(
            objects,
            later,
            snapshot=snapshot,
            newest=current,
            compacted=compacted,
            namespace=namespace,
            start=start,
            limit=limit,
            labels=labels,
            fields=fields,
        )

    @staticmethod
    def _scan(
        conn: sqlite3.Connection,
        resource: str,
        namespace: str,
        node: str | None,
        start: tuple[str, str] | None,
    ) -> Iterator[tuple[str, str, int, str]]:
        where = ["resource = ?"]
        params: list[Any] = [resource]
        source = "objects INDEXED BY objects_in_key_order"
        if node is not None:
            source = "objects INDEXED BY objects_by_node"  # the planner would scan all pods instead
            where.append("node = ?")
            params.append(node)
        if namespace:
            where.append("namespace || '/' = ?")
            params.append(namespace + "/")
        if start is not None:
            where.append("(namespace || '/', name) > (?, ?)")
            params.extend(key_order(start))
        order = "name" if namespace else "namespace || '/', name"  # one namespace: by name, no sort
        sql = f"SELECT namespace, name, rv, json FROM {source} WHERE {' AND '.join(where)} ORDER BY {order}"
        yield from conn.execute(sql, params)

    # writes ------------------------------------------------------------------------------

    def commit(self, ops: Sequence[WriteOp], *, stop_at_failure: bool = False) -> builtins.list[Result]:
        """`Store.commit` in one transaction (possibly shared with concurrent writers), each write
        in its own savepoint; returns once durable (unless this thread defers that), after the
        subscribers were told."""
        writes = builtins.list(single_writes(ops))  # (a field write: its updates)
        operations = [self._operation(write) for write in writes]
        deferring = threading.get_ident() in self._deferred
        keep_open = deferring and self._share_transactions
        try:
            outcomes = self._committer.run_many(
                operations, stop_at_failure=stop_at_failure, keep_open=keep_open
            )
        except errors.StatusError as failure:
            if self._committer.broken is failure:  # writes that had returned are lost
                self._syncer.fail(failure)
            raise
        if not deferring:
            self._syncer.wait()
        elif self._committer.open_rv:
            self._syncer.commit_soon()
        self._dispatcher.dispatch()
        results: builtins.list[Result] = []
        for write, outcome in zip(writes, outcomes, strict=False):
            if isinstance(outcome, errors.StatusError):
                results.append(outcome)
            elif isinstance(outcome, BaseException):
                raise outcome
            elif type(write) is Delete:
                if not write.dry_run:
                    self._decoded.pop((write.resource, write.namespace, write.name), None)
                results.append(outcome)
            else:
                results.append(outcome if write.dry_run else self._remember(write.resource, outcome))
        return results

    def _operation(self, op: WriteOp) -> Operation:
        """The transaction step of one create, update or delete."""
        if type(op) is Create:
            return self._create_step(op.resource, op.object, op.dry_run)
        if type(op) is Update:
            return self._update_step(op.resource, op.object, op.dry_run)
        assert type(op) is Delete
        return self._delete_step(op)

    def _create_step(self, resource: str, obj: JSON, dry_run: bool) -> Operation:
        def operation(db: sqlite3.Connection) -> tuple[JSON, WatchEvent | None]:
            stored = prepare_create(resource, obj, self._clock, self._uid)
            namespace, name = object_key(stored)
            if db.execute(_GET, (resource, namespace, name)).fetchone() is not None:
                raise errors.already_exists(resource, name)
            if dry_run:
                return stored, None
            rv = db.execute(_NEXT_RV).fetchone()[0]
            stored["metadata"]["resourceVersion"] = str(rv)
            text = _dumps(stored)
            key = registry_key(self._options.prefix, resource, namespace, name)
            db.execute(_INSERT, (resource, namespace, name, key, rv, _node_of(resource, stored), text))
            db.execute(_LOG, (rv, resource, "ADDED", text, None))
            return stored, WatchEvent("ADDED", resource, stored, rv)

        return operation

    def _update_step(self, resource: str, obj: JSON, dry_run: bool) -> Operation:
        namespace, name = object_key(obj)

        def operation(db: sqlite3.Connection) -> tuple[JSON, WatchEvent | None]:
            row = db.execute(_GET, (resource, namespace, name)).fetchone()
            if row is None:
                raise errors.not_found(resource, name)
            old: JSON = json.loads(row[0])
            stored = prepare_update(resource, obj, old)
            if stored is None:
                return old, None
            if dry_run:
                return stored, None
            rv = db.execute(_NEXT_RV).fetchone()[0]
            stored["metadata"]["resourceVersion"] = str(rv)
            text = _dumps(stored)
            db.execute(_UPDATE, (rv, _node_of(resource, stored), text, resource, namespace, name))
            db.execute(_LOG, (rv, resource, "MODIFIED", text, row[0]))
            return stored, WatchEvent("MODIFIED", resource, stored, rv, old)

        return operation

    def _delete_step(self, op: Delete) -> Operation:
        resource, namespace, name = op.resource, op.namespace, op.name
        resource_version, uid, dry_run = op.resource_version, op.uid, op.dry_run

        def operation(db: sqlite3.Connection) -> tuple[JSON, WatchEvent | None]:
            row = db.execute(_GET, (resource, namespace, name)).fetchone()
            if row is None:
                raise errors.not_found(resource, name)
            old: JSON = json.loads(row[0])
            check_delete_preconditions(resource, name, old, resource_version, uid)
            if dry_run:
                return old, None
            rv = db.execute(_NEXT_RV).fetchone()[0]
            gone = with_resource_version(old, rv)
            db.execute(_DELETE, (resource, namespace, name))
            db.execute(_LOG, (rv, resource, "DELETED", _dumps(gone), row[0]))
            return gone, WatchEvent("DELETED", resource, gone, rv, old)

        return operation

    # durability --------------------------------------------------------------------------

    def defer_durability(self) -> None:
        """Writes made by the calling thread from now on return once committed, without waiting
        for the fsync; the caller acknowledges them only after `when_durable`."""
        self._deferred = self._deferred | {threading.get_ident()}

    def when_durable(self, callback: DurableCallback) -> bool:
        """True when every write made so far is durable already; otherwise `callback(error)` runs,
        in another thread, once they are committed and synced (error: None, or why they cannot be)."""
        return self._syncer.when_durable(callback, self._committer.open_rv)

    def _before_commit(self, db: sqlite3.Connection, rv: int) -> Callable[[], None] | None:
        """Compact the change log in the committing transaction when due."""
        target = self._compact_target(rv)
        if target is None:
            return None
        db.execute("DELETE FROM changes WHERE rv <= ?", (target,))
        db.execute("UPDATE meta SET value = ? WHERE key = 'compacted_rv'", (target,))

        def remember() -> None:
            self._compacted = target

        return remember

    def _compact_target(self, rv: int) -> int | None:
        """Keep the last `history_size` changes; compact in batches (an eighth of the history)
        so a write deletes many log rows at once rather than one each time."""
        keep = self._options.history_size
        if rv - self._compacted > keep + keep // 8:
            return rv - keep
        return None

    # watch -------------------------------------------------------------------------------

    def _publish(self, events: builtins.list[WatchEvent]) -> None:
        """One commit's batch (the writes of a group commit's callers are each their own)."""
        self._dispatcher.publish(ChangeBatch(events))

    def subscribe(self, handler: BatchHandler, resource: str | None = None) -> Callable[[], None]:
        return self._dispatcher.subscribe(handler, resource)

    def watch(
        self,
        resource: str,
        *,
        namespace: str = "",
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> BufferedWatch:
        watch_filter = WatchFilter.parse(resource, namespace, label_selector, field_selector)
        since = None if resource_version in (None, "", "0") else parse_resource_version(str(resource_version))
        self._settle()
        with self._committer.lock:  # no commit between reading the past and subscribing to the future
            floor = int(self._db.execute("SELECT value FROM meta WHERE key = 'rv'").fetchone()[0])
            if since is None:
                listed = self.list(resource, namespace=namespace)
                initial = watch_filter.added(listed.items)
            else:
                initial = self._replay(watch_filter, since, floor)
            stream = BufferedWatch(watch_filter, initial, floor=floor)
            stream.attach(self.subscribe(stream.offer))
        return stream

    def _replay(self, watch_filter: WatchFilter, since: int, current: int) -> builtins.list[WatchEvent]:
        if since < self._compacted and since < current:
            raise too_old(since, self._compacted)
        rows = self._db.execute(
            "SELECT rv, type, json, old_json FROM changes WHERE rv > ? AND resource = ? ORDER BY rv",
            (since, watch_filter.resource),
        )
        replay: list[WatchEvent] = []
        for rv, kind, text, old_text in rows:
            event_type: EventType = kind
            old = json.loads(old_text) if old_text is not None else None
            seen = watch_filter.translate(
                WatchEvent(event_type, watch_filter.resource, json.loads(text), rv, old)
            )
            if seen is not None:
                replay.append(seen)
        return replay

    # lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close every connection and release the data-dir lock (idempotent)."""
        with self._committer.lock:
            if self._closed:
                return
            self._closed = self._committer.closed = True
        with contextlib.suppress(errors.StatusError):  # (a failure has failed every wait already)
            self._commit_open()
        self._syncer.close()  # (its thread may have been committing: the lock is not held here)
        if self._checkpointer is not None:
            self._checkpointer.close()
        with self._committer.lock:
            self._dispatcher.clear()
            with self._readers_lock:
                for conn in self._readers:
                    conn.close()
                self._readers.clear()
            self._db.close()
            self._lock_file.release()
