"""Leaving the process once a command has done its work.

A simulation of 5,000 nodes holds over a million objects; freeing them one by one on the way out
takes seconds (about as long as building a fifth of them) that nobody waits for on purpose: the
operating system takes the memory back at once. So a command run as the `kubetaint` console
program may end with `exit_now`, after its output is written; invoked in-process (tests, a Python
caller of the click command) it returns as usual.

When the reader of the output goes away (`kubetaint simulate FILE | head`), the console program
ends as kubectl and other Unix tools do: killed by SIGPIPE (status 141 in a shell), silently.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import NoReturn

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
    except BrokenPipeError:
        end_on_closed_pipe()
    except OSError:
        code = code or 1  # the output cannot be written (a full disk): as a failed write would
    os._exit(code)


def console_running() -> bool:
    """Whether the `kubetaint` console program is running (not a test or a Python caller)."""
    return _console["running"]


def end_on_closed_pipe() -> NoReturn:
    """The reader of standard output or error went away: end as a Go program such as kubectl
    does (its runtime lets SIGPIPE kill it), with nothing more written and no traceback."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
    os._exit(128 + signal.SIGPIPE)  # (not reached: the signal ends the process)


def flush_or_end() -> None:
    """Flush the standard streams before the console program exits, so that a reader gone away
    ends it by SIGPIPE instead of an exception at interpreter shutdown."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        end_on_closed_pipe()
