"""Fixtures of the registry tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kubetaint.speed.reference import reference_mode_set


@pytest.fixture
def shortcuts_on() -> Iterator[None]:
    """The registry's shortcuts (memos, trust) on, whatever mode the suite runs in: for the tests
    of a shortcut itself, which the reference mode switches off."""
    with reference_mode_set(False):
        yield
