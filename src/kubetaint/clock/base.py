"""The clock protocol every component receives through its constructor, plus time formatting.

Times are float seconds since the Unix epoch. Kubernetes renders them as RFC 3339 (`Time`) or
RFC 3339 with microseconds (`MicroTime`, used by Leases and Events).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

from kubetaint.speed.memo import Memo

Callback = Callable[[], None]


class Handle(Protocol):
    """A scheduled callback that can be cancelled before it runs."""

    @property
    def when(self) -> float: ...

    @property
    def cancelled(self) -> bool: ...

    def cancel(self) -> None: ...


class Clock(Protocol):
    """Source of time and of timers. Callbacks at equal times run by (priority, scheduling order)."""

    def now(self) -> float: ...

    def call_at(self, when: float, callback: Callback, *, priority: int = 0) -> Handle: ...

    def call_later(self, delay: float, callback: Callback, *, priority: int = 0) -> Handle: ...

    def call_soon(self, callback: Callback, *, priority: int = 0) -> Handle: ...


def format_time(seconds: float) -> str:
    """metav1.Time: RFC 3339 in UTC with whole seconds (`2026-01-01T00:00:00Z`)."""
    return _format_second(int(seconds // 1))


def _format_second(whole: int) -> str:
    # remembered: every object created in one instant of a virtual clock has the same timestamp
    found = _SECONDS.get(whole)
    if found is None:
        found = _SECONDS.put(whole, datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    return found


_SECONDS: Memo[int, str] = Memo("clock.base.format_time", limit=256)


def format_micro_time(seconds: float) -> str:
    """metav1.MicroTime: RFC 3339 in UTC with microseconds (`2026-01-01T00:00:00.000000Z`)."""
    micros = round(seconds * 1_000_000)
    stamp = datetime.fromtimestamp(micros // 1_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{micros % 1_000_000:06d}Z"


def parse_time(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 timestamp (Time or MicroTime)."""
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    return datetime.fromisoformat(value).timestamp()
