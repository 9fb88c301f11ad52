"""MemoryStore's bulk operations for loading a scenario and starting informers (mixed into
`kubetaint.store.memory.MemoryStore`): `list_keyed`, an unfiltered listing with each object's key,
and `create_many`, a run of creates committed under one lock hold. Both give exactly what `list`
and one `create` after another give (objects, order, uids, resourceVersions, history, events).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from kubetaint.api import errors
from kubetaint.clock.base import Clock, format_time
from kubetaint.store.changes import ChangeBatch
from kubetaint.store.fieldwrite import HistoryEntry
from kubetaint.store.interface import JSON, WatchEvent, object_key
from kubetaint.store.mutation import GENERATION_RESOURCES, namespace_order, prepare_create
from kubetaint.store.watch import Dispatcher

#: Read-only stand-in for a resource never written.
_NO_SPACES: dict[str, dict[str, JSON]] = {}


def pod_node_name(pod: JSON) -> str:
    """spec.nodeName, "" for anything else (a store must not fail after committing a write)."""
    spec = pod.get("spec")
    node = spec.get("nodeName") if isinstance(spec, dict) else None
    return node if isinstance(node, str) else ""


class BulkLoad:
    """`list_keyed` and `create_many` over a MemoryStore's state (the attributes below)."""

    _clock: Clock
    _uid: Callable[[], str]
    _objects: dict[str, dict[str, dict[str, JSON]]]
    _pods_by_node: dict[str, dict[tuple[str, str], JSON]]
    _rv: int
    _history: deque[HistoryEntry]
    _dispatcher: Dispatcher
    _lock: threading.RLock

    def list_keyed(self, resource: str) -> tuple[list[tuple[tuple[str, str], JSON]], int]:
        """`list(resource)` unfiltered, each object with its key (its object_key), and the
        listing's resourceVersion: what an unfiltered informer's start takes (no key worked out
        again per object, no selector asked about each)."""
        with self._lock:
            spaces = self._objects.get(resource, _NO_SPACES)
            keyed: list[tuple[tuple[str, str], JSON]] = []
            for ns in sorted(spaces, key=namespace_order):
                names = spaces[ns]
                keyed.extend([((ns, name), names[name]) for name in sorted(names)])
            return keyed, self._rv

    def create_many(self, resource: str, objects: list[JSON]) -> tuple[list[JSON], errors.StatusError | None]:
        """`create` of each object in turn, stopping at the first that fails: the objects stored
        and that failure (None: every one was). As `update_many`, the creates are committed under
        one lock hold and their events dispatched together afterwards, in commit order (a bulk
        load: the same writes, uids, resourceVersions and events as one create after another).
        A plain named request takes prepare_create's steps inline (see the loop)."""
        stored_objects: list[JSON] = []
        events: list[WatchEvent] = []
        failure: errors.StatusError | None = None
        clock, uid, indexed = self._clock, self._uid, resource == "pods"
        with self._lock:
            spaces = self._objects.setdefault(resource, {})
            by_node_index = self._pods_by_node
            generation = resource in GENERATION_RESOURCES
            for obj in objects:
                meta_in = obj.get("metadata")
                name = meta_in.get("name") if type(meta_in) is dict else None
                namespace = (meta_in.get("namespace") or "") if type(meta_in) is dict else None
                if type(name) is str and name and type(namespace) is str:
                    # the usual create request (a plain named object): prepare_create's steps,
                    # the key read once (object_key of the result: the same name and namespace)
                    meta = dict(meta_in)  # type: ignore[arg-type]  # (a dict: name is a str)
                    meta.setdefault("uid", uid())
                    meta.setdefault("creationTimestamp", format_time(clock.now()))
                    if generation:
                        meta.setdefault("generation", 1)
                    meta.pop("resourceVersion", None)
                    stored = {**obj, "metadata": meta}
                    key = (namespace, name)
                else:
                    try:
                        stored = prepare_create(resource, obj, clock, uid)
                    except errors.StatusError as err:
                        failure = err
                        break
                    key = object_key(stored)
                bucket = spaces.get(key[0])
                if bucket is None:
                    bucket = spaces[key[0]] = {}
                name = key[1]
                if name in bucket:
                    failure = errors.already_exists(resource, name)
                    break
                self._rv = rv = self._rv + 1
                stored["metadata"]["resourceVersion"] = str(rv)
                bucket[name] = stored
                if indexed:  # as `create`
                    by_node = by_node_index.get(node := pod_node_name(stored))
                    if by_node is None:
                        by_node = by_node_index[node] = {}
                    by_node[key] = stored
                stored_objects.append(stored)
                events.append(WatchEvent("ADDED", resource, stored, rv))
            self._history.extend(events)  # _commit of each
            for event in events:  # each create its own commit's batch, as `create` publishes it
                self._dispatcher.publish(ChangeBatch((event,)))
        self._dispatcher.dispatch()
        return stored_objects, failure
