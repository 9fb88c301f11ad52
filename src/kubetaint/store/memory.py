"""The in-memory store: the simulator's backend and the reference for the others.

Semantics are kube-apiserver storage's (see `kubetaint.store.interface`). Pods are indexed by
`spec.nodeName`, so `list("pods", field_selector="spec.nodeName=n")` costs O(pods on n). Writes
are `commit` batches under one lock hold; a batch of one field write (lease renewals) takes
`.memoryfields`' way.
"""

from __future__ import annotations

import builtins
import operator
import threading
import uuid
from collections.abc import Callable, Container, Iterator, Sequence

from kubetaint.api import errors
from kubetaint.api.selectors import FieldSelector, LabelSelector, parse_field_selector, parse_label_selector
from kubetaint.clock.base import Clock, format_time
from kubetaint.store.base import StoreBase
from kubetaint.store.changes import BatchHandler, ChangeBatch
from kubetaint.store.interface import (
    JSON,
    Capabilities,
    Create,
    Delete,
    ListResult,
    Result,
    SetField,
    StoreOptions,
    Update,
    WatchEvent,
    WriteOp,
    object_key,
)
from kubetaint.store.memoryfields import FieldWrites
from kubetaint.store.mutation import (
    GENERATION_RESOURCES,
    check_delete_preconditions,
    key_order,
    namespace_order,
    parse_resource_version,
    prepare_create,
    prepare_update,
    too_old,
    with_resource_version,
)
from kubetaint.store.recycling import Spares
from kubetaint.store.snapshot import list_at, list_origin, select_page
from kubetaint.store.watch import BufferedWatch, Dispatcher, WatchFilter
from kubetaint.store.watchhistory import WatchHistory

__all__ = ["GENERATION_RESOURCES", "MemoryStore"]

_NODE_INDEX = "spec.nodeName"
_EMPTY: dict[str, JSON] = {}  # read-only stand-in for a missing bucket
_EMPTY_SPACES: dict[str, dict[str, JSON]] = {}  # read-only stand-in for a resource never written


class MemoryStore(StoreBase, FieldWrites):
    """Objects in dicts, one global resourceVersion counter, bounded change history."""

    delivers_synchronously = True

    def __init__(
        self,
        clock: Clock,
        *,
        options: StoreOptions | None = None,
        uid_factory: Callable[[], str] | None = None,
    ) -> None:
        self._clock = clock
        self._options = options or StoreOptions()
        self._uid = uid_factory or (lambda: str(uuid.uuid4()))
        self._objects: dict[str, dict[str, dict[str, JSON]]] = {}  # resource -> ns -> name -> obj
        self._pods_by_node: dict[str, dict[tuple[str, str], JSON]] = {}
        self._rv = 0
        self._history = WatchHistory(self._options.history_size)
        self._spares = Spares()  # (`FieldWrites`: recycled versions)
        self._dispatcher = Dispatcher()
        self._lock = threading.RLock()
        self.capabilities = Capabilities(pods_by_node=self)

    # reads -------------------------------------------------------------------------------

    def get(self, resource: str, namespace: str, name: str) -> JSON:
        obj = self._objects.get(resource, {}).get(namespace, {}).get(name)
        if obj is None:
            raise errors.not_found(resource, name)
        return obj

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
        start, snapshot = list_origin(continue_token, resource_version)
        if snapshot is not None:
            with self._lock:
                if snapshot != self._rv:
                    return self._list_at(
                        resource,
                        snapshot,
                        namespace=namespace,
                        labels=labels,
                        fields=fields,
                        limit=limit,
                        start=start,
                    )
        node_name = fields.exact_value(_NODE_INDEX)
        # the node index holds under a name only pods whose spec.nodeName is that string: a
        # selector of that one term is met by every such pod whose nodeName is a plain str
        by_node_only = (
            resource == "pods"
            and bool(node_name)
            and len(fields.terms) == 1
            and fields.terms[0][1] in ("=", "==")
        )
        with self._lock:
            candidates = self._candidates(resource, namespace, node_name)
            if start is not None:
                origin = key_order(start)
                candidates = (pair for pair in candidates if key_order(pair[0]) > origin)
            return select_page(
                candidates,
                _SECOND,
                labels=labels,
                fields=fields,
                limit=limit,
                list_rv=self._rv,
                meets_fields=_plain_node_name if by_node_only else None,
            )

    def _list_at(
        self,
        resource: str,
        snapshot: int,
        *,
        namespace: str,
        labels: LabelSelector,
        fields: FieldSelector,
        limit: int,
        start: tuple[str, str] | None,
    ) -> ListResult:
        """A page of the state at `snapshot` (lock held), rebuilt from the change history."""
        oldest = self._history.oldest_version()
        if oldest is None:
            oldest = self._rv + 1
        later = (e for e in self._history.since(snapshot) if e.resource == resource)
        return list_at(
            self._candidates(resource, namespace, None),
            later,
            snapshot=snapshot,
            newest=self._rv,
            compacted=oldest - 1,
            namespace=namespace,
            start=start,
            limit=limit,
            labels=labels,
            fields=fields,
        )

    def _candidates(
        self, resource: str, namespace: str, node_name: str | None
    ) -> Iterator[tuple[tuple[str, str], JSON]]:
        if resource == "pods" and node_name is not None:
            by_key = self._pods_by_node.get(node_name, {})
            for key in sorted(by_key, key=key_order):
                if not namespace or key[0] == namespace:
                    yield key, by_key[key]
            return
        spaces = self._objects.get(resource, {})
        for ns in sorted(spaces, key=namespace_order) if not namespace else [namespace]:
            names = spaces.get(ns, {})
            for name in sorted(names):
                yield (ns, name), names[name]

    def list_keyed(self, resource: str) -> tuple[builtins.list[tuple[tuple[str, str], JSON]], int]:
        """`Store.list_keyed` without working a key out again per object."""
        with self._lock:
            spaces = self._objects.get(resource, _EMPTY_SPACES)
            keyed: list[tuple[tuple[str, str], JSON]] = []
            for ns in sorted(spaces, key=namespace_order):
                names = spaces[ns]
                keyed.extend([((ns, name), names[name]) for name in sorted(names)])
            return keyed, self._rv

    def current_resource_version(self) -> int:
        return self._rv

    def keyed_pods_by_node(
        self, nodes: Container[str]
    ) -> dict[str, builtins.list[tuple[tuple[str, str], JSON]]]:
        """`PodsByNode.keyed_pods_by_node` from the node index (the pods are not looked at)."""
        with self._lock:
            grouped = {
                node: builtins.list(by_key.items())
                for node, by_key in self._pods_by_node.items()
                if by_key and node and node in nodes
            }
        # one namespace: the key tuples sort in key order (C comparisons); else key_order's
        spaces = {key[0] for pairs in grouped.values() for key, _ in pairs}
        order = _FIRST if len(spaces) <= 1 else _pair_key_order
        for pairs in grouped.values():
            pairs.sort(key=order)  # keys are unique: pods are never compared
        return grouped

    # writes ------------------------------------------------------------------------------

    def commit(self, ops: Sequence[WriteOp], *, stop_at_failure: bool = False) -> builtins.list[Result]:
        """`Store.commit` under one lock hold; its events are published as one batch and
        dispatched once the lock is released. A commit of one field write of several objects
        takes `FieldWrites`' way (its batch carries a `FieldWriteGroup`)."""
        if len(ops) == 1:
            op = ops[0]
            if type(op) is not SetField:
                return [self._commit_one(op)]  # type: ignore[arg-type]  # (not a SetField)
            if len(op.objects) > 1:
                return self._set_field(op, stop_at_failure)
        results: builtins.list[Result] = []
        events: builtins.list[WatchEvent] = []
        with self._lock:
            for write in ops:
                if type(write) is SetField:
                    if not self._set_in(write, results, events, stop_at_failure):
                        break
                    continue
                try:
                    stored, event = self._write_in(write)  # type: ignore[arg-type]  # (not a SetField)
                except errors.StatusError as err:
                    results.append(err)
                    if stop_at_failure:
                        break
                    continue
                results.append(stored)
                if event is not None:
                    events.append(event)
            if events:
                self._history.extend(events)
                self._dispatcher.publish(ChangeBatch(events))
        self._dispatcher.dispatch()
        return results

    def _commit_one(self, write: Create | Update | Delete) -> Result:
        """The commit of the one create, update or delete `write` (the loop above for one
        operation): its result, its event published as a batch of one."""
        with self._lock:
            try:
                stored, event = self._write_in(write)
            except errors.StatusError as err:
                result: Result = err
            else:
                result = stored
                if event is not None:
                    self._history.append(event)
                    self._dispatcher.publish(ChangeBatch((event,)))
        self._dispatcher.dispatch()
        return result

    def _write_in(self, write: Create | Update | Delete) -> tuple[JSON, WatchEvent | None]:
        """One create, update or delete (lock held): the stored (or deleted) object and its event
        (None: a no-op or a dry run)."""
        if type(write) is Create:
            return self._create_in(write.resource, write.object, write.dry_run)
        if type(write) is Update:
            return self._update_op(write)
        return self._delete_in(write)  # type: ignore[arg-type]  # the last kind

    def _set_field(self, op: SetField, stop_at_failure: bool) -> builtins.list[Result]:
        """A commit of the one field write `op` (`FieldWrites._field_write`)."""
        objects = op.objects
        results: builtins.list[Result] = []
        while True:
            stored, failure = self._field_write(op.resource, objects, op.path, op.value)
            results.extend(stored)
            if failure is None:
                return results
            results.append(failure)
            if stop_at_failure:
                return results
            objects = objects[len(stored) + 1 :]
            if not objects:
                return results

    def _create_in(self, resource: str, obj: JSON, dry_run: bool) -> tuple[JSON, WatchEvent | None]:
        """One create (lock held): the stored object and its event (None for a dry run). A plain
        named request takes prepare_create's steps inline."""
        meta_in = obj.get("metadata")
        name = meta_in.get("name") if type(meta_in) is dict else None
        namespace = (meta_in.get("namespace") or "") if type(meta_in) is dict else None
        if type(name) is str and name and type(namespace) is str:
            # the usual create request (a plain named object): prepare_create's steps, the key
            # read once (object_key of the result: the same name and namespace)
            meta = dict(meta_in)  # type: ignore[arg-type]  # (a dict: name is a str)
            meta.setdefault("uid", self._uid())
            meta.setdefault("creationTimestamp", format_time(self._clock.now()))
            if resource in GENERATION_RESOURCES:
                meta.setdefault("generation", 1)
            meta.pop("resourceVersion", None)
            stored = {**obj, "metadata": meta}
            key = (namespace, name)
        else:
            stored = prepare_create(resource, obj, self._clock, self._uid)
            key = object_key(stored)
            name = key[1]
        spaces = self._objects.get(resource)
        if spaces is None:
            spaces = self._objects[resource] = {}
        bucket = spaces.get(key[0])
        if bucket is None:
            bucket = spaces[key[0]] = {}
        if name in bucket:
            raise errors.already_exists(resource, name)
        if dry_run:
            return stored, None
        self._rv = rv = self._rv + 1
        stored["metadata"]["resourceVersion"] = str(rv)
        bucket[name] = stored
        if resource == "pods":  # _index(resource, None, stored) with the key at hand
            by_node = self._pods_by_node.get(node := _node_name(stored))
            if by_node is None:
                by_node = self._pods_by_node[node] = {}
            by_node[key] = stored
        return stored, WatchEvent("ADDED", resource, stored, rv)

    def _update_op(self, op: Update) -> tuple[JSON, WatchEvent | None]:
        """One update (lock held): the stored object and its event (None: a no-op or a dry run)."""
        resource = op.resource
        if not op.dry_run:
            return self._update_in(
                resource, self._objects.get(resource, _EMPTY_SPACES), op.object, resource == "pods"
            )
        namespace, name = object_key(op.object)
        old = self._objects.get(resource, {}).get(namespace, {}).get(name)
        if old is None:
            raise errors.not_found(resource, name)
        stored = prepare_update(resource, op.object, old)
        return (old if stored is None else stored), None

    def _update_in(
        self, resource: str, spaces: dict[str, dict[str, JSON]], obj: JSON, indexed: bool
    ) -> tuple[JSON, WatchEvent | None]:
        """One update of a batch (lock held): the stored object and its event (None: a no-op)."""
        namespace, name = object_key(obj)
        bucket = spaces.get(namespace, _EMPTY)
        old = bucket.get(name)
        if old is None:
            raise errors.not_found(resource, name)
        old_meta: JSON = old["metadata"]
        meta = obj.get("metadata")
        if meta is old_meta and _plain_system_fields(old_meta):
            # prepare_update's result for an update carrying the stored metadata, with the new
            # resourceVersion written in the same copy
            if obj == old:
                return old, None
            self._rv = rv = self._rv + 1
            stored = {**obj, "metadata": {**old_meta, "resourceVersion": str(rv)}}
        elif (
            type(meta) is dict
            and obj.get("spec") is old.get("spec")
            and _carries_system_fields(meta, old_meta)
        ):
            # prepare_update's result for an update built from the stored object (an adoption):
            # its preconditions are old's own, every value it sets is meta's already
            if obj == old:
                return old, None
            self._rv = rv = self._rv + 1
            stored = {**obj, "metadata": {**meta, "resourceVersion": str(rv)}}
        else:
            prepared = prepare_update(resource, obj, old)
            if prepared is None:
                return old, None
            stored = prepared
            self._rv = rv = self._rv + 1
            stored["metadata"]["resourceVersion"] = str(rv)
        bucket[name] = stored
        if indexed:
            by_node = (
                self._pods_by_node.get(_node_name(stored)) if stored.get("spec") is old.get("spec") else None
            )
            if by_node is not None:  # old's spec object: its node, so `_index` replaces it in place
                by_node[(namespace, name)] = stored
            else:
                self._index(resource, old, stored)
        return stored, WatchEvent("MODIFIED", resource, stored, rv, old)

    def _delete_in(self, op: Delete) -> tuple[JSON, WatchEvent | None]:
        """One delete (lock held): the deleted object and its event (None for a dry run)."""
        resource, namespace, name = op.resource, op.namespace, op.name
        bucket = self._objects.get(resource, {}).get(namespace, {})
        old = bucket.get(name)
        if old is None:
            raise errors.not_found(resource, name)
        check_delete_preconditions(resource, name, old, op.resource_version, op.uid)
        if op.dry_run:
            return old, None
        self._rv += 1
        del bucket[name]
        self._index(resource, old, None)
        gone = with_resource_version(old, self._rv)
        return gone, WatchEvent("DELETED", resource, gone, self._rv, old)

    def _index(self, resource: str, old: JSON | None, new: JSON | None) -> None:
        if resource != "pods":
            return
        if old is not None and new is not None:  # an update (the same key)
            node = _node_name(new)
            bucket = self._pods_by_node.get(node)
            if bucket is not None and node == _node_name(old):  # the same node: replaced in place
                bucket[object_key(new)] = new  # (list sorts each node's pods)
                return
        if old is not None:
            self._pods_by_node.get(_node_name(old), {}).pop(object_key(old), None)
        if new is not None:
            self._pods_by_node.setdefault(_node_name(new), {})[object_key(new)] = new

    # watch -------------------------------------------------------------------------------

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
        with self._lock:
            initial = self._initial_events(watch_filter, resource_version)
            stream = BufferedWatch(watch_filter, initial, floor=self._rv)
            stream.attach(self.subscribe(stream.offer))
        return stream

    def _initial_events(
        self, watch_filter: WatchFilter, resource_version: str | None
    ) -> builtins.list[WatchEvent]:
        if resource_version in (None, "", "0"):
            listed = self.list(watch_filter.resource, namespace=watch_filter.namespace)
            return watch_filter.added(listed.items)
        since = parse_resource_version(str(resource_version))
        oldest = self._history.oldest_version()
        if oldest is None:
            oldest = self._rv + 1
        if since < oldest - 1 and since < self._rv:
            raise too_old(since, oldest - 1)
        replay: list[WatchEvent] = []
        for event in self._history.since(since):
            seen = watch_filter.translate(event)
            if seen is not None:
                replay.append(seen)
        return replay

    def close(self) -> None:
        self._dispatcher.clear()


def _plain_system_fields(meta: JSON) -> bool:
    """Whether prepare_update would take the metadata as it is, resourceVersion aside (uid,
    creationTimestamp and resourceVersion present, no generation to bump)."""
    return (
        "uid" in meta
        and "creationTimestamp" in meta
        and "resourceVersion" in meta
        and "generation" not in meta
    )


def _carries_system_fields(meta: JSON, old_meta: JSON) -> bool:
    """Whether prepare_update, given an update with `meta` (a dict) and old's very spec object,
    would keep meta's values as they are: uid, creationTimestamp and resourceVersion are old's
    own objects (present, so the preconditions hold), and generation is old's int (no spec
    change: it stays)."""
    uid = old_meta.get("uid")
    created = old_meta.get("creationTimestamp")
    version = old_meta.get("resourceVersion")
    generation = old_meta.get("generation")
    return (
        uid is not None
        and created is not None
        and version is not None
        and type(generation) is int
        and meta.get("uid") is uid
        and meta.get("creationTimestamp") is created
        and meta.get("resourceVersion") is version
        and meta.get("generation") is generation
    )


_FIRST = operator.itemgetter(0)
_SECOND = operator.itemgetter(1)


def _pair_key_order(pair: tuple[tuple[str, str], JSON]) -> tuple[str, str]:
    return key_order(pair[0])


def _plain_node_name(pod: JSON) -> bool:
    """Whether a pod's spec.nodeName is a plain str (not a subclass)."""
    return type(pod["spec"]["nodeName"]) is str


def _node_name(pod: JSON) -> str:
    """spec.nodeName, "" for anything else (a store must not fail after committing a write)."""
    spec = pod.get("spec")
    node = spec.get("nodeName") if isinstance(spec, dict) else None
    return node if isinstance(node, str) else ""
