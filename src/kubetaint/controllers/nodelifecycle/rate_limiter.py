"""Token-bucket rate limiters on an injected clock, as the node lifecycle controller uses them.

Mirrors client-go util/flowcontrol (NewTokenBucketRateLimiter, NewFakeNeverRateLimiter) over
golang.org/x/time/rate's Limiter.AllowN: tokens accrue continuously at `qps` (a float32, as the
controller's flags are), capped at `burst`; the bucket starts full; a refused request changes
nothing. Time is integer nanoseconds, so results do not depend on float rounding.
"""

from __future__ import annotations

import math
import struct

NANOS = 1_000_000_000


def float32(value: float) -> float:
    """The float32 nearest `value` (the controller's QPS flags are float32)."""
    return float(struct.unpack("f", struct.pack("f", value))[0])


def to_nanos(seconds: float) -> int:
    """Clock seconds → integer nanoseconds, rounded to the microsecond (virtual clock times are
    exact to well under a microsecond, so this removes float noise)."""
    return round(seconds * 1_000_000) * 1000


def _seconds(nanos: int) -> float:
    """time.Duration.Seconds()."""
    whole, frac = divmod(nanos, NANOS)
    return whole + frac / 1e9


class TokenBucketRateLimiter:
    """flowcontrol.NewTokenBucketRateLimiter(qps, burst)."""

    def __init__(self, qps: float, burst: int) -> None:
        self._qps = float32(qps)
        self._burst = burst
        self._tokens = 0.0
        self._last: int | None = None  # Go's zero time: the first request sees a full bucket

    def qps(self) -> float:
        return self._qps

    def _advance(self, now: int) -> float:
        if self._last is None:
            return float(self._burst)
        last = min(self._last, now)
        tokens = self._tokens + _seconds(now - last) * self._qps
        return min(tokens, float(self._burst))

    def would_accept(self, now: int) -> bool:
        """Whether try_accept at `now` would succeed (without taking a token)."""
        tokens = self._advance(now) - 1
        if tokens >= 0:
            return self._burst >= 1
        wait = int(NANOS * (-tokens / self._qps))  # durationFromTokens truncates
        return self._burst >= 1 and wait <= 0

    def try_accept(self, now: int) -> bool:
        if not self.would_accept(now):
            return False
        self._tokens = self._advance(now) - 1
        self._last = now
        return True

    def next_accept(self, now: int) -> int:
        """A lower bound (within a microsecond) of the first time >= now that would be accepted."""
        missing = 1 - self._advance(now)
        if missing <= 0:
            return now
        return now + max(0, math.floor(missing / self._qps * NANOS) - 1000)


class NeverRateLimiter:
    """flowcontrol.NewFakeNeverRateLimiter: refuses every request; QPS 0."""

    def qps(self) -> float:
        return 0.0

    def would_accept(self, now: int) -> bool:
        return False

    def try_accept(self, now: int) -> bool:
        return False

    def next_accept(self, now: int) -> int | None:
        return None


RateLimiter = TokenBucketRateLimiter | NeverRateLimiter
