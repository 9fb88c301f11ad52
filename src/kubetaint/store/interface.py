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

Writes: `commit(ops)` is the one write entry point (see `Store.commit` for the batch semantics);
`create`/`update`/`delete` are one-operation commits (`kubetaint.store.base.StoreBase`).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from kubetaint.api.errors import StatusError
from kubetaint.store.changes import BatchHandler, ChangeBatch, EventType, FieldPath, WatchEvent

__all__ = [  # the change stream's types (.changes) are part of the store contract
    "JSON",
    "BatchHandler",
    "ChangeBatch",
    "Create",
    "DeferredDurability",
    "Delete",
    "EventType",
    "FieldPath",
    "ListResult",
    "Reachability",
    "Result",
    "SetField",
    "Store",
    "StoreError",
    "StoreOptions",
    "ThreadedDelivery",
    "Update",
    "Watch",
    "WatchEvent",
    "WriteOp",
    "as_updates",
    "object_key",
    "single_writes",
    "until_failure",
    "with_field",
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

    @property
    def stopped(self) -> bool: ...

    @property
    def progress(self) -> int:
        """The newest resourceVersion of the watched resource that the events drained so far
        account for, changes the watch filtered out included (0: none beyond those events): a
        bookmark at that version skips nothing its reader would see, as the watch cache's
        bookmarks carry the last version it processed."""
        ...

    def push_to(self, waker: Callable[[], None] | None) -> bool:
        """Have `waker` called (from any thread) whenever events arrive or the stream stops, so
        that a reader need not block in `wait()`; None ends the calls. False when this stream
        cannot call a waker: its reader polls `wait()`."""
        ...


class Create(NamedTuple):
    """Create `object` (AlreadyExists when its key is taken; the store sets uid, creationTimestamp,
    generation where the resource has one, and the resourceVersion)."""

    resource: str
    object: JSON
    dry_run: bool = False


class Update(NamedTuple):
    """Replace the object under `object`'s key by `object`. Preconditions: its
    metadata.resourceVersion and uid, when set, are the stored object's (else Conflict). An
    update that changes nothing stores nothing and returns the stored object."""

    resource: str
    object: JSON
    dry_run: bool = False


class Delete(NamedTuple):
    """Delete the object `namespace`/`name`, with optional resourceVersion and uid preconditions;
    `grace_period_seconds` is DeleteOptions' (see the module doc)."""

    resource: str
    namespace: str
    name: str
    resource_version: str | None = None
    uid: str | None = None
    dry_run: bool = False
    grace_period_seconds: int | None = None


class SetField(NamedTuple):
    """Set `path` (part, field) to `value` on each of `objects`, in order: each is an `Update` of
    that object with the field set (so its own resourceVersion is its precondition), one result
    per object. What lease renewals (spec.renewTime) and node status posts (status.conditions)
    are: a store may commit such a write without comparing whole objects."""

    resource: str
    objects: list[JSON]
    path: FieldPath
    value: object


#: One operation of a `Store.commit`.
WriteOp = Create | Update | Delete | SetField
#: One object's outcome in a commit: the stored object (a deleted object with the delete's
#: resourceVersion), or the StatusError its operation met.
Result = JSON | StatusError


def until_failure(results: list[Result]) -> tuple[list[JSON], StatusError | None]:
    """A commit's results with `stop_at_failure` as (the stored objects, the failure or None)."""
    if results and isinstance(last := results[-1], StatusError):
        return results[:-1], last  # type: ignore[return-value]  # only the last can be an error
    return results, None  # type: ignore[return-value]


def with_field(obj: JSON, path: FieldPath, value: object) -> JSON:
    """`obj` with `obj[part][field]` set to `value` (same keys, same order; a part that is not an
    object is replaced by one holding only the field). Shares everything else with `obj`: the
    Update a `SetField` stands for."""
    part, name = path
    current = obj.get(part)
    base: JSON = current if type(current) is dict else {}
    return {**obj, part: {**base, name: value}}


def as_updates(op: SetField) -> list[Update]:
    """The updates a field write stands for (what a store without its own field writes commits)."""
    return [Update(op.resource, with_field(obj, op.path, op.value)) for obj in op.objects]


def single_writes(ops: Sequence[WriteOp]) -> Iterator[Create | Update | Delete]:
    """`ops` one object at a time: each field write as its updates."""
    for op in ops:
        if type(op) is SetField:
            yield from as_updates(op)
        else:
            yield op  # type: ignore[misc]  # not a SetField


class Store(Protocol):
    """What components read and write through."""

    #: Every write runs the subscribers before it returns (in the writer's thread; a write made
    #: inside a subscriber is delivered when that subscriber returns), so outside subscribers
    #: they have seen every committed change (the in-memory store): see kubetaint.kubelet.running.
    @property
    def delivers_synchronously(self) -> bool: ...

    #: The optional capabilities the store offers (`Capabilities`).
    @property
    def capabilities(self) -> Capabilities: ...

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

    def list_keyed(self, resource: str) -> tuple[builtins.list[tuple[tuple[str, str], JSON]], int]:
        """`list(resource)` unfiltered, each object with its (namespace, name), and the listing's
        resourceVersion (what an unfiltered informer's start takes)."""
        ...

    def commit(self, ops: Sequence[WriteOp], *, stop_at_failure: bool = False) -> builtins.list[Result]:
        """Commit `ops` in order, at once where the backend can (the in-memory store under one lock
        hold, SQLite in one transaction; etcd and a remote API server one request per object).

        Each object written gets its own resourceVersion and watch event, in the order of `ops`,
        exactly as one write after another would; subscribers receive the commit's events as one
        batch (`ChangeBatch`) once it is committed (etcd and a remote API server, which commit
        each object on its own, publish one batch per object). The results are one per object
        the ops name (a `SetField` one per object), in order: the stored object or the StatusError its
        operation met. A failing operation changes nothing
        and the others still commit; with `stop_at_failure` the batch ends at the first failure
        (the operations before it stay committed) and the results end with its error."""
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


class PropagatingStore(Store, Protocol):
    """A Store whose delete takes kube-apiserver's `propagationPolicy` (kubetaint.registry.Registry),
    what a controller writes through when the objects it deletes must take (or leave) their
    dependents: Jobs their pods, a namespace's content, a custom resource's dependents."""

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
        propagation_policy: str | None = None,
    ) -> JSON: ...


class FinalizesNamespaces(Protocol):
    """Optional, for stores that are a client of an API server (RemoteStore): the namespace
    `finalize` subresource, which the server applies (and removes a finalized namespace being
    deleted). A local store gets the registry's finalize (kubetaint.registry.Registry)."""

    def finalize_namespace(self, obj: JSON, *, dry_run: bool = False) -> JSON:
        """PUT namespaces/NAME/finalize with `obj`; returns the server's answer."""
        ...


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


class Reachability(Protocol):
    """Optional, for stores behind a network (etcd): whether the backend answers, watched in
    the background so that asking never waits. While it does not, the store's calls fail at
    once with 503 ServiceUnavailable, and a server keeps its health endpoints answering."""

    def unreachable(self) -> str | None:
        """None while the backend answers; otherwise why it does not (for logs and probes)."""
        ...


class ThreadedDelivery(Protocol):
    """Optional, for stores whose changes arrive on a thread of their own (etcd's watch feed):
    hand subscribers' deliveries to the thread that writes, so that handlers run where every
    write happens (a live server's event loop) and never beside it."""

    def deliver_through(self, run_soon: Callable[[Callable[[], None]], object]) -> None:
        """From now on, changes that arrive are delivered by `run_soon(deliver)` (an event loop's
        `call_soon_threadsafe`), and a write returns after delivering its own change."""
        ...


class PodsByNode(Protocol):
    """Optional, for stores that keep their pods indexed by spec.nodeName (the memory store):
    the pods bound to given nodes, read from the index without looking at every pod."""

    def keyed_pods_by_node(self, nodes: Container[str]) -> dict[str, list[tuple[tuple[str, str], JSON]]]:
        """For each node of `nodes` with pods bound to it, those pods with their keys
        ((namespace, name)), in the order `list("pods", field_selector="spec.nodeName=NODE")`
        gives them."""
        ...


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a store offers beyond the Store protocol, as the store declares it (`Store.capabilities`;
    never discovered by probing for methods): each is the store itself, typed by its capability's
    Protocol, or None when the store does not offer it."""

    #: a store that syncs in the background (SQLite)
    durability: DeferredDurability | None = None
    #: a store behind a network (etcd)
    reachability: Reachability | None = None
    #: a store whose changes arrive on a thread of its own (etcd)
    threaded_delivery: ThreadedDelivery | None = None
    #: a client of an API server, which applies the namespace `finalize` itself (RemoteStore)
    finalizes_namespaces: FinalizesNamespaces | None = None
    #: a store keeping its pods indexed by node (MemoryStore)
    pods_by_node: PodsByNode | None = None


#: A store offering nothing beyond the protocol.
NO_CAPABILITIES = Capabilities()


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
