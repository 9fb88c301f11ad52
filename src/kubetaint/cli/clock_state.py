"""Where the virtual clock of `kubetaint up --clock virtual` stands, kept in the data directory
(`virtual-clock`, an RFC 3339 time) so that a restart resumes it there rather than at the wall
clock: what the cluster stamped at a virtual time (events, creation times, heartbeats) is never
in the resumed clock's future, where kubectl would show its age as `<invalid>`.

An advance records the time it moves to before it runs, so a server stopped midway resumes
past everything it stamped."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from kubetaint.clock.base import format_micro_time, parse_time

FILE_NAME = "virtual-clock"
log = logging.getLogger(__name__)


class ClockStateError(ValueError):
    """A `virtual-clock` file that cannot be read."""


def resumed_time(data_dir: Path, now: float) -> float:
    """The later of `now` (the wall clock) and the time the data directory's clock reached."""
    path = data_dir / FILE_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return now
    except OSError as err:
        raise ClockStateError(f"cannot read {path}: {err.strerror}") from None
    try:
        saved = parse_time(text)
    except ValueError:
        raise ClockStateError(f"{path}: not an RFC 3339 time: {text.strip()[:64]!r}") from None
    return max(now, saved)


def save_time(data_dir: Path, when: float) -> None:
    """Record that the clock reaches `when` (written aside, then renamed into place); a failed
    write is logged and the advance goes on."""
    path = data_dir / FILE_NAME
    partial = path.with_name(f".{FILE_NAME}.tmp")
    try:
        partial.write_text(format_micro_time(when) + "\n", encoding="utf-8")
        os.replace(partial, path)
    except OSError as err:
        log.warning("cannot record the virtual clock in %s: %s", path, err.strerror)
