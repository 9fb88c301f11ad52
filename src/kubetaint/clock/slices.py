"""Time slices: how a component that works through a queue learns that it should let the event
loop serve others before going on.

A live server's clock (`RealClock`, the server's virtual clock) runs every callback on the asyncio
loop that also answers HTTP requests. A callback that drains a long queue (a scheduler with
thousands of pending pods, a controller's work queue) checks `slice_over()` between items and,
once its slice is used, schedules the rest with `call_soon` and returns. A simulation's
`VirtualClock` has no slices: nothing else waits for it, and its callbacks keep their order.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from kubetaint.clock.wall import wall_monotonic

#: How long one callback may keep the loop before it yields (seconds).
SLICE_SECONDS = 0.05


@runtime_checkable
class Sliced(Protocol):
    """A clock whose callbacks share an event loop with other work."""

    def slice_over(self) -> bool:
        """Whether the running callback has used its slice (it should continue in a later one)."""
        ...


class SliceTimer:
    """The start of the running callback's slice, for clocks that run callbacks on a loop."""

    __slots__ = ("started",)

    def __init__(self) -> None:
        self.started = wall_monotonic()

    def begin(self) -> None:
        self.started = wall_monotonic()

    def over(self) -> bool:
        return wall_monotonic() - self.started > SLICE_SECONDS


def slices_of(clock: object) -> Sliced | None:
    """The clock as a `Sliced` one, or None when its callbacks never need to yield."""
    return clock if isinstance(clock, Sliced) else None
