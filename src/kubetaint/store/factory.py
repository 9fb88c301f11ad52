"""Opening the store `kubetaint up --store` names: `memory`, `sqlite` (a file in the data dir,
the default) or `etcd://HOST:PORT`. Every failure to open is a `StoreError` with a message
meant for users."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kubetaint.clock.base import Clock
from kubetaint.store.interface import Store, StoreError, StoreOptions

KINDS = "memory, sqlite or etcd://HOST:PORT"


def open_store(
    url_or_kind: str,
    *,
    data_dir: str | Path | None,
    clock: Clock,
    options: StoreOptions | None = None,
    uid_factory: Callable[[], str] | None = None,
) -> Store:
    """The store for `url_or_kind`; `data_dir` is required for sqlite (and unused otherwise)."""
    kind = url_or_kind.strip()
    if kind == "memory":
        from kubetaint.store.memory import MemoryStore

        return MemoryStore(clock, options=options, uid_factory=uid_factory)
    if kind == "sqlite":
        if data_dir is None:
            raise StoreError("the sqlite store needs a data directory (--data-dir)")
        from kubetaint.store.sqlite import SqliteStore

        return SqliteStore(data_dir, clock, options=options, uid_factory=uid_factory)
    if kind.startswith("etcd://"):
        from kubetaint.store.etcd import EtcdStore

        return EtcdStore(kind, clock, options=options, uid_factory=uid_factory)
    raise StoreError(f"unknown store {kind!r}: expected {KINDS}")
