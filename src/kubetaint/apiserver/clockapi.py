"""The cluster clock over HTTP (a kubetaint extension, not a Kubernetes API):
`GET /kubetaint/v1/clock` reads it and `POST /kubetaint/v1/clock/advance` with `{"seconds": N}`
moves a virtual clock forward, running every component's callbacks due on the way.

`LoopVirtualClock` is the virtual clock of a live server: callbacks due now run soon on the
asyncio loop (so requests are served and pods scheduled without advancing time), later ones only
when time is advanced. They run in time slices (`clock.slices`): requests are served between
them, and callbacks keep their virtual order.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from kubetaint.api import errors
from kubetaint.apiserver.clock_path import CLOCK_PATH
from kubetaint.apiserver.wire import json_response, status_response
from kubetaint.clock.base import Callback, Clock, format_micro_time
from kubetaint.clock.slices import SliceTimer
from kubetaint.clock.virtual import VirtualClock, VirtualHandle

API_VERSION = "kubetaint.dev/v1alpha1"
#: The largest single advance (a year): enough for any demo, bounded so a typo cannot hang the server.
MAX_ADVANCE_SECONDS = 366 * 24 * 3600.0


class LoopVirtualClock(VirtualClock):
    """A VirtualClock whose callbacks due now run on the asyncio loop as soon as it is free."""

    def __init__(self, start: float, loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(start)
        self._loop = loop
        self._pump_pending = False
        self._slice = SliceTimer()
        self._advancing = asyncio.Lock()
        #: Told the time each advance moves to, before it runs (`kubetaint up` records it).
        self.on_advance: Callable[[float], None] | None = None

    def slice_over(self) -> bool:
        """Whether the callbacks run since the loop last took over have used their slice."""
        return self._slice.over()

    def call_at(self, when: float, callback: Callback, *, priority: int = 0) -> VirtualHandle:
        handle = super().call_at(when, callback, priority=priority)
        if handle.when <= self.now():
            self._schedule_pump()
        return handle

    def _schedule_pump(self) -> None:
        if self._pump_pending:
            return
        loop = self._loop
        if loop is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # not serving yet: `run_pending()` runs them when the server starts
        self._pump_pending = True
        loop.call_soon(self._pump)

    async def advance_in_slices(self, seconds: float) -> None:
        """`advance(seconds)` in time slices, the loop serving others between them (one advance
        at a time: a second one starts where the first ended)."""
        async with self._advancing:
            target = self.now() + seconds
            if self.on_advance is not None:
                self.on_advance(target)
            while True:
                self._slice.begin()
                while not self._slice.over():
                    due = self.next_time()
                    if due is None or due > target:
                        self.run_until(target)
                        return
                    self.step()
                await asyncio.sleep(0)

    def _pump(self) -> None:
        """Run the callbacks due now for one slice; the rest after the loop has served others."""
        self._pump_pending = False
        self._slice.begin()
        while True:
            due = self.next_time()
            if due is None or due > self.now():
                return
            if self._slice.over():
                self._schedule_pump()
                return
            self.step()


def clock_document(clock: Clock) -> dict[str, Any]:
    """What GET /kubetaint/v1/clock answers."""
    virtual = isinstance(clock, VirtualClock)
    doc: dict[str, Any] = {
        "kind": "Clock",
        "apiVersion": API_VERSION,
        "type": "virtual" if virtual else "real",
        "now": format_micro_time(clock.now()),
    }
    if isinstance(clock, VirtualClock):
        doc["elapsedSeconds"] = round(clock.elapsed(), 6)
    return doc


def advance_seconds(raw: bytes) -> float:
    """The `seconds` of an advance request body; 400 with a reason when it is not usable."""
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        raise errors.bad_request('the body must be a JSON object such as {"seconds": 3600}') from None
    seconds = body.get("seconds") if isinstance(body, dict) else None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds):
        raise errors.bad_request('seconds: Required value: a number of seconds such as {"seconds": 3600}')
    if seconds < 0:
        raise errors.bad_request(f"seconds: Invalid value: {seconds}: time cannot go backwards")
    if seconds > MAX_ADVANCE_SECONDS:
        raise errors.bad_request(
            f"seconds: Invalid value: {seconds}: must be at most {MAX_ADVANCE_SECONDS:.0f}"
        )
    return float(seconds)


def clock_routes(clock: Clock) -> list[BaseRoute]:
    """The two clock routes for `clock`."""

    async def read(request: Request) -> Response:
        return json_response(clock_document(clock))

    async def advance(request: Request) -> Response:
        try:
            seconds = advance_seconds(await request.body())
            if not isinstance(clock, VirtualClock):
                raise errors.bad_request(
                    "the server runs on the real clock: start it with `kubetaint up --clock virtual` "
                    "to advance time"
                )
        except errors.StatusError as err:
            return status_response(err)
        if isinstance(clock, LoopVirtualClock):
            await clock.advance_in_slices(seconds)
        else:
            clock.advance(seconds)
        return json_response(clock_document(clock))

    return [
        Route(CLOCK_PATH, read, methods=["GET"]),
        Route(f"{CLOCK_PATH}/advance", advance, methods=["POST"]),
    ]
