"""Leaving the process once a command has done its work.

A simulation of 5,000 nodes holds over a million objects; freeing them one by one on the way out
takes seconds (about as long as building a fifth of them) that nobody waits for on purpose: the
operating system takes the memory back at once. So a command run as the `kubetaint` console
program may end with `exit_now`, after its output is written; invoked in-process (tests, a Python
caller of the click command) it returns as usual.
"""

from __future__ import annotations

import os
import sys

#: set by the console program's entry point before any command runs
_console: dict[str, bool] = {"running": False}


def mark_console() -> None:
    """The `kubetaint` console program is running (its entry point says so before any command)."""
    _console["running"] = True


def exit_now(code: int = 0) -> None:
    """As the console program: flush the standard streams and end the process with `code` at once,
    without tearing objects down (nothing is left to write: callers have closed their files).
    Otherwise do nothing."""
    if not _console["running"]:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        code = code or 1  # the reader went away (a closed pipe): as a failed write would
    os._exit(code)
