"""The HTTP front of a live server whose store is behind a network (etcd): the connections are
served on a thread of their own, so a store call that waits for etcd never keeps a client from
being answered.

The cluster keeps its single event loop (`live`'s module docstring): every request except the
health probes is handed to that loop and runs there exactly as before. The front answers
itself:
- the health probes (`/healthz`, `/livez`, `/readyz` and their checks), from state kept up to
  date in the background, so they answer at once however busy the cluster loop is;
- a request the cluster has not started answering within its deadline: kube-apiserver's
  `504 Timeout` Status (`Timeout: request did not complete within requested timeout - context
  deadline exceeded`). The deadline is the request's `?timeout=` (a Go duration) when shorter
  than the server's 60 s (kube-apiserver's --request-timeout); a bad one is a 400, as upstream's
  WithRequestDeadline answers. A request timed out before it started never runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from kubetaint.api import errors
from kubetaint.apiserver import query
from kubetaint.apiserver.wire import status_response
from kubetaint.core.durations import DurationError, parse_go_duration

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: kube-apiserver's --request-timeout default.
REQUEST_TIMEOUT = 60.0
HEALTH_ENDPOINTS = ("/healthz", "/livez", "/readyz")


def timed_out() -> errors.StatusError:
    """apierrors.NewTimeoutError as the timeout filter makes it."""
    return errors.StatusError(
        504,
        "Timeout",
        "Timeout: request did not complete within requested timeout - context deadline exceeded",
    )


def request_deadline(scope: Scope, maximum: float = REQUEST_TIMEOUT) -> float:
    """Seconds the request may wait for its answer to start (WithRequestDeadline): its `timeout`
    parameter when positive and shorter than `maximum`, else `maximum`; 400 when the parameter
    is not a Go duration. A watch waits `maximum` for its stream to start."""
    parsed = query.attach(scope)
    value = parsed.get("timeout") or ""
    if not value or parsed.flag("watch"):
        return maximum  # a watch is long-running: its `timeout` is not looked at (only its start waits)
    try:
        seconds = parse_go_duration(value)
    except DurationError as err:
        raise errors.bad_request(f"invalid timeout specified in the request URL - {err}") from None
    return seconds if 0 < seconds < maximum else maximum


def is_health_path(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in HEALTH_ENDPOINTS)


class _Exchange:
    """One request's messages between the cluster loop (the app) and the front loop (the
    connection). Once the front has answered by itself, what the app sends is dropped."""

    def __init__(self, front: asyncio.AbstractEventLoop, receive: Receive, send: Send) -> None:
        self._front = front
        self._receive = receive
        self._send = send
        self.started = asyncio.Event()
        self.answered_by_front = False

    async def receive(self) -> Message:  # on the cluster loop
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._take(), self._front))

    async def _take(self) -> Message:  # on the front loop
        return await self._receive()

    async def send(self, message: Message) -> None:  # on the cluster loop
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._deliver(message), self._front))

    async def _deliver(self, message: Message) -> None:  # on the front loop
        if self.answered_by_front:
            return
        if message.get("type") == "http.response.start":
            self.started.set()
        await self._send(message)


class Front:
    """The ASGI app the front serves: health probes here, everything else on `cluster_loop`."""

    def __init__(
        self, app: ASGIApp, cluster_loop: asyncio.AbstractEventLoop, *, maximum: float = REQUEST_TIMEOUT
    ):
        self.app = app
        self.cluster_loop = cluster_loop
        self.maximum = maximum

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or is_health_path(scope["path"]):
            await self.app(scope, receive, send)  # reads only state kept up to date elsewhere
            return
        try:
            deadline = request_deadline(scope, self.maximum)
        except errors.StatusError as err:
            await status_response(err)(scope, receive, send)
            return
        exchange = _Exchange(asyncio.get_running_loop(), receive, send)
        running = asyncio.run_coroutine_threadsafe(
            _run(self.app, scope, exchange.receive, exchange.send), self.cluster_loop
        )
        finished = asyncio.wrap_future(running)
        started = asyncio.ensure_future(_started(exchange))
        try:
            await asyncio.wait((finished, started), timeout=deadline, return_when=asyncio.FIRST_COMPLETED)
        finally:
            started.cancel()
        if not finished.done() and not exchange.started.is_set():
            exchange.answered_by_front = True
            running.cancel()
            finished.add_done_callback(_consume)
            await status_response(timed_out())(scope, receive, send)
            return
        await finished


async def _started(exchange: _Exchange) -> None:
    await exchange.started.wait()


async def _run(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    await app(scope, receive, send)


def _consume(future: asyncio.Future[None]) -> None:
    """Retrieve the outcome of a request the front answered (nothing is left unobserved)."""
    with contextlib.suppress(asyncio.CancelledError, Exception):
        future.result()
