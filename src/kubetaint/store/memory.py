"""The in-memory store: the simulator's backend and the reference for the others.

Semantics are kube-apiserver storage's (see `kubetaint.store.interface`). Pods are indexed by
`spec.nodeName`, so `list("pods", field_selector="spec.nodeName=n")` costs O(pods on n). The bulk
load (`.memorybulk`) and field writes (`.memoryfields`) are mixed in from their own modules.
"""

from __future__ import annotations

import builtins
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from typing import ClassVar

from kubetaint.api import errors
from kubetaint.api.selectors import FieldSelector, LabelSelector, parse_field_selector, parse_label_selector
from kubetaint.clock.base import Clock
from kubetaint.store.changes import BatchHandler, ChangeBatch
from kubetaint.store.fieldwrite import (
    HistoryEntry,
    RepeatedRounds,
    history_events,
)
from kubetaint.store.interface import JSON, ListResult, StoreOptions, WatchEvent, object_key
from kubetaint.store.memorybulk import BulkLoad, pod_node_name
from kubetaint.store.memoryfields import FieldWrites
from kubetaint.store.mutation import (
    GENERATION_RESOURCES,
    check_delete_preconditions,
    continue_resource_version,
    decode_continue,
    encode_continue,
    key_order,
    namespace_order,
    parse_resource_version,
    prepare_create,
    prepare_update,
    too_old,
    with_resource_version,
)
from kubetaint.store.snapshot import (
    expired_continue,
    expired_list,
    page,
    state_at,
    too_large_resource_version,
)
from kubetaint.store.watch import BufferedWatch, Dispatcher, WatchFilter

__all__ = ["GENERATION_RESOURCES", "MemoryStore"]

_NODE_INDEX = "spec.nodeName"
_EMPTY: dict[str, JSON] = {}  # read-only stand-in for a missing bucket


class MemoryStore(BulkLoad, FieldWrites):
    """Objects in dicts, one global resourceVersion counter, bounded change history."""

    #: `get` returns the very object a write stored (and returned) until the next write of that
    #: key, so a caller may tell "nobody wrote it since" by identity (registry.podtrust).
    returns_stored_objects: ClassVar[bool] = True
    #: Every write runs the subscribers before it returns (in the writer's thread; a write made
    #: inside a subscriber is delivered when that subscriber returns), so outside subscribers
    #: they have seen every committed change: see kubetaint.kubelet.running.
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
        self._history: deque[HistoryEntry] = deque(maxlen=self._options.history_size)
        self._dispatcher = Dispatcher()
        self._lock = threading.RLock()
        self._repeated = RepeatedRounds()  # vouched field writes repeating the objects of a recent one

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
        start = decode_continue(continue_token) if continue_token else None
        snapshot = resource_version
        if continue_token and (token_rv := continue_resource_version(continue_token)) > 0:
            snapshot = token_rv
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
            list_rv = self._rv
            matched: list[JSON] = []
            more = False
            remaining = 0
            candidates = self._candidates(resource, namespace, node_name)
            for key, obj in candidates:
                if start is not None and key_order(key) <= key_order(start):
                    continue
                meta = obj["metadata"]
                if not labels.empty and not labels.matches(meta.get("labels")):
                    continue
                if (
                    not fields.empty
                    and not (by_node_only and type(obj["spec"]["nodeName"]) is str)
                    and not fields.matches(obj)
                ):
                    continue
                if limit and len(matched) >= limit:
                    more = True
                    if labels.empty and fields.empty:  # etcd3 counts the keys left, not matches
                        remaining = 1 + sum(1 for _ in candidates)
                    break
                matched.append(obj)
        if more and matched:
            token = encode_continue(object_key(matched[-1]), list_rv)
            selecting = not (labels.empty and fields.empty)
            return ListResult(matched, str(list_rv), token, None if selecting else remaining)
        return ListResult(matched, str(list_rv))

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
        if snapshot > self._rv:
            raise too_large_resource_version(snapshot, self._rv)
        first = next(history_events(self._history), None)
        oldest = first.resource_version if first is not None else self._rv + 1
        if snapshot < oldest - 1:
            raise expired_continue(start) if start is not None else expired_list()
        later = (e for e in history_events(self._history, snapshot) if e.resource == resource)
        state = state_at(self._candidates(resource, namespace, None), later)
        return page(
            state,
            namespace=namespace,
            start=start,
            limit=limit,
            labels=labels,
            fields=fields,
            list_rv=snapshot,
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

    def current_resource_version(self) -> int:
        return self._rv

    # writes ------------------------------------------------------------------------------

    def create(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        stored = prepare_create(resource, obj, self._clock, self._uid)
        key = object_key(stored)
        name = key[1]
        with self._lock:
            bucket = self._objects.setdefault(resource, {}).setdefault(key[0], {})
            if name in bucket:
                raise errors.already_exists(resource, name)
            if dry_run:
                return stored
            self._rv = rv = self._rv + 1
            stored["metadata"]["resourceVersion"] = str(rv)
            bucket[name] = stored
            if resource == "pods":  # _index(resource, None, stored) with the key at hand
                by_node = self._pods_by_node.get(node := _node_name(stored))
                if by_node is None:
                    by_node = self._pods_by_node[node] = {}
                by_node[key] = stored
            event = WatchEvent("ADDED", resource, stored, rv)
            self._history.append(event)  # _commit
            self._dispatcher.publish(ChangeBatch((event,)))
        self._dispatcher.dispatch()
        return stored

    def update(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        namespace, name = object_key(obj)
        with self._lock:
            bucket = self._objects.get(resource, {}).get(namespace, {})
            old = bucket.get(name)
            if old is None:
                raise errors.not_found(resource, name)
            stored = prepare_update(resource, obj, old)
            if stored is None:
                return old
            if dry_run:
                return stored
            self._rv += 1
            stored["metadata"]["resourceVersion"] = str(self._rv)
            bucket[name] = stored
            self._index(resource, old, stored)
            self._commit(WatchEvent("MODIFIED", resource, stored, self._rv, old))
        self._dispatcher.dispatch()
        return stored

    def update_many(
        self, resource: str, objects: builtins.list[JSON]
    ) -> tuple[builtins.list[JSON], errors.StatusError | None]:
        """`kubetaint.store.interface.update_many`: the updates committed under one lock hold, their
        events dispatched together afterwards (in commit order, as one update after another)."""
        return self._update_many(resource, objects, grouped=False)

    def update_group(
        self, resource: str, objects: builtins.list[JSON]
    ) -> tuple[builtins.list[JSON], errors.StatusError | None]:
        """`update_many` whose events are published as one batch (`Dispatcher.publish`: handler
        by handler, each seeing them all in commit order)."""
        return self._update_many(resource, objects, grouped=True)

    def _update_many(
        self, resource: str, objects: builtins.list[JSON], *, grouped: bool
    ) -> tuple[builtins.list[JSON], errors.StatusError | None]:
        """The updates under one lock hold: their events one batch (`grouped`), else one batch
        each (delivered as consecutive updates' are)."""
        stored_objects: list[JSON] = []
        events: list[WatchEvent] = []
        failure: errors.StatusError | None = None
        indexed = resource == "pods"
        with self._lock:
            spaces = self._objects.get(resource, {})
            for obj in objects:
                try:
                    stored, event = self._update_in(resource, spaces, obj, indexed)
                except errors.StatusError as err:
                    failure = err
                    break
                stored_objects.append(stored)
                if event is not None:
                    events.append(event)
            self._history.extend(events)
            if grouped:
                self._dispatcher.publish(ChangeBatch(events))
            else:
                for event in events:
                    self._dispatcher.publish(ChangeBatch((event,)))
        self._dispatcher.dispatch()
        return stored_objects, failure

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
    ) -> JSON:
        with self._lock:
            bucket = self._objects.get(resource, {}).get(namespace, {})
            old = bucket.get(name)
            if old is None:
                raise errors.not_found(resource, name)
            check_delete_preconditions(resource, name, old, resource_version, uid)
            if dry_run:
                return old
            self._rv += 1
            del bucket[name]
            self._index(resource, old, None)
            gone = with_resource_version(old, self._rv)
            self._commit(WatchEvent("DELETED", resource, gone, self._rv, old))
        self._dispatcher.dispatch()
        return gone

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

    def _commit(self, event: WatchEvent) -> None:
        self._history.append(event)
        self._dispatcher.publish(ChangeBatch((event,)))

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
        labels = parse_label_selector(label_selector)
        fields = parse_field_selector(field_selector, resource)
        watch_filter = WatchFilter(resource, namespace, labels, fields)
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
            return [
                WatchEvent("ADDED", watch_filter.resource, obj, int(obj["metadata"]["resourceVersion"]))
                for obj in listed.items
                if watch_filter.matches(obj)
            ]
        since = parse_resource_version(str(resource_version))
        first = next(history_events(self._history), None)
        oldest = first.resource_version if first is not None else self._rv + 1
        if since < oldest - 1 and since < self._rv:
            raise too_old(since, oldest - 1)
        replay: list[WatchEvent] = []
        for event in history_events(self._history, since):
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


#: spec.nodeName, "" for anything else (a store must not fail after committing a write).
_node_name = pod_node_name
