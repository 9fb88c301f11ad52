"""Shared pytest setup: subprocesses see this checkout's src first."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubetaint.speed.memo import clear_all
from kubetaint.speed.reference import REFERENCE_ENV

SRC = Path(__file__).resolve().parent.parent / "src"
os.environ["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH", "")])])


@pytest.fixture
def default_mode(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The speed shortcuts on, whatever KUBETAINT_REFERENCE says: for a test of a shortcut's own
    workings (what a memo holds, which fast path ran). Memos are emptied before and after."""
    monkeypatch.delenv(REFERENCE_ENV, raising=False)
    clear_all()
    yield
    clear_all()
