"""The only sanctioned reads of the machine's wall clock outside a Clock, for things that are not
cluster time: progress displays and the validity window of a generated TLS certificate.

Components never use these: cluster time always comes from the injected Clock.
"""

from __future__ import annotations

import datetime
import time


def wall_monotonic() -> float:
    """Seconds on a monotonic clock (durations for progress displays)."""
    return time.monotonic()


def wall_now() -> datetime.datetime:
    """The current UTC time (certificate validity windows)."""
    return datetime.datetime.now(datetime.UTC)
