"""The etcd v3 store, through etcd's JSON gateway with etcd3gw: what makes kubetaint servers
share one cluster state (mirrors apiserver pkg/storage/etcd3/store.go).

- Keys `<prefix>/<plural>/<namespace>/<name>`; values are the object's JSON without
  resourceVersion; an object's resourceVersion is its key's mod_revision and a list's is the
  response header's revision.
- create: txn `create_revision == 0`; update/delete: read, check preconditions, txn
  `mod_revision == read revision`, retried on a lost race (GuaranteedUpdate) unless the caller's
  own precondition then fails.
- watch(): one etcd watch per stream, from the requested revision + 1 (etcd's history serves
  resumption); a compacted revision gives 410 Expired.
- subscribe(): handlers are fed by one etcd watch thread over the whole prefix, so a server sees
  the other servers' writes too. A write returns after this process's handlers have seen it,
  unless it was made from a handler (the watch thread itself). With `deliver_through` (a live
  server's event loop) the watch thread only receives: deliveries run on the loop, and a write
  made on the loop delivers its own change (and any received before it) before returning.
- History: after `history_size` further revisions the store compacts etcd to keep that many.
- Reachability: a background probe (`etcd_health`) tells whether etcd answers; while it does
  not, every call fails at once with 503 (no call waits for its own timeout), and when etcd
  answers again the subscription feed resumes after the last delivered revision.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import re
import threading
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from etcd3gw.client import Etcd3Client
from etcd3gw.exceptions import ConnectionFailedError, ConnectionTimeoutError, Etcd3Exception

from kubetaint.api import errors
from kubetaint.api.selectors import parse_field_selector, parse_label_selector
from kubetaint.clock.base import Clock
from kubetaint.store.base import ObjectByObject
from kubetaint.store.changes import BatchHandler, ChangeBatch
from kubetaint.store.etcd_codec import (
    BUILTIN_RESOURCES,
    b64,
    decode_kv,
    encode_value,
    prefix_end,
    resource_of_key,
    to_watch_event,
    unb64,
)
from kubetaint.store.etcd_health import EtcdHealth, connection_reason
from kubetaint.store.etcd_watch import EtcdWatchStream, WatchStreamError, compact_revision_for
from kubetaint.store.interface import (
    JSON,
    Capabilities,
    Delete,
    ListResult,
    StoreError,
    StoreOptions,
    object_key,
)
from kubetaint.store.mutation import (
    check_delete_preconditions,
    continue_resource_version,
    decode_continue,
    encode_continue,
    key_segment,
    parse_resource_version,
    prepare_create,
    prepare_update,
    registry_key,
    too_old,
    with_resource_version,
)
from kubetaint.store.snapshot import expired_continue, expired_list, too_large_resource_version
from kubetaint.store.watch import BufferedWatch, Dispatcher, WatchFilter

_PAGE = 500


def parse_endpoint(endpoint: str) -> tuple[str, int]:
    """`etcd://HOST:PORT`, `http://HOST:PORT` or `HOST:PORT` → (host, port)."""
    parts = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    if not parts.hostname or parts.port is None:
        raise StoreError(f"invalid etcd address {endpoint!r}: expected etcd://HOST:PORT")
    return parts.hostname, parts.port


class EtcdStore(ObjectByObject):
    """Objects in etcd under `options.prefix`."""

    def __init__(
        self,
        endpoint: str,
        clock: Clock,
        *,
        options: StoreOptions | None = None,
        uid_factory: Callable[[], str] | None = None,
        timeout: float = 10.0,
    ) -> None:
        self._clock = clock
        self.capabilities = Capabilities(reachability=self, threaded_delivery=self)
        self._options = options or StoreOptions()
        self._uid = uid_factory or (lambda: str(uuid.uuid4()))
        self._prefix = self._options.prefix.rstrip("/")
        host, port = parse_endpoint(endpoint)
        self.url = f"http://{host}:{port}"
        self._client = Etcd3Client(host, port, timeout=timeout, api_path="/v3/")
        self._resources = dict(BUILTIN_RESOURCES)
        self._dispatcher = Dispatcher()
        self._feed: EtcdWatchStream | None = None
        self._feed_lock = threading.Lock()
        self._dispatched = threading.Condition()
        self._dispatched_rv = 0
        self._received_rv = 0  # the feed's last revision handed to the dispatcher
        self._run_soon: Callable[[Callable[[], None]], object] | None = None
        self._watches: set[BufferedWatch] = set()  # open watch streams, stopped by close()
        self._resume_after: int | None = None  # the subscription feed's last delivered revision
        self._compacted = 0
        self._closed = False
        self._health: EtcdHealth | None = None
        try:
            self._revision_now()
        except errors.StatusError as err:
            raise StoreError(
                err.message if err.code == 503 else f"etcd at {self.url}: {err.message}"
            ) from None
        self._health = EtcdHealth(self.url, self._prefix, on_recovered=self._recovered)

    # reachability ------------------------------------------------------------------------

    def unreachable(self) -> str | None:
        """None while etcd answers its health probes; otherwise the last probe's error, as
        kube-apiserver's etcd check words it."""
        away = self._health.error() if self._health is not None else None
        return None if away is None else f"error getting data from etcd: {away}"

    def _recovered(self) -> None:
        """etcd answers again: resume the subscription feed if the outage ended it."""
        self._ensure_feed()
        with self._dispatched:
            self._dispatched.notify_all()

    # transport ---------------------------------------------------------------------------

    def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        away = self._health.away() if self._health is not None else None
        if away is not None:
            raise errors.StatusError(503, "ServiceUnavailable", f"cannot reach etcd at {self.url}: {away}")
        try:
            response: dict[str, Any] = self._client.post(self._client.get_url(path), json=body)
        except (ConnectionFailedError, ConnectionTimeoutError) as err:
            reason = connection_reason(err.detail_text or str(err))
            raise errors.StatusError(
                503, "ServiceUnavailable", f"cannot reach etcd at {self.url}: {reason}"
            ) from None
        except Etcd3Exception as err:
            raise _etcd_error(err) from None
        return response

    def _range(self, key: str, end: str | None = None, **options: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"key": key, **options}
        if end is not None:
            body["range_end"] = end
        return self._call("/kv/range", body)

    def _revision_now(self) -> int:
        return int(self._range(b64(self._prefix + "/"), limit=1, keys_only=True)["header"]["revision"])

    def _key(self, resource: str, namespace: str, name: str) -> str:
        self._resources.setdefault(key_segment(resource), resource)
        return registry_key(self._prefix, resource, namespace, name)

    def _range_prefix(self, resource: str, namespace: str) -> str:
        self._resources.setdefault(key_segment(resource), resource)
        base = f"{self._prefix}/{key_segment(resource)}/"
        return f"{base}{namespace}/" if namespace else base

    # reads -------------------------------------------------------------------------------

    def get(self, resource: str, namespace: str, name: str) -> JSON:
        kvs = self._range(b64(self._key(resource, namespace, name))).get("kvs")
        if not kvs:
            raise errors.not_found(resource, name)
        return decode_kv(kvs[0])

    def current_resource_version(self) -> int:
        return self._revision_now()

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
        prefix = self._range_prefix(resource, namespace)
        start = prefix
        after: tuple[str, str] | None = None
        revision = resource_version or 0  # etcd ranges the first page's revision for the next ones
        if continue_token:
            after = decode_continue(continue_token)
            start = self._key(resource, *after) + "\x00"
            revision = max(continue_resource_version(continue_token), 0)
        end = prefix_end(prefix)
        matched: list[JSON] = []
        more = False
        # Without selectors every key is an item: fetch just one more than asked for.
        size = min(_PAGE, limit + 1) if limit and labels.empty and fields.empty else _PAGE
        while not more:
            page = self._range_at(b64(start), end, revision, after, limit=size)
            revision = revision or int(page["header"]["revision"])  # later pages read the same snapshot
            kvs = page.get("kvs") or []
            for kv in kvs:
                obj = decode_kv(kv)
                if not labels.empty and not labels.matches(obj["metadata"].get("labels")):
                    continue
                if not fields.empty and not fields.matches(obj):
                    continue
                if limit and len(matched) >= limit:
                    more = True
                    break
                matched.append(obj)
            if not page.get("more") or not kvs:
                break
            start = _after(kvs[-1])
        if more and matched:
            last = object_key(matched[-1])
            token = encode_continue(last, revision)
            remaining = None
            if labels.empty and fields.empty:  # etcd3 counts the keys left, not matches
                rest = b64(self._key(resource, *last) + "\x00")
                counted = self._range(rest, end, revision=str(revision), count_only=True)
                remaining = int(counted.get("count") or 0)
            return ListResult(matched, str(revision), token, remaining)
        return ListResult(matched, str(revision))

    def _range_at(
        self, start: str, end: str, revision: int, after: tuple[str, str] | None, **options: Any
    ) -> dict[str, Any]:
        """A range at `revision` (0: the current one), with etcd3's errors for a compacted
        (410) or future (504) revision."""
        if not revision:
            return self._range(start, end, **options)
        try:
            return self._range(start, end, revision=str(revision), **options)
        except errors.StatusError as err:
            if "compacted" in err.message:
                raise expired_continue(after) if after is not None else expired_list() from None
            if "future revision" in err.message:
                raise too_large_resource_version(revision, self._revision_now()) from None
            raise

    # writes ------------------------------------------------------------------------------

    def _create(self, resource: str, obj: JSON, dry_run: bool) -> JSON:
        stored = prepare_create(resource, obj, self._clock, self._uid)
        namespace, name = object_key(stored)
        key = b64(self._key(resource, namespace, name))
        if dry_run:
            if self._range(key, count_only=True).get("count"):
                raise errors.already_exists(resource, name)
            return stored
        txn = {
            "compare": [{"key": key, "target": "CREATE", "result": "EQUAL", "create_revision": "0"}],
            "success": [{"request_put": {"key": key, "value": encode_value(stored)}}],
        }
        response = self._call("/kv/txn", txn)
        if not response.get("succeeded"):
            raise errors.already_exists(resource, name)
        rv = int(response["header"]["revision"])
        stored["metadata"]["resourceVersion"] = str(rv)
        self._written(rv)
        return stored

    def _update(self, resource: str, obj: JSON, dry_run: bool) -> JSON:
        """A read, a check of the preconditions and a compare-and-swap on the revision read, as
        GuaranteedUpdate does."""
        namespace, name = object_key(obj)
        key = b64(self._key(resource, namespace, name))
        while True:
            old = self.get(resource, namespace, name)
            stored = prepare_update(resource, obj, old)
            if stored is None:
                return old
            if dry_run:
                return stored
            rv = self._swap(key, old, {"request_put": {"key": key, "value": encode_value(stored)}})
            if rv:
                stored["metadata"]["resourceVersion"] = str(rv)
                self._written(rv)
                return stored

    def _delete(self, op: Delete) -> JSON:
        resource, namespace, name = op.resource, op.namespace, op.name
        key = b64(self._key(resource, namespace, name))
        while True:
            old = self.get(resource, namespace, name)
            check_delete_preconditions(resource, name, old, op.resource_version, op.uid)
            if op.dry_run:
                return old
            rv = self._swap(key, old, {"request_delete_range": {"key": key}})
            if rv:
                self._written(rv)
                return with_resource_version(old, rv)

    def _swap(self, key: str, old: JSON, request: dict[str, Any]) -> int:
        """Apply `request` if the key is still at old's revision: the new revision, or 0."""
        compare = {
            "key": key,
            "target": "MOD",
            "result": "EQUAL",
            "mod_revision": old["metadata"]["resourceVersion"],
        }
        response = self._call("/kv/txn", {"compare": [compare], "success": [request]})
        return int(response["header"]["revision"]) if response.get("succeeded") else 0

    def _written(self, rv: int) -> None:
        self._maybe_compact(rv)
        feed = self._ensure_feed()
        if feed is None or threading.current_thread() is feed.thread:
            return
        if self._run_soon is not None:  # deliver here, on the writing thread
            with self._dispatched:
                self._dispatched.wait_for(lambda: self._received_rv >= rv or self._feed is None, timeout=10)
            self._dispatcher.dispatch()
            return
        with self._dispatched:  # our own handlers see our writes before we return
            self._dispatched.wait_for(lambda: self._dispatched_rv >= rv or self._feed is None, timeout=10)

    def _maybe_compact(self, rv: int) -> None:
        keep = self._options.history_size
        if rv - self._compacted > keep + keep // 8 and rv > keep:
            target = rv - keep
            try:
                self._call("/kv/compaction", {"revision": str(target)})
            except errors.StatusError as err:
                if "compacted" not in err.message:
                    raise
            self._compacted = max(self._compacted, target)

    # watch -------------------------------------------------------------------------------

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
        prefix = self._range_prefix(resource, namespace)
        if resource_version in (None, "", "0"):
            listed = self.list(resource, namespace=namespace)
            since = int(listed.resource_version)
            initial = watch_filter.added(listed.items)
        else:
            since = parse_resource_version(str(resource_version))
            self._check_not_compacted(prefix, since)
            initial = []
        stream = BufferedWatch(watch_filter, initial, floor=since)

        def on_events(raw: list[dict[str, Any]]) -> None:
            stream.offer([to_watch_event(event, resource, self._prefix) for event in raw])

        try:
            feed = EtcdWatchStream(
                self.url,
                b64(prefix),
                prefix_end(prefix),
                since + 1,
                on_events=on_events,
                on_end=lambda _: stream.stop(),
            )
        except WatchStreamError as err:
            raise errors.StatusError(503, "ServiceUnavailable", str(err)) from None
        with self._feed_lock:
            self._watches.add(stream)

        def end_feed() -> None:
            feed.stop()
            with self._feed_lock:
                self._watches.discard(stream)

        stream.attach(end_feed)
        return stream

    def _check_not_compacted(self, prefix: str, since: int) -> None:
        """410 when a watch from `since` (etcd: from since + 1) needs compacted history."""
        try:
            self._range(b64(prefix), prefix_end(prefix), revision=str(since + 1), limit=1, keys_only=True)
        except errors.StatusError as err:
            if "compacted" not in err.message:
                if "future revision" in err.message:
                    return
                raise
            compacted = compact_revision_for(self.url, b64(prefix), prefix_end(prefix), since + 1)
            raise too_old(since, compacted - 1 if compacted else since + 1) from None

    def subscribe(self, handler: BatchHandler, resource: str | None = None) -> Callable[[], None]:
        unsubscribe = self._dispatcher.subscribe(handler, resource)
        with self._feed_lock:
            if self._resume_after is None:
                self._resume_after = self._revision_now()
        self._ensure_feed()
        return unsubscribe

    def _ensure_feed(self) -> EtcdWatchStream | None:
        """The subscription stream, (re)started after the last delivered revision if needed."""
        with self._feed_lock:
            if (
                self._feed is None
                and self._resume_after is not None
                and not self._closed
                and self.unreachable() is None  # resumed by `_recovered`
            ):
                prefix = self._prefix + "/"
                with contextlib.suppress(WatchStreamError):  # etcd down: retried at the next write
                    self._feed = EtcdWatchStream(
                        self.url,
                        b64(prefix),
                        prefix_end(prefix),
                        self._resume_after + 1,
                        on_events=self._deliver,
                        on_end=self._feed_ended,
                        name="etcd-feed",
                    )
            return self._feed

    def deliver_through(self, run_soon: Callable[[Callable[[], None]], object]) -> None:
        self._run_soon = run_soon

    def _deliver(self, raw: builtins.list[dict[str, Any]]) -> None:
        run_soon = self._run_soon
        if run_soon is not None:
            self._receive(raw)
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody to deliver to
                run_soon(self._dispatcher.dispatch)
            return
        for event in raw:
            key = unb64(event["kv"]["key"])
            resource = resource_of_key(key, self._prefix, self._resources)
            converted = to_watch_event(event, resource, self._prefix)
            self._dispatcher.publish(ChangeBatch((converted,)))  # each revision its own commit
            try:
                self._dispatcher.dispatch()
            finally:  # a failing handler must not make the resumed feed replay this event forever
                with self._dispatched:
                    self._dispatched_rv = self._resume_after = converted.resource_version
                    self._dispatched.notify_all()

    def _receive(self, raw: builtins.list[dict[str, Any]]) -> None:
        """Queue the events for delivery elsewhere (`deliver_through`), in the feed's thread."""
        for event in raw:
            key = unb64(event["kv"]["key"])
            converted = to_watch_event(event, self._resource_of(key), self._prefix)
            self._dispatcher.publish(ChangeBatch((converted,)))
            with self._dispatched:
                self._received_rv = self._resume_after = converted.resource_version
                self._dispatched.notify_all()

    def _resource_of(self, key: str) -> str:
        return resource_of_key(key, self._prefix, self._resources)

    def _feed_ended(self, reason: str) -> None:
        """The subscription stream broke (etcd restarted, connection lost): resume after the last
        delivered revision. If etcd compacted that history meanwhile, the changes in between are
        lost to subscribers (upstream informers would re-list); resume at the compaction."""
        with self._feed_lock:
            self._feed = None
            compacted = re.fullmatch(r"compacted at revision (\d+)", reason)
            if compacted and self._resume_after is not None:
                self._resume_after = max(self._resume_after, int(compacted[1]) - 1)
        self._ensure_feed()
        with self._dispatched:
            self._dispatched.notify_all()

    # lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        if self._health is not None:
            self._health.stop()
        with self._feed_lock:
            self._closed = True
            feed, self._feed = self._feed, None
            watches = list(self._watches)
        if feed is not None:
            feed.stop()
        for stream in watches:
            stream.stop()
        self._dispatcher.clear()
        self._client.session.close()


def _after(kv: dict[str, Any]) -> str:
    """The first key after `kv`'s (to continue a range)."""
    return unb64(kv["key"]) + "\x00"


def _etcd_error(err: Etcd3Exception) -> errors.StatusError:
    detail = err.detail_text or str(err)
    with contextlib.suppress(ValueError, AttributeError):
        detail = json.loads(detail).get("error", detail)
    return errors.internal_error(f"etcd: {detail}")
