"""The virtual clock's place in the data directory: a restart resumes at the later of the wall
clock and the time the clock reached."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubetaint.cli.clock_state import FILE_NAME, ClockStateError, resumed_time, save_time
from kubetaint.clock.base import parse_time

NOW = parse_time("2026-01-01T00:00:00Z")


@pytest.mark.parametrize(
    ("saved", "expected"),
    [
        pytest.param(None, NOW, id="no record starts at the wall clock"),
        pytest.param(NOW + 3600.5, NOW + 3600.5, id="a clock advanced past the wall clock resumes there"),
        pytest.param(NOW - 60, NOW, id="a record behind the wall clock is overtaken"),
    ],
)
def test_a_restart_resumes_at_the_later_time(tmp_path: Path, saved: float | None, expected: float) -> None:
    if saved is not None:
        save_time(tmp_path, saved)
    assert resumed_time(tmp_path, NOW) == expected


def test_an_unreadable_record_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_text("yesterday\n")
    with pytest.raises(ClockStateError, match="virtual-clock: not an RFC 3339 time: 'yesterday'"):
        resumed_time(tmp_path, NOW)


def test_a_record_that_cannot_be_written_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    save_time(tmp_path / "missing", NOW)
    assert "cannot record the virtual clock" in caplog.text
