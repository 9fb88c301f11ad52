"""Components made inside `in_reference_mode()` run in reference mode (`KUBETAINT_REFERENCE=1`);
inside `in_reference_mode(False)`, in the default mode whatever the environment says."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from kubetaint.speed.reference import REFERENCE_ENV


@contextmanager
def in_reference_mode(on: bool = True) -> Iterator[None]:
    before = os.environ.get(REFERENCE_ENV)
    os.environ[REFERENCE_ENV] = "1" if on else "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ[REFERENCE_ENV]
        else:
            os.environ[REFERENCE_ENV] = before
