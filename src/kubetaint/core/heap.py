"""Cyclic garbage collection around bulk work on many long-lived objects.

A simulated cluster holds millions of small JSON dicts that live for the whole run and hold no
reference cycles; CPython's cyclic collector would still traverse all of them on every full
collection (a 150,000-pod run spent 30 s there). Reference counting frees everything the engine
drops (tests/sim/test_run_leaves_no_cycles.py), so pausing the collector while loading, and
deferring its collections while running, changes nothing but the time spent.
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
def collections_deferred(young: int | None = None) -> Iterator[None]:
    """Inside the block the collector waits for `young` (default DEFERRED_YOUNG) new container
    objects before a young collection, and never runs the older ones. A simulation's run only adds
    long-lived state and garbage that reference counting frees (a 5,000-node hour leaves ~1.8 M
    objects young and its young collections, ~1 s at the default threshold of 700, found nothing;
    a 5,000-node hour spent another ~2.4 s in the older collections, also for nothing). If a
    collection inside the block does find cyclic garbage, the block goes back to the previous young
    threshold, so a workload that makes cycles is collected as often as before. On the way out the
    survivors are handed to the oldest generation, as a middle collection would promote them,
    without traversing them; the thresholds are restored."""
    previous = gc.get_threshold()
    prior_young = previous[0]
    deferred = DEFERRED_YOUNG if young is None else young
    if prior_young == 0:  # a threshold of 0 turns automatic collection off: keep it off
        deferred = 0

    def on_collection(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info.get("collected", 0) > 0 and gc.get_threshold()[0] == deferred:
            gc.set_threshold(prior_young, _NEVER, _NEVER)  # cycles exist: collect them as before

    gc.set_threshold(deferred, _NEVER, _NEVER)
    gc.callbacks.append(on_collection)
    try:
        yield
    finally:
        gc.callbacks.remove(on_collection)
        # promoted first: the young count goes back to 0 before the default threshold is back, so
        # no allocation in between can set off a young collection of everything the block left
        promote_survivors()
        gc.set_threshold(*previous)


DEFERRED_YOUNG = 5_000_000  # new container objects between young collections while deferring
_NEVER = 1 << 30  # a threshold no count reaches in practice


def promote_survivors() -> None:
    """Move every tracked object into the oldest generation without a collection (gc.freeze then
    gc.unfreeze). Skipped while anything else holds objects frozen: unfreezing would release
    those too."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
