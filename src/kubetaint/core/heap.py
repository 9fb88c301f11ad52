"""Cyclic garbage collection around bulk work on many long-lived objects.

A simulated cluster holds millions of small JSON dicts that live for the whole run and hold no
reference cycles; CPython's cyclic collector would still traverse all of them on every full
collection (a 150,000-pod run spent 30 s there). Reference counting frees everything the engine
drops, so pausing the collector while loading, and deferring full collections while running,
changes nothing but the time spent.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside the block (the previous setting is restored after)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def full_collections_deferred() -> Iterator[None]:
    """Inside the block only the youngest generation is collected: short-lived cycles still go at
    once, while the older collections, which would traverse the cluster's long-lived state as it is
    rewritten, wait until the block ends (a 5,000-node hour spent ~2.4 s in them and found nothing:
    the engine's objects hold no cycles that outlive a young collection). On the way out the
    survivors are handed to the oldest generation, as a middle collection would promote them, without
    traversing them; the thresholds are restored."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(young, _NEVER, _NEVER)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, old)
        promote_survivors()


_NEVER = 1 << 30  # a threshold no count reaches in practice


def promote_survivors() -> None:
    """Move every tracked object into the oldest generation without a collection (gc.freeze then
    gc.unfreeze). Skipped while anything else holds objects frozen: unfreezing would release
    those too."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def freeze_survivors() -> None:
    """Move every object tracked so far out of the collector's reach (gc.freeze): a cluster just
    loaded under `collector_paused` sits whole in the youngest generation, and the first young
    collections after the pause would otherwise traverse all of it twice (seconds at 150,000 pods)
    only to promote it. `thaw` hands the objects back (to the oldest generation)."""
    gc.freeze()


def thaw() -> None:
    """Undo `freeze_survivors`: frozen objects become collectable again (in the oldest generation)."""
    gc.unfreeze()
