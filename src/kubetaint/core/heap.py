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


#: Net growth in collector-tracked objects between two young collections while a simulation runs.
#: A simulated hour at 5,000 nodes allocates and frees ~10^8 short-lived dicts (lease versions, watch
#: events, copies); at the default 700 the collector ran ~9,000 young and ~900 middle collections there,
#: ~2 s of CPU traversing objects that reference counting frees anyway. The engine makes next to no
#: cycles, so collections this rare free the same garbage; a cycle made while running waits at most
#: this many allocations (tens of MB at worst) for its collection.
RUN_YOUNG_THRESHOLD = 1_000_000


@contextmanager
def full_collections_deferred() -> Iterator[None]:
    """Inside the block young collections are rare (`RUN_YOUNG_THRESHOLD`) and full collections,
    which would traverse every long-lived object (the cluster's state, rewritten as it runs), wait
    until the block ends; the thresholds are restored after. Cycles still go: by the next young or
    middle collection, or the first full one after the block."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, RUN_YOUNG_THRESHOLD), middle, 1 << 30)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, old)


def freeze_survivors() -> None:
    """Move every object tracked so far out of the collector's reach (gc.freeze): a cluster just
    loaded under `collector_paused` sits whole in the youngest generation, and the first young
    collections after the pause would otherwise traverse all of it twice (seconds at 150,000 pods)
    only to promote it. `thaw` hands the objects back (to the oldest generation)."""
    gc.freeze()


def thaw() -> None:
    """Undo `freeze_survivors`: frozen objects become collectable again (in the oldest generation)."""
    gc.unfreeze()
