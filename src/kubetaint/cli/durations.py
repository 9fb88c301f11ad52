"""Duration flags (`simulate --until`, `whatif --for`): Go durations or seconds, checked as the
command line is read, so a wrong value is a wrong command line (exit 2) naming the flag."""

from __future__ import annotations

from kubetaint.cli.failure import UsageFailure


def flag_seconds(flag: str, text: str) -> float:
    """The seconds `text` gives `flag`: a Go duration (`90s`, `1h30m`) or plain seconds, from 0 to
    the longest run a scenario may ask for."""
    from kubetaint.sim.scenario import run_seconds

    try:
        return run_seconds(text)
    except ValueError as err:
        raise UsageFailure(f"{flag}: {err}") from None
