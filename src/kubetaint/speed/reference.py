"""The reference mode: every speed shortcut off (switched on by `KUBETAINT_REFERENCE=1`).

In reference mode stores commit batches of one operation and no memo answers a question twice;
the outputs (timelines, events, objects, messages) are byte for byte those of the default mode.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

#: The environment variable that switches the reference mode on ("1", "true" or "yes").
REFERENCE_ENV = "KUBETAINT_REFERENCE"

_TRUE = frozenset({"1", "true", "yes", "on"})


def _from_environment() -> bool:
    return os.environ.get(REFERENCE_ENV, "").strip().lower() in _TRUE


class _Mode:
    """The mode in force: read from the environment when kubetaint is imported, switched by
    `reference_mode_set` (which sets the environment too, for the processes a test starts)."""

    on = _from_environment()


def reference_mode() -> bool:
    """Whether every speed shortcut is off: `KUBETAINT_REFERENCE` as it was when kubetaint was
    imported, or as `reference_mode_set` last switched it (memos ask at every store, so this is a
    variable read, not an environment lookup)."""
    return _Mode.on


@contextlib.contextmanager
def reference_mode_set(on: bool) -> Iterator[None]:
    """The reference mode on (or off) inside the block, and as it was after it: for tests and
    tools that compare a shortcut with the general path. Memos keep what they stored before the
    block (a memo drops it at its next store in reference mode)."""
    before, was = os.environ.get(REFERENCE_ENV), _Mode.on
    os.environ[REFERENCE_ENV] = "1" if on else "0"
    _Mode.on = on
    try:
        yield
    finally:
        _Mode.on = was
        if before is None:
            os.environ.pop(REFERENCE_ENV, None)
        else:
            os.environ[REFERENCE_ENV] = before
