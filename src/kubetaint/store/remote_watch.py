"""Watching over HTTP: a line-delimited JSON watch stream (`RemoteWatch`, the Store protocol's
Watch) and a `Reflector` that keeps one resource's objects current from list+watch — resumed
from the last resourceVersion after a broken connection, re-listed on 410 Expired — and turns
every change into a `WatchEvent` (with the previous object) for the store's subscribers
(mirrors client-go tools/cache reflector.go ListAndWatch / watchHandler).

Retries wait on a `threading.Event` (a transport back-off, not cluster time: the injected clock
may be virtual and is driven from another thread).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from kubetaint.api.errors import StatusError
from kubetaint.store.interface import JSON, ListResult, WatchEvent, object_key

log = logging.getLogger(__name__)

#: Back-off between reconnects of a broken watch (client-go's is 800 ms doubling to 30 s).
RETRY_SECONDS = 0.5
MAX_RETRY_SECONDS = 5.0
#: timeoutSeconds asked of the server per watch request (client-go picks 5-10 minutes).
WATCH_TIMEOUT_SECONDS = 300

ClientFactory = Callable[[], httpx.Client]
Lister = Callable[[], ListResult]


class ExpiredError(Exception):
    """The server no longer has the history to resume from (410 Gone): re-list."""


def stream(
    client: httpx.Client, path: str, params: dict[str, str], on_open: Callable[[Any], None]
) -> Iterator[JSON]:
    """The events of one watch request, until the server ends it; raises ExpiredError on 410."""
    with client.stream("GET", path, params=params) as response:
        on_open(response)
        if response.status_code == 410:
            raise ExpiredError()
        if response.status_code >= 400:
            body = json.loads(response.read() or b"{}")
            raise StatusError.from_status(body if isinstance(body, dict) else {"code": response.status_code})
        for line in response.iter_lines():
            if not line.strip():
                continue
            event = json.loads(line)
            if event.get("type") == "ERROR":
                status = event.get("object") or {}
                if int(status.get("code") or 0) == 410:
                    raise ExpiredError()
                raise StatusError.from_status(status)
            yield event


class _Stream:
    """A stoppable loop over watch requests resumed from the last resourceVersion seen."""

    def __init__(self, make_client: ClientFactory, path: str, resource_version: str) -> None:
        self._make_client = make_client
        self.path = path
        self.resource_version = resource_version
        self._stopped = threading.Event()
        self._response: Any = None

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def stop(self) -> None:
        self._stopped.set()
        response = self._response
        if response is not None:
            try:
                response.close()
            except Exception:  # closing a half-read stream from another thread
                log.debug("closing a watch response failed", exc_info=True)

    def _set_response(self, response: Any) -> None:
        self._response = response

    def events(self) -> Iterator[JSON]:
        """Every event from `resource_version` on, across reconnects; ExpiredError ends it."""
        delay = RETRY_SECONDS
        with self._make_client() as client:
            while not self.stopped:
                params = {
                    "watch": "true",
                    "allowWatchBookmarks": "true",
                    "resourceVersion": self.resource_version,
                    "timeoutSeconds": str(WATCH_TIMEOUT_SECONDS),
                }
                try:
                    for event in stream(client, self.path, params, self._set_response):
                        delay = RETRY_SECONDS
                        rv = ((event.get("object") or {}).get("metadata") or {}).get("resourceVersion")
                        if rv:
                            self.resource_version = str(rv)
                        yield event
                except (httpx.HTTPError, json.JSONDecodeError, StatusError) as err:
                    if self.stopped:
                        return
                    log.debug("watch %s broke (%s); resuming from %s", self.path, err, self.resource_version)
                    self._stopped.wait(delay)
                    delay = min(delay * 2, MAX_RETRY_SECONDS)


class RemoteWatch:
    """The Watch protocol over one HTTP watch (resumed across broken connections)."""

    def __init__(self, make_client: ClientFactory, path: str, resource: str, resource_version: str) -> None:
        self._resource = resource
        self._stream = _Stream(make_client, path, resource_version)
        self._queue: queue.Queue[WatchEvent] = queue.Queue()
        self._ended = threading.Event()
        threading.Thread(target=self._run, daemon=True, name=f"watch {path}").start()

    def _run(self) -> None:
        try:
            for raw in self._stream.events():
                self._queue.put(to_event(self._resource, raw, None))
        except ExpiredError:
            log.debug("watch of %s expired", self._resource)
        finally:
            self._ended.set()

    def drain(self) -> list[WatchEvent]:
        events = []
        while True:
            try:
                events.append(self._queue.get_nowait())
            except queue.Empty:
                return events

    def wait(self, timeout: float) -> list[WatchEvent]:
        try:
            first = self._queue.get(timeout=timeout)
        except queue.Empty:
            return []
        return [first, *self.drain()]

    def stop(self) -> None:
        self._stream.stop()

    def push_to(self, waker: Callable[[], None] | None) -> bool:
        return False  # events arrive on the HTTP stream's thread: the reader polls wait()

    @property
    def progress(self) -> int:
        return 0  # (the server filtered its stream: its own bookmarks carry its progress)

    @property
    def stopped(self) -> bool:
        return self._stream.stopped or self._ended.is_set()


def to_event(resource: str, raw: JSON, old: JSON | None) -> WatchEvent:
    obj = raw.get("object") or {}
    rv = int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    return WatchEvent(raw["type"], resource, obj, rv, old)


class Reflector:
    """List then watch one resource, keeping `objects` current and handing every change to
    `deliver` in order (one thread per resource)."""

    def __init__(
        self,
        resource: str,
        path: str,
        make_client: ClientFactory,
        lister: Lister,
        deliver: Callable[[WatchEvent], None],
    ) -> None:
        self.resource = resource
        self._path = path
        self._make_client = make_client
        self._lister = lister
        self._deliver = deliver
        self.objects: dict[tuple[str, str], JSON] = {}
        self._stream: _Stream | None = None
        self._stopped = threading.Event()
        self.relists = 0

    def start(self, listed: ListResult) -> None:
        self.objects = {object_key(obj): obj for obj in listed.items}
        self._stream = _Stream(self._make_client, self._path, listed.resource_version)
        threading.Thread(target=self._run, daemon=True, name=f"reflector {self.resource}").start()

    def stop(self) -> None:
        self._stopped.set()
        if self._stream is not None:
            self._stream.stop()

    def _run(self) -> None:
        while not self._stopped.is_set():
            assert self._stream is not None
            try:
                for raw in self._stream.events():
                    self._handle(raw)
                return
            except ExpiredError:
                if self._stopped.is_set():
                    return
                self._relist()

    def _handle(self, raw: JSON) -> None:
        if raw.get("type") == "BOOKMARK":
            return
        obj = raw.get("object") or {}
        key = object_key(obj)
        old = self.objects.get(key)
        if raw.get("type") == "DELETED":
            self.objects.pop(key, None)
        else:
            self.objects[key] = obj
        self._deliver(to_event(self.resource, raw, old))

    def _relist(self) -> None:
        """Replace the objects by a fresh list, delivering the differences (client-go's Replace)."""
        self.relists += 1
        try:
            listed = self._lister()
        except (httpx.HTTPError, StatusError) as err:
            log.debug("re-list of %s failed: %s", self.resource, err)
            self._stopped.wait(RETRY_SECONDS)
            return
        rv = int(listed.resource_version)
        fresh = {object_key(obj): obj for obj in listed.items}
        for key, old in list(self.objects.items()):
            if key not in fresh:
                self.objects.pop(key)
                self._deliver(WatchEvent("DELETED", self.resource, old, rv, old))
        for key, obj in fresh.items():
            previous = self.objects.get(key)
            if previous is None or _rv(previous) != _rv(obj):
                self.objects[key] = obj
                if previous is None:
                    self._deliver(WatchEvent("ADDED", self.resource, obj, rv, None))
                else:
                    self._deliver(WatchEvent("MODIFIED", self.resource, obj, rv, previous))
        assert self._stream is not None
        self._stream.resource_version = listed.resource_version


def _rv(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")
