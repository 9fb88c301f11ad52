"""Watch streams over HTTP: one JSON event per line, chunked, from a resourceVersion, with
bookmarks, timeoutSeconds, Table rendering and in-stream 410 Expired
(mirrors apiserver/pkg/endpoints/handlers/watch.go and the watch cache's error watcher).

Transport timeouts (timeoutSeconds, bookmark cadence) use the event loop's monotonic time: they
are about the connection, not cluster time, so they do not go through the injected clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from kubetaint.api import errors
from kubetaint.api.crd import CustomResource
from kubetaint.apiserver import crd_served, eventsv1, query
from kubetaint.apiserver.crd_teardown import TEARDOWN_DELAY, StorageTeardowns, WatchEnd
from kubetaint.apiserver.durability import DurabilityBarrier
from kubetaint.apiserver.listing import validate_list_options
from kubetaint.apiserver.rest import Target
from kubetaint.apiserver.tables import build_table, include_object_policy, with_type
from kubetaint.apiserver.wire import JSON, dumps, negotiate
from kubetaint.clock.base import Clock
from kubetaint.registry.graceful import go_seconds
from kubetaint.speed.reference import reference_mode
from kubetaint.store.interface import Store, Watch, WatchEvent
from kubetaint.store.mutation import parse_resource_version
from kubetaint.store.snapshot import too_large_resource_version

#: kube-apiserver's --min-request-timeout; watches without timeoutSeconds last this long.
DEFAULT_WATCH_SECONDS = 1800.0
BOOKMARK_INTERVAL = 60.0


class WatchStreamer:
    """Serves `?watch=true` requests from a store."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        bookmark_interval: float = BOOKMARK_INTERVAL,
        durable: DurabilityBarrier | None = None,
        teardowns: StorageTeardowns | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.bookmark_interval = bookmark_interval
        self.durable = durable or DurabilityBarrier(store)
        #: Ends the watches of custom resources whose CRD's storage is torn down.
        self.teardowns = teardowns if teardowns is not None else StorageTeardowns(store)

    def respond(self, target: Target, request: Request) -> Response:
        params = query.of(request)
        validate_list_options(params, watch=True)
        crd_served.check_field_labels(target.res, params.get("fieldSelector"))
        rendering = negotiate(request.headers.get("accept"))
        policy = include_object_policy(params.get("includeObject")) if rendering.table else "Metadata"
        bookmarks = params.flag("allowWatchBookmarks")
        # time.Duration(timeoutSeconds) * time.Second, as get.go computes it: 0 is the default,
        # and a value that wraps around to a negative duration ends the watch at once
        timeout = go_seconds(params.int64("timeoutSeconds")) or DEFAULT_WATCH_SECONDS
        timeout = max(timeout, 0.0)
        since = params.get("resourceVersion") or None
        initial: list[WatchEvent] = []
        initial_end: int | None = None
        if "sendInitialEvents" in params:
            since, initial, initial_end = self._initial_events(target, params, since)
            if not bookmarks:
                initial_end = None  # the cache watcher marks the end only for bookmark watchers
        expired: errors.StatusError | None = None
        try:
            stream: Watch | None = self.store.watch(
                target.res.store_resource,
                namespace=target.namespace,
                resource_version=since,
                label_selector=params.get("labelSelector"),
                field_selector=eventsv1.stored_field_selector(target.res, params.get("fieldSelector")),
            )
        except errors.StatusError as exc:
            if exc.code != 410:
                raise
            stream, expired = None, exc
        encoder = _Encoder(target, self.clock, rendering.table, rendering.table_version, policy)
        if stream is None or expired is not None:
            assert expired is not None
            body = _single(encoder.error(expired))
        else:
            start_rv = int(since) if since and since.isdigit() else self.store.current_resource_version()
            end: WatchEnd | None = None
            forget: Callable[[], None] | None = None
            if isinstance(target.res, CustomResource):
                end, forget = self.teardowns.watch(target.res)
            body = self._events(
                stream,
                encoder,
                timeout,
                bookmarks,
                start_rv,
                initial=initial,
                initial_end=initial_end,
                end=end,
                forget=forget,
            )
        return StreamingResponse(body, media_type="application/json")

    def _initial_events(
        self, target: Target, params: query.Query, since: str | None
    ) -> tuple[str | None, list[WatchEvent], int | None]:
        """A watch with `sendInitialEvents` (resourceVersionMatch=NotOlderThan, validated): the
        resourceVersion to watch from, the initial ADDED events and the version its end bookmark
        reports. `true` lists the current state (a consistent snapshot at least as fresh as
        `since`; 504 for a version in the future) and watches from the list's version; `false`
        starts at `since`, or at the current version when none is given."""
        current = self.store.current_resource_version()
        if not params.flag("sendInitialEvents"):
            return (since if since and since != "0" else str(current)), [], None
        if since and since != "0":
            minimum = parse_resource_version(since)
            if minimum > current:
                raise too_large_resource_version(minimum, current)
        resource = target.res.store_resource
        listed = self.store.list(
            resource,
            namespace=target.namespace,
            label_selector=params.get("labelSelector"),
            field_selector=eventsv1.stored_field_selector(target.res, params.get("fieldSelector")),
        )
        added = [
            WatchEvent("ADDED", resource, obj, int(obj["metadata"]["resourceVersion"]))
            for obj in listed.items
        ]
        return listed.resource_version, added, int(listed.resource_version)

    async def _events(
        self,
        stream: Watch,
        encoder: _Encoder,
        timeout: float,
        bookmarks: bool,
        last_rv: int,
        *,
        initial: list[WatchEvent] | None = None,
        initial_end: int | None = None,
        end: WatchEnd | None = None,
        forget: Callable[[], None] | None = None,
    ) -> AsyncIterator[bytes]:
        """The watch's lines until its timeout, the stream's end, or (`end` set: its custom
        resource's storage torn down) TEARDOWN_DELAY later, the events committed until then
        delivered first."""
        for event in initial or ():
            yield encoder.event(event)
        if initial_end is not None:
            yield encoder.bookmark(initial_end, initial_events_end=True)
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()
        loop_thread = threading.get_ident()
        direct = not reference_mode()

        def waker() -> None:
            """Speeds up the delivery of events committed on the loop itself (off with
            `KUBETAINT_REFERENCE=1`): set at once, without the self-pipe write that waking the
            loop from another thread needs."""
            if direct and threading.get_ident() == loop_thread:
                wake.set()
            else:
                loop.call_soon_threadsafe(wake.set)

        pushes = stream.push_to(waker)
        deadline = loop.time() + timeout
        next_bookmark = loop.time() + self.bookmark_interval
        torn_down: float | None = None  # when the storage's teardown ends the watch
        if end is not None:
            end.wake_with(waker)
        try:
            while not stream.stopped:
                wake.clear()
                events = stream.drain()
                if events:
                    await self.durable.wait()  # no event a power loss could take back
                    for chunk in encoder.chunks(events):
                        yield chunk
                    last_rv = max(last_rv, *(event.resource_version for event in events))
                    continue
                now = loop.time()
                if now >= deadline:
                    return
                if end is not None and end.is_set:
                    if torn_down is None:
                        torn_down = now + TEARDOWN_DELAY
                    elif now >= torn_down:
                        return
                if bookmarks and now >= next_bookmark:
                    next_bookmark = now + self.bookmark_interval
                    yield encoder.bookmark(max(last_rv, stream.progress))
                pause = min(deadline, next_bookmark if bookmarks else deadline, torn_down or deadline) - now
                if pushes:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(wake.wait(), timeout=max(pause, 0.0))
                else:
                    polled = await asyncio.to_thread(stream.wait, min(max(pause, 0.0), 1.0))
                    if polled:
                        await self.durable.wait()
                        for chunk in encoder.chunks(polled):
                            yield chunk
                        last_rv = max(last_rv, *(event.resource_version for event in polled))
        finally:
            if pushes:
                stream.push_to(None)
            stream.stop()
            if end is not None:
                end.wake_with(None)
            if forget is not None:
                forget()


async def _single(line: bytes) -> AsyncIterator[bytes]:
    yield line


class _Encoder:
    """Turns store events into wire lines; Tables carry column definitions only in the first."""

    def __init__(self, target: Target, clock: Clock, table: bool, table_version: str, policy: str) -> None:
        self.res = target.res
        self.clock = clock
        self.table = table
        self.table_version = table_version
        self.policy = policy
        self.headers_sent = False

    def _line(self, kind: str, obj: Any) -> bytes:
        return dumps({"type": kind, "object": obj}) + b"\n"

    def _render(self, obj: JSON) -> JSON:
        if not self.table:
            return with_type(self.res, obj)
        table = build_table(
            self.res,
            [obj],
            self.clock.now(),
            policy=self.policy,
            table_version=self.table_version,
            resource_version=str((obj.get("metadata") or {}).get("resourceVersion", "")),
            headers=not self.headers_sent,
        )
        self.headers_sent = True
        return table

    def chunks(self, events: list[WatchEvent]) -> list[bytes]:
        """Speeds up watch streams by writing the lines of `events` as one chunk (off with
        `KUBETAINT_REFERENCE=1`: one chunk per event): one TLS record and one system call for the
        events a drain finds. The bytes on the wire are the same."""
        lines = [self.event(event) for event in events]
        return lines if reference_mode() else [b"".join(lines)]

    def event(self, event: WatchEvent) -> bytes:
        if event.type == "BOOKMARK":
            return self.bookmark(event.resource_version)
        return self._line(event.type, self._render(event.object))

    def bookmark(self, resource_version: int, *, initial_events_end: bool = False) -> bytes:
        meta: JSON = {"resourceVersion": str(resource_version)}
        if initial_events_end:  # metav1.InitialEventsAnnotationKey
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        if self.table:
            obj: JSON = {
                "kind": "Table",
                "apiVersion": f"meta.k8s.io/{self.table_version}",
                "metadata": meta,
                "rows": [],
            }
        else:
            obj = {"kind": self.res.kind, "apiVersion": self.res.api_version, "metadata": meta}
        return self._line("BOOKMARK", obj)

    def error(self, err: errors.StatusError) -> bytes:
        return self._line("ERROR", err.to_status())
