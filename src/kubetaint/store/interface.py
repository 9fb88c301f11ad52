"""The store contract shared by every backend (memory, SQLite, etcd) and by clients that
components write through (the simulator's registry, the API server, a remote cluster).

Mirrors kube-apiserver's storage.Interface semantics:
- `resource` is the group-qualified plural (`pods`, `deployments.apps`); `namespace` is "" for
  cluster-scoped objects. Keys are `<prefix>/<plural>/<namespace>/<name>`.
- Every write bumps one cluster-wide, strictly increasing resourceVersion (decimal string).
- create fails with AlreadyExists (409); update/delete with a resourceVersion precondition that
  does not match fail with Conflict (409); missing objects give NotFound (404).
- A watch from resourceVersion R delivers every change with a later resourceVersion, in commit
  order; R older than the retained history gives Expired (410).
- `delete` removes the object at once in every backend; `grace_period_seconds` (DeleteOptions'
  gracePeriodSeconds) is for writers that delete gracefully (the registry, a remote API server):
  0 is the kubelet's and pod GC's "remove it now" for a pod already terminating.
- Ownership: `create`/`update` take ownership of the dict passed in (callers must not mutate it
  afterwards). Returned objects are shared and READ-ONLY for everyone: copy before changing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kubetaint.api.errors import StatusError
from kubetaint.store.changes import BatchHandler, ChangeBatch, EventType, WatchEvent

__all__ = [  # the change stream's types (.changes) are part of the store contract
    "JSON",
    "BatchHandler",
    "ChangeBatch",
    "DeferredDurability",
    "EventType",
    "ListResult",
    "Reachability",
    "Store",
    "StoreError",
    "StoreOptions",
    "ThreadedDelivery",
    "Watch",
    "WatchEvent",
    "object_key",
    "update_many",
]

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ListResult:
    """A list page: items in key order, the list's resourceVersion and a continue token."""

    items: list[JSON]
    resource_version: str
    continue_token: str | None = None
    remaining_item_count: int | None = None


class Watch(Protocol):
    """A watch stream. `drain()` returns pending events without blocking; `wait()` blocks up to
    `timeout` seconds for at least one. `stop()` ends it (idempotent); a store may also stop it
    (e.g. etcd compacted past it or the connection broke): clients then re-list, as upstream."""

    def drain(self) -> list[WatchEvent]: ...

    def wait(self, timeout: float) -> list[WatchEvent]: ...

    def stop(self) -> None: ...

    def request_bookmark(self) -> None:
        """Queue a BOOKMARK event (after everything already queued) at the newest
        resourceVersion up to which this watch has seen every change."""
        ...

    @property
    def stopped(self) -> bool: ...

    def push_to(self, waker: Callable[[], None] | None) -> bool:
        """Have `waker` called (from any thread) whenever events arrive or the stream stops, so
        that a reader need not block in `wait()`; None ends the calls. False when this stream
        cannot call a waker: its reader polls `wait()`."""
        ...


class Store(Protocol):
    """What components read and write through."""

    def get(self, resource: str, namespace: str, name: str) -> JSON: ...

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
        """Objects in key order. `resource_version` lists the state at exactly that version
        (None: the current one); a continue token lists on at its first page's version. A version
        whose history is compacted gives 410 Expired (etcd3's messages; a continue token's
        carries, in the Status's metadata.continue, a token for the rest at the current state),
        one in the future 504 (ResourceVersionTooLarge)."""
        ...

    def create(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON: ...

    def update(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON: ...

    def delete(
        self,
        resource: str,
        namespace: str,
        name: str,
        *,
        resource_version: str | None = None,
        uid: str | None = None,
        dry_run: bool = False,
        grace_period_seconds: int | None = None,
    ) -> JSON: ...

    def watch(
        self,
        resource: str,
        *,
        namespace: str = "",
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watch: ...

    def subscribe(self, handler: BatchHandler, resource: str | None = None) -> Callable[[], None]:
        """Call `handler` with the batch of every later commit (store.changes.ChangeBatch: of
        `resource` only, when given, those of its events), in commit order, in the writer's
        thread. Returns a function that unsubscribes."""
        ...

    def current_resource_version(self) -> int: ...

    def close(self) -> None: ...


def update_many(store: Store, resource: str, objects: list[JSON]) -> tuple[list[JSON], StatusError | None]:
    """Update distinct objects of `resource` in order, as consecutive `update` calls would: each
    its own resourceVersion and watch event. Stops at the first failing update: returns the stored
    objects of the updates before it and its error (None when all succeeded).

    A store (or a client such as the Registry) may implement `update_many` with this contract to
    commit the batch at once (the memory store takes its lock and dispatches once); any other
    store gets one `update` after another."""
    batch = getattr(store, "update_many", None)
    if batch is not None:
        result: tuple[list[JSON], StatusError | None] = batch(resource, objects)
        return result
    stored: list[JSON] = []
    for obj in objects:
        try:
            stored.append(store.update(resource, obj))
        except StatusError as err:
            return stored, err
    return stored, None


@runtime_checkable
class DeferredDurability(Protocol):
    """Optional, for stores that fsync (SQLite): let one thread (an event loop) write without
    waiting for the disk, and learn when its writes are durable, before acknowledging them.
    Stores without it make every write durable (or never) before it returns."""

    def defer_durability(self) -> None:
        """Writes by the calling thread return once committed (visible in the process, not yet
        synced). That thread must not acknowledge them before `when_durable`."""
        ...

    def when_durable(self, callback: Callable[[BaseException | None], None]) -> bool:
        """True when every committed write is durable already (the callback is not called);
        otherwise `callback(None)` runs, in another thread, once they are, or `callback(error)`
        when they cannot be."""
        ...


@runtime_checkable
class Reachability(Protocol):
    """Optional, for stores behind a network (etcd): whether the backend answers, watched in
    the background so that asking never waits. While it does not, the store's calls fail at
    once with 503 ServiceUnavailable, and a server keeps its health endpoints answering."""

    def unreachable(self) -> str | None:
        """None while the backend answers; otherwise why it does not (for logs and probes)."""
        ...


@runtime_checkable
class ThreadedDelivery(Protocol):
    """Optional, for stores whose changes arrive on a thread of their own (etcd's watch feed):
    hand subscribers' deliveries to the thread that writes, so that handlers run where every
    write happens (a live server's event loop) and never beside it."""

    def deliver_through(self, run_soon: Callable[[Callable[[], None]], object]) -> None:
        """From now on, changes that arrive are delivered by `run_soon(deliver)` (an event loop's
        `call_soon_threadsafe`), and a write returns after delivering its own change."""
        ...


class StoreError(Exception):
    """A store cannot be opened or reached (data dir locked, corrupt file, etcd unreachable).
    The message is meant for users as is: print it, never a traceback."""


@dataclass
class StoreOptions:
    """Backend-independent settings."""

    prefix: str = "/registry"
    #: Changes kept for watch resumption before compaction (kube-apiserver's watch cache ~ 100/resource
    #: by default; etcd compacts every 5 minutes).
    history_size: int = 100_000
    extra: dict[str, Any] = field(default_factory=dict)


def object_key(obj: JSON) -> tuple[str, str]:
    """(namespace, name) of an object."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    name = meta.get("name") or ""
    if type(namespace) is str and type(name) is str:  # as stored: no conversion (every write asks)
        return namespace, name
    return str(namespace), str(name)
