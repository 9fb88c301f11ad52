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

import io
import os
import signal
import sys
from typing import NoReturn, TextIO

#: set by the console program's entry point before any command runs
_console: dict[str, bool] = {"running": False}


def mark_console() -> None:
    """The `kubetaint` console program is running (its entry point says so before any command).

    A standard output or error the program was started without (`>&-`) takes what is written to
    it and drops it, as a Go program's writes to a closed descriptor fail unnoticed; the exit
    status still tells the outcome."""
    _console["running"] = True
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - open for the rest of the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    sys.stdout = whole_writes(sys.stdout)


def whole_writes(stream: TextIO) -> TextIO:
    """`stream` writing every byte it is given, or failing. Under PYTHONUNBUFFERED (`python -u`)
    a standard stream writes straight to its file descriptor, and a write the kernel takes only
    part of (a pipe whose reader went away) ends without an error, the rest dropped; a buffered
    writer writes the rest or raises, so a reader gone away ends the program by SIGPIPE as
    without -u. Lines are still written as they end."""
    if not isinstance(stream, io.TextIOWrapper) or not isinstance(stream.buffer, io.FileIO):
        return stream
    return io.TextIOWrapper(
        io.BufferedWriter(stream.buffer),
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=True,
        write_through=True,
    )


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
    except OSError as exc:
        code = code or 1  # the output cannot be written (a full disk): as a failed write would
        write_problem(exc)
    os._exit(code)


def os_problem(exc: OSError) -> str:
    """An operating system's refusal as one line: `FILE: reason`, or the reason alone."""
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename is not None else reason


def write_problem(exc: OSError) -> None:
    """Say on standard error, if it can still be written, why the output could not be."""
    try:
        sys.stderr.write(f"error: {os_problem(exc)}\n")
        sys.stderr.flush()
    except OSError:
        pass  # standard error cannot be written either: the exit status says it


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
    ends it by SIGPIPE, and an output that cannot be written by `end_on_failed_write`, instead of
    an exception at interpreter shutdown."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        end_on_closed_pipe()
    except OSError as exc:
        end_on_failed_write(exc)


def end_on_failed_write(exc: OSError) -> NoReturn:
    """Standard output cannot be written (a full disk): one `error:` line and exit 1 at once,
    leaving the output that could not be written unwritten."""
    write_problem(exc)
    os._exit(1)
