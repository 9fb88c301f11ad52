"""Shared pytest setup: subprocesses see this checkout's src first."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from kubetaint.speed.memo import clear_all
from kubetaint.speed.reference import REFERENCE_ENV, reference_mode, reference_mode_set

SRC = Path(__file__).resolve().parent.parent / "src"
os.environ["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH", "")])])

#: Property tests judge what is written, never how fast: no per-example deadline (a shared CI host
#: can stall any example past hypothesis' default 200 ms and fail a correct test).
settings.register_profile("kubetaint", deadline=None)
settings.load_profile("kubetaint")


@pytest.fixture
def default_mode(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The speed shortcuts on: for a test of a shortcut's own workings (what a memo holds, which
    path ran, a shortcut against the general path). Such a test runs in the default mode only:
    the reference pass (KUBETAINT_REFERENCE=1) skips it, as it would run the very same. Memos are
    emptied before and after."""
    if reference_mode():
        pytest.skip("a shortcut's own workings: tested in the default mode")
    monkeypatch.delenv(REFERENCE_ENV, raising=False)
    clear_all()
    yield
    clear_all()


@pytest.fixture
def switch_reference_mode() -> Iterator[Callable[[bool], None]]:
    """`switch_reference_mode(on)` switches the reference mode on or off for the rest of the test
    (as `kubetaint.speed.reference.reference_mode_set` does, environment included)."""
    with contextlib.ExitStack() as stack:
        yield lambda on: stack.enter_context(reference_mode_set(on))
