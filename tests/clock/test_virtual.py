"""The virtual clock runs callbacks in (time, priority, order) and only moves when asked."""

from datetime import UTC, datetime

import pytest

from kubetaint.clock import VirtualClock, format_micro_time, format_time, parse_time


def test_equal_times_run_by_priority_then_fifo() -> None:
    clock = VirtualClock(start=0)
    seen: list[str] = []
    clock.call_at(5, lambda: seen.append("b"), priority=1)
    clock.call_at(5, lambda: seen.append("a1"))
    clock.call_at(5, lambda: seen.append("a2"))
    clock.call_at(1, lambda: seen.append("first"))
    clock.run_until(10)
    assert seen == ["first", "a1", "a2", "b"]
    assert clock.now() == 10


def test_cancelled_timer_never_runs_and_advance_stops_at_target() -> None:
    clock = VirtualClock(start=100)
    seen: list[float] = []
    handle = clock.call_later(30, lambda: seen.append(clock.now()))
    clock.call_later(60, lambda: seen.append(clock.now()))
    clock.advance(29)
    handle.cancel()
    clock.advance(100)
    assert seen == [160]
    assert clock.elapsed() == 129


def test_callbacks_scheduled_for_now_run_in_the_same_pass() -> None:
    clock = VirtualClock(start=0)
    seen: list[str] = []
    clock.call_soon(lambda: clock.call_soon(lambda: seen.append("nested")))
    clock.run_pending()
    assert seen == ["nested"]


def test_time_formats_round_trip() -> None:
    assert format_time(1767225600.7) == "2026-01-01T00:00:00Z"
    assert format_micro_time(1767225600.25) == "2026-01-01T00:00:00.250000Z"
    assert parse_time("2026-01-01T00:00:00Z") == 1767225600.0
    assert parse_time(format_micro_time(1767225600.25)) == 1767225600.25


@pytest.mark.parametrize(
    "seconds",
    [
        pytest.param([0.0, 0.5, 1.0, 0.2], id="the same second twice after another second"),
        pytest.param([-0.5, -1.0, -0.5, 1767225600.0], id="seconds before the epoch"),
        pytest.param([1767225600.9, 1767225601.0, 1767225600.1], id="going back a second"),
    ],
)
def test_format_time_with_remembered_seconds_formats_every_time_right(seconds: list[float]) -> None:
    for value in seconds:
        expected = datetime.fromtimestamp(int(value // 1), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert format_time(value) == expected
