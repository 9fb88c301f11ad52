"""Components made inside `in_reference_mode()` run in reference mode (`KUBETAINT_REFERENCE=1`);
inside `in_reference_mode(False)`, in the default mode whatever the environment says."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kubetaint.speed.reference import reference_mode_set


@contextmanager
def in_reference_mode(on: bool = True) -> Iterator[None]:
    with reference_mode_set(on):
        yield
