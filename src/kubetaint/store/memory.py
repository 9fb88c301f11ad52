"""The in-memory store: the simulator's backend and the reference for the others.

Semantics are kube-apiserver storage's (see `kubetaint.store.interface`). Pods are indexed by
`spec.nodeName`, so `list("pods", field_selector="spec.nodeName=n")` costs O(pods on n).
"""

from __future__ import annotations

import base64
import builtins
import json
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterator

from kubetaint.api import errors
from kubetaint.api.selectors import parse_field_selector, parse_label_selector
from kubetaint.clock.base import Clock, format_time
from kubetaint.store.interface import JSON, Handler, ListResult, StoreOptions, WatchEvent, object_key
from kubetaint.store.watch import BufferedWatch, WatchFilter

#: Resources whose objects carry metadata.generation (bumped when spec changes).
GENERATION_RESOURCES = frozenset(
    {"pods", "deployments.apps", "replicasets.apps", "daemonsets.apps", "poddisruptionbudgets.policy"}
)
_NODE_INDEX = "spec.nodeName"


class MemoryStore:
    """Objects in dicts, one global resourceVersion counter, bounded change history."""

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
        self._history: deque[WatchEvent] = deque(maxlen=self._options.history_size)
        self._handlers: list[Handler] = []
        self._pending: deque[WatchEvent] = deque()
        self._dispatching = False
        self._lock = threading.RLock()

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
    ) -> ListResult:
        labels = parse_label_selector(label_selector)
        fields = parse_field_selector(field_selector, resource)
        with self._lock:
            list_rv = self._rv
            start = _decode_continue(continue_token) if continue_token else None
            matched: list[JSON] = []
            more = False
            for key, obj in self._candidates(resource, namespace, fields.exact_value(_NODE_INDEX)):
                if start is not None and key <= start:
                    continue
                meta = obj["metadata"]
                if not labels.empty and not labels.matches(meta.get("labels")):
                    continue
                if not fields.empty and not fields.matches(obj):
                    continue
                if limit and len(matched) >= limit:
                    more = True
                    break
                matched.append(obj)
        token = None
        if more and matched:
            token = _encode_continue(object_key(matched[-1]), list_rv)
        return ListResult(matched, str(list_rv), token)

    def _candidates(
        self, resource: str, namespace: str, node_name: str | None
    ) -> Iterator[tuple[tuple[str, str], JSON]]:
        if resource == "pods" and node_name is not None:
            by_key = self._pods_by_node.get(node_name, {})
            for key in sorted(by_key):
                if not namespace or key[0] == namespace:
                    yield key, by_key[key]
            return
        spaces = self._objects.get(resource, {})
        for ns in sorted(spaces) if not namespace else [namespace]:
            names = spaces.get(ns, {})
            for name in sorted(names):
                yield (ns, name), names[name]

    def current_resource_version(self) -> int:
        return self._rv

    # writes ------------------------------------------------------------------------------

    def create(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        namespace, name = object_key(obj)
        if not name:
            raise errors.StatusError(400, "BadRequest", "name is required")  # registry sets it earlier
        with self._lock:
            bucket = self._objects.setdefault(resource, {}).setdefault(namespace, {})
            if name in bucket:
                raise errors.already_exists(resource, name)
            meta = dict(obj.get("metadata") or {})
            meta.setdefault("uid", self._uid())
            meta.setdefault("creationTimestamp", format_time(self._clock.now()))
            if resource in GENERATION_RESOURCES:
                meta.setdefault("generation", 1)
            meta.pop("resourceVersion", None)
            stored = {**obj, "metadata": meta}
            if dry_run:
                return stored
            self._rv += 1
            meta["resourceVersion"] = str(self._rv)
            bucket[name] = stored
            self._index(resource, None, stored)
            self._commit(WatchEvent("ADDED", resource, stored, self._rv))
        self._dispatch()
        return stored

    def update(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        namespace, name = object_key(obj)
        with self._lock:
            bucket = self._objects.get(resource, {}).get(namespace, {})
            old = bucket.get(name)
            if old is None:
                raise errors.not_found(resource, name)
            meta = dict(obj.get("metadata") or {})
            precondition = meta.get("resourceVersion")
            if precondition and precondition != old["metadata"]["resourceVersion"]:
                raise errors.conflict(resource, name, errors.OBJECT_MODIFIED)
            old_meta = old["metadata"]
            meta["uid"] = old_meta.get("uid")
            meta["creationTimestamp"] = old_meta.get("creationTimestamp")
            if "generation" in old_meta:
                changed_spec = obj.get("spec") != old.get("spec")
                meta["generation"] = old_meta["generation"] + (1 if changed_spec else 0)
            meta["resourceVersion"] = old_meta["resourceVersion"]
            stored = {**obj, "metadata": meta}
            if stored == old or dry_run:
                return old if stored == old else stored
            self._rv += 1
            meta["resourceVersion"] = str(self._rv)
            bucket[name] = stored
            self._index(resource, old, stored)
            self._commit(WatchEvent("MODIFIED", resource, stored, self._rv, old))
        self._dispatch()
        return stored

    def delete(
        self,
        resource: str,
        namespace: str,
        name: str,
        *,
        resource_version: str | None = None,
        uid: str | None = None,
        dry_run: bool = False,
    ) -> JSON:
        with self._lock:
            bucket = self._objects.get(resource, {}).get(namespace, {})
            old = bucket.get(name)
            if old is None:
                raise errors.not_found(resource, name)
            old_meta = old["metadata"]
            if uid and uid != old_meta.get("uid"):
                detail = (
                    f"Precondition failed: UID in precondition: {uid}, "
                    f"UID in object meta: {old_meta.get('uid')}"
                )
                raise errors.conflict(resource, name, detail)
            if resource_version and resource_version != old_meta.get("resourceVersion"):
                detail = (
                    f"Precondition failed: ResourceVersion in precondition: {resource_version}, "
                    f"ResourceVersion in object meta: {old_meta.get('resourceVersion')}"
                )
                raise errors.conflict(resource, name, detail)
            if dry_run:
                return old
            self._rv += 1
            del bucket[name]
            self._index(resource, old, None)
            gone = {**old, "metadata": {**old_meta, "resourceVersion": str(self._rv)}}
            self._commit(WatchEvent("DELETED", resource, gone, self._rv, old))
        self._dispatch()
        return gone

    def _index(self, resource: str, old: JSON | None, new: JSON | None) -> None:
        if resource != "pods":
            return
        if old is not None:
            node = (old.get("spec") or {}).get("nodeName") or ""
            self._pods_by_node.get(node, {}).pop(object_key(old), None)
        if new is not None:
            node = (new.get("spec") or {}).get("nodeName") or ""
            self._pods_by_node.setdefault(node, {})[object_key(new)] = new

    # watch -------------------------------------------------------------------------------

    def _commit(self, event: WatchEvent) -> None:
        self._history.append(event)
        self._pending.append(event)

    def _dispatch(self) -> None:
        """Deliver pending events to every handler in commit order; re-entrant writes queue up."""
        with self._lock:
            if self._dispatching:
                return
            self._dispatching = True
        try:
            while True:
                with self._lock:
                    if not self._pending:
                        self._dispatching = False
                        return
                    event = self._pending.popleft()
                    handlers = list(self._handlers)
                for handler in handlers:
                    handler(event)
        except BaseException:
            with self._lock:
                self._dispatching = False
            raise

    def subscribe(self, handler: Handler) -> Callable[[], None]:
        with self._lock:
            self._handlers.append(handler)

        def unsubscribe() -> None:
            with self._lock:
                if handler in self._handlers:
                    self._handlers.remove(handler)

        return unsubscribe

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
            stream = BufferedWatch(watch_filter, initial)
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
        try:
            since = int(str(resource_version))
        except ValueError:
            raise errors.bad_request(f'invalid resource version "{resource_version}"') from None
        oldest = self._history[0].resource_version if self._history else self._rv + 1
        if since < oldest - 1 and since < self._rv:
            raise errors.expired(f"too old resource version: {since} ({oldest - 1})")
        replay: list[WatchEvent] = []
        for event in self._history:
            if event.resource_version > since:
                seen = watch_filter.translate(event)
                if seen is not None:
                    replay.append(seen)
        return replay

    def close(self) -> None:
        with self._lock:
            self._handlers.clear()


def _encode_continue(key: tuple[str, str], list_rv: int) -> str:
    raw = json.dumps({"v": 1, "rv": list_rv, "start": list(key)}).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _decode_continue(token: str) -> tuple[str, str]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        namespace, name = data["start"]
        return str(namespace), str(name)
    except (ValueError, KeyError, TypeError):
        raise errors.bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion"
        ) from None
