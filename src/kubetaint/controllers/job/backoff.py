"""The Job controller's backoff record, as pkg/controller/job/backoff_utils.go: failures since
the last success and when the last one finished."""

from __future__ import annotations


class Backoff:
    """backoffRecord: failures since the last success and when the last one finished."""

    __slots__ = ("failures", "last_failure")

    def __init__(self) -> None:
        self.failures = 0
        self.last_failure: float | None = None
