"""Writes the text of a long list in two processes: its later part (CHILD_SHARE of the items) in
a forked copy of this process while this one writes the rest, so a second CPU about halves the wall
time of writing the 155,000 pods of a 5,000-node run. Off with `KUBETAINT_REFERENCE=1`
(kubetaint.speed.reference).

The text of a list's items depends only on the items and their places, not on what was written
before them, so the text of items [mid, n) can be worked out by a copy of the process (`os.fork`:
the document is shared, nothing is copied up front) while this process writes items [0, mid). The
child writes its text into an unnamed temporary file, as UTF-8 with lone surrogates kept
(`surrogatepass`: any `str` comes back whole); once this process has written its part it waits for
the child and hands the child's text to the stream in pieces of PIECE bytes. A child that fails
for any reason (a value the writer rejects, no memory, killed) leaves its part to this process,
which then writes it itself: the text, and the error raised and where, are the same either way.
A child whose parent is gone stops at its next piece.

Used only where the caller allows it (`two_processes_allowed()`: the `kubetaint simulate` command
does; a library caller's writes stay in its own process) and where it can help and is safe: on
Linux, with a second CPU this process may run on and that was mostly idle over the last minute,
while it runs a single Python thread (a fork copies only the calling thread), outside reference
mode, for a list of at least SPLIT_ITEMS items.
"""

from __future__ import annotations

import codecs
import contextlib
import gc
import os
import signal
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import IO, Any, Protocol

from kubetaint.core.heap import collector_paused
from kubetaint.speed.reference import reference_mode

#: Lists shorter than this are written by this process alone.
SPLIT_ITEMS = 20_000
#: Bytes of the child's text handed to the stream at a time.
PIECE = 1 << 20
#: The share of the items the child writes: a little over half, as this process also writes what
#: lies between the long lists (the final nodes) and hands the child's text over.
CHILD_SHARE = 0.55


class TextSink(Protocol):
    """Where streamed text goes (a text file, `sys.stdout`)."""

    def write(self, text: str, /) -> Any: ...


#: Writes the text of items [start, stop) of the list, separators as in the whole list: into this
#: process's writer as it stands when the sink is None, else through a writer of its own to the sink.
WriteItems = Callable[[int, int, "TextSink | None"], None]


#: Whether the writes of this context may fork (`two_processes_allowed`); off by default.
_ALLOWED: ContextVar[bool] = ContextVar("kubetaint_two_processes", default=False)


@contextlib.contextmanager
def two_processes_allowed() -> Iterator[None]:
    """Within it, long lists may be written in two processes (see the module); the console
    program's `simulate` allows it for its output, nothing else does."""
    token = _ALLOWED.set(True)
    try:
        yield
    finally:
        _ALLOWED.reset(token)


class _Process:
    """Whether this process is a child forked to write a part of a list (which forks no more)."""

    child = False


def two_processes_help(count: int) -> bool:
    """Whether a list of `count` items is written in two processes."""
    return (
        count >= SPLIT_ITEMS
        and _ALLOWED.get()
        and not _Process.child
        and not reference_mode()
        and sys.platform == "linux"
        and threading.active_count() == 1
        and _a_cpu_is_idle()
    )


def _a_cpu_is_idle() -> bool:
    """Whether this process may run on two CPUs or more and, over the last minute, the machine ran
    or had waiting fewer processes than those CPUs less half of one: a second CPU was mostly idle.
    (On a busy machine the child would only take CPU from others: writing in two processes costs
    about a fifth more CPU in all, for the pages the two processes come to copy.)"""
    cpus = len(os.sched_getaffinity(0))
    return cpus >= 2 and os.getloadavg()[0] < cpus - 0.5


def write_in_halves(count: int, write_items: WriteItems, stream: TextSink, flush: Callable[[], None]) -> None:
    """The text of a list's `count` items: `write_items(0, count, None)`, its later part written
    by a forked child when `two_processes_help(count)`. `flush` hands what this process's writer
    has gathered to `stream` (before the child's text follows it there)."""
    if not two_processes_help(count):
        write_items(0, count, None)
        return
    mid = count - int(count * CHILD_SHARE)
    spool = _spool()
    if spool is None:  # (no temporary file to be had: one process writes it all)
        write_items(0, count, None)
        return
    # while the child runs, no collection here: it would go through every object, each page it
    # visits then copied (the pages are the child's too until one of them writes to them)
    with spool, collector_paused():
        try:
            pid = _fork(lambda: write_items(mid, count, _FileSink(spool.fileno(), os.getppid())))
        except OSError:  # (no process to be had)
            write_items(0, count, None)
            return
        try:
            write_items(0, mid, None)
            succeeded = _succeeded(pid)
        except BaseException:
            _stop(pid)
            raise
        if succeeded:
            flush()
            spool.seek(0)
            decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
            while piece := spool.read(PIECE):
                stream.write(decoder.decode(piece))
            stream.write(decoder.decode(b"", final=True))
        else:
            write_items(mid, count, None)


def _spool() -> IO[bytes] | None:
    """An unnamed temporary file, or None."""
    try:
        return tempfile.TemporaryFile()  # (the caller closes it)
    except OSError:
        return None


def _fork(work: Callable[[], None]) -> int:
    """A child process that does `work` and ends, with status 0 when it succeeded. (Python 3.12 on
    warns of forking a process with threads of its own, numpy's BLAS workers among them: the child
    takes no lock they may hold, it only works text out and writes it to a file descriptor.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid:
        return pid
    code = 1
    _Process.child = True
    try:
        # a collection would look at every object: the pages shared with the parent copied
        gc.disable()
        work()
        code = 0
    except BaseException:  # (the parent writes this part itself)
        code = 1
    finally:
        os._exit(code)


def _succeeded(pid: int) -> bool:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


class _OrphanedError(Exception):
    """The process that forked the child is gone."""


class _FileSink:
    """A child's text, encoded and written to a file descriptor."""

    __slots__ = ("_fd", "_parent")

    def __init__(self, fd: int, parent: int) -> None:
        self._fd = fd
        self._parent = parent

    def write(self, text: str, /) -> None:
        if os.getppid() != self._parent:
            raise _OrphanedError
        view = memoryview(text.encode("utf-8", "surrogatepass"))
        while view:
            view = view[os.write(self._fd, view) :]
