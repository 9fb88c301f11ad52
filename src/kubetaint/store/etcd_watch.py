"""One etcd v3 watch over the JSON gateway's streaming `POST /v3/watch`, read by a daemon thread
(mirrors apiserver pkg/storage/etcd3/watcher.go: prev_kv on, compaction ends the watch).

etcd3gw's own Watcher drops the compaction and cancel notices that the store needs, so this
reads the gateway's newline-delimited JSON stream directly, over etcd3gw's HTTP library.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import requests

RawEvents = Callable[[list[dict[str, Any]]], None]
Ended = Callable[[str], None]


class WatchStreamError(Exception):
    """The watch could not be created."""


class EtcdWatchStream:
    """Streams raw etcd events for keys in [key, range_end) from `start_revision` to `on_events`
    (in the stream's thread), then calls `on_end(reason)` once unless stopped by `stop()`."""

    def __init__(
        self,
        base_url: str,
        key: str,
        range_end: str,
        start_revision: int,
        *,
        on_events: RawEvents,
        on_end: Ended,
        connect_timeout: float = 5.0,
        name: str = "etcd-watch",
    ) -> None:
        self._on_events = on_events
        self._on_end = on_end
        self._stopped = False
        self._buffer = b""
        self._session = requests.Session()
        create: dict[str, Any] = {
            "key": key,
            "range_end": range_end,
            "start_revision": str(start_revision),
            "prev_kv": True,
            "progress_notify": True,
        }
        try:
            self._response = self._session.post(
                f"{base_url}/v3/watch",
                json={"create_request": create},
                stream=True,
                timeout=(connect_timeout, None),
            )
            self._chunks = self._response.iter_content(chunk_size=None)
            first = self._next_message()
        except (requests.RequestException, ValueError, StopIteration) as err:
            self._close()
            raise WatchStreamError(f"cannot watch etcd: {err}") from None
        result = first.get("result") or {}
        if not result.get("created") or result.get("canceled"):
            self._close()
            raise WatchStreamError(f"etcd refused the watch: {first}")
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _next_message(self) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            self._buffer += next(self._chunks)
        line, self._buffer = self._buffer.split(b"\n", 1)
        if not line.strip():
            return self._next_message()
        message: dict[str, Any] = json.loads(line)
        return message

    def _messages(self) -> Iterator[dict[str, Any]]:
        while True:
            try:
                yield self._next_message()
            except StopIteration:
                return

    def _run(self) -> None:
        reason = "etcd closed the watch"
        try:
            for message in self._messages():
                if self._stopped:
                    return
                result = message.get("result")
                if result is None:
                    reason = f"etcd watch error: {message.get('error', message)}"
                    break
                compacted = int(result.get("compact_revision", 0))
                if compacted:
                    reason = f"compacted at revision {compacted}"
                    break
                if result.get("canceled"):
                    reason = f"etcd canceled the watch: {result.get('cancel_reason', '')}"
                    break
                events = result.get("events")
                if events:
                    self._on_events(events)
        except Exception as err:  # the connection dropped (or stop() shut it down)
            reason = f"etcd watch connection lost: {err}"
        finally:
            self._close()
            if not self._stopped:
                self._stopped = True
                self._on_end(reason)

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def stop(self) -> None:
        """End the stream (idempotent; safe from the stream's own callbacks)."""
        if self._stopped:
            return
        self._stopped = True
        self._shutdown_socket()
        if threading.current_thread() is not self._thread:
            self._thread.join(5)

    def _shutdown_socket(self) -> None:
        # Reading threads block in recv(); shutting the socket down wakes them with EOF.
        try:
            raw: Any = self._response.raw
            fileno = raw._fp.fileno()
            dup = socket.fromfd(fileno, socket.AF_INET, socket.SOCK_STREAM)
            try:
                dup.shutdown(socket.SHUT_RDWR)
            finally:
                dup.close()
        except (AttributeError, OSError, ValueError):
            pass

    def _close(self) -> None:
        with contextlib.suppress(AttributeError, OSError):
            self._response.close()
        self._session.close()


def compact_revision_for(base_url: str, key: str, range_end: str, start_revision: int) -> int:
    """etcd's compaction revision if `start_revision` has been compacted, else 0 (asks etcd by
    opening a watch there: etcd answers a compacted start with the compaction revision)."""
    result: list[int] = []
    done = threading.Event()

    def on_end(reason: str) -> None:
        if reason.startswith("compacted at revision "):
            result.append(int(reason.rsplit(" ", 1)[1]))
        done.set()

    def on_events(events: list[dict[str, Any]]) -> None:
        done.set()

    stream = EtcdWatchStream(base_url, key, range_end, start_revision, on_events=on_events, on_end=on_end)
    done.wait(5)
    stream.stop()
    return result[0] if result else 0
