"""How the server holds connections, so that slow or idle clients cannot take it over:

- a request's headers must arrive within `Limits.read_header_timeout` (kube-apiserver's
  http.Server ReadHeaderTimeout, 32 s) and its body within `Limits.request_timeout` after them
  (the 60 s --request-timeout); past either, the connection is closed;
- an idle keep-alive connection is closed after `Limits.idle_timeout` (http.Server IdleTimeout, 90 s);
- at most `Limits.max_connections` connections are open at once (by default the open-file limit
  less a reserve, so that accepting never runs out of file descriptors): one more is answered
  `429 TooManyRequests` and closed, and the server logs one line about it (at most every 10 s);
- should accepting run out of file descriptors anyway (a burst of connections is accepted
  before any of them is counted), `ListeningSocket` (the listening socket of `server` and
  `live`) pauses accepting for a second and the loop logs one line (at most every 10 s) instead
  of a traceback per queued connection, and serving resumes once descriptors are free.

`connection_options(limits)` is what `server.serving_options` (hence every uvicorn config of
`server` and `live`) adds; the protocol installs the accept-error handler on its loop at the
first connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import resource
import socket
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from kubetaint.apiserver.limits import Limits, too_many_requests
from kubetaint.apiserver.wire import dumps
from kubetaint.clock.wall import wall_monotonic

log = logging.getLogger(__name__)

#: File descriptors kept out of the connection cap: the store, its journal, etcd clients, logs.
FD_RESERVE = 128
_LOG_EVERY_SECONDS = 10.0
_OUT_OF_RESOURCES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


class _RateLimitedLog:
    """One warning per `every` seconds; the others are counted into the next one."""

    def __init__(self, every: float = _LOG_EVERY_SECONDS) -> None:
        self.every = every
        self.last = -every
        self.suppressed = 0

    def warning(self, message: str, *args: object) -> None:
        now = wall_monotonic()
        if now - self.last < self.every:
            self.suppressed += 1
            return
        more = f" ({self.suppressed} more since the last report)" if self.suppressed else ""
        log.warning(message + more, *args)
        self.last, self.suppressed = now, 0


_CAP_LOG = _RateLimitedLog()
_ACCEPT_LOG = _RateLimitedLog()


def default_max_connections() -> int:
    """The open-file limit less FD_RESERVE (at least 16)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 100_000
    return max(int(soft) - FD_RESERVE, 16)


def raise_open_file_limit() -> None:
    """Raise the soft open-file limit to the hard one, as every Go program (kube-apiserver
    included) does at start."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _refusal() -> bytes:
    err = too_many_requests()
    body = dumps(err.to_status())
    head = (
        "HTTP/1.1 429 Too Many Requests\r\n"
        "Content-Type: application/json\r\n"
        f"Retry-After: {err.retry_after_seconds}\r\n"
        "Connection: close\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def bounded_protocol(limits: Limits, base: type[H11Protocol] = H11Protocol) -> type[H11Protocol]:
    """uvicorn's h11 protocol (`base`) with the read deadlines and the connection cap of `limits`."""
    cap = limits.max_connections or default_max_connections()

    class BoundedH11Protocol(base):  # type: ignore[valid-type,misc]
        _deadline: asyncio.TimerHandle | None = None
        _phase = ""

        def connection_made(self, transport: asyncio.Transport) -> None:
            over = len(self.connections) >= cap
            super().connection_made(transport)
            if self.loop.get_exception_handler() is None:
                self.loop.set_exception_handler(_loop_exception_handler)
            if over:
                _CAP_LOG.warning(
                    "connection limit of %d reached: new connections get 429 until some close "
                    "(raise the open-file limit, ulimit -n, for more)",
                    cap,
                )
                self._phase = "refused"
                transport.write(_refusal())
                transport.close()
                return
            self._arm("headers", limits.read_header_timeout)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._phase == "refused":
                return
            super().data_received(data)
            self._track()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._track()

        def _track(self) -> None:
            """Deadlines by what is being read: headers (until the request line and headers are
            in), body (until the request is complete), nothing while the handler runs or the
            connection idles (uvicorn's keep-alive timer)."""
            state = self.conn.their_state
            if state is h11.IDLE:
                if not self._phase and self.timeout_keep_alive_task is None and self.conn.trailing_data[0]:
                    self._arm("headers", limits.read_header_timeout)
            elif state is h11.SEND_BODY:
                if self._phase != "body":
                    self._arm("body", limits.request_timeout)
            else:
                self._disarm()

        def _arm(self, phase: str, seconds: float) -> None:
            self._disarm()
            self._phase = phase
            self._deadline = self.loop.call_later(seconds, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline, self._phase = None, ""

        def _expire(self) -> None:
            self._deadline, self._phase = None, ""
            if not self.transport.is_closing():
                self.transport.close()

    return BoundedH11Protocol


def connection_options(limits: Limits, base: type[H11Protocol] = H11Protocol) -> dict[str, Any]:
    """The uvicorn.Config keywords that apply `limits` to connections served by `base`; the
    soft open-file limit is raised to the hard one first."""
    raise_open_file_limit()
    return {"http": bounded_protocol(limits, base), "timeout_keep_alive": limits.idle_timeout}


class ListeningSocket(socket.socket):
    """A listening socket whose accept() running out of file descriptors stops asyncio's accept
    burst: asyncio logs the error, pauses accepting for a second and then, unless told the queue
    is empty, tries again for every queued connection of the same burst (a traceback each). After
    one EMFILE this socket reports "nothing to accept" for the rest of the burst, and the first
    one installs `_loop_exception_handler` (one line) on the serving loop."""

    _quiet_until = 0.0

    def accept(self) -> tuple[socket.socket, Any]:
        if wall_monotonic() < self._quiet_until:
            raise BlockingIOError(errno.EAGAIN, "accepting pauses after running out of file descriptors")
        try:
            return super().accept()
        except OSError as exc:
            if exc.errno in _OUT_OF_RESOURCES:
                self._quiet_until = wall_monotonic() + 0.5
                with contextlib.suppress(RuntimeError):
                    loop = asyncio.get_running_loop()
                    if loop.get_exception_handler() is None:
                        loop.set_exception_handler(_loop_exception_handler)
            raise


def _loop_exception_handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    exc = context.get("exception")
    if isinstance(exc, OSError) and exc.errno in _OUT_OF_RESOURCES and "accept" in context.get("message", ""):
        _ACCEPT_LOG.warning("cannot accept connections: %s (the open-file limit is reached)", exc.strerror)
        return
    loop.default_exception_handler(context)
