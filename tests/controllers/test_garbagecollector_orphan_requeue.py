"""The garbage collector queues an object for orphaning its dependents when its deletion starts
with the `orphan` finalizer (graph_builder.go's processTransitions, startsWaitingForDependentsOrphaned):
listed or updated to being deleted with the finalizer, or given the finalizer while being deleted;
not at every later update of it."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.clock import VirtualClock
from kubetaint.controllers.garbagecollector.controller import GarbageCollector
from kubetaint.store.informer import Changes, Informer
from kubetaint.store.interface import JSON
from kubetaint.store.memory import MemoryStore

RESOURCE = "configmaps"
KEY = ("default", "owner")
DELETING = "2026-01-01T00:00:00Z"


def owner(rv: int, **meta: Any) -> JSON:
    metadata: JSON = {"name": "owner", "namespace": "default", "uid": "owner-uid", "resourceVersion": str(rv)}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {**metadata, **meta}}


PLAIN = owner(1)
ORPHANING = owner(2, deletionTimestamp=DELETING, finalizers=["orphan"])
HELD = owner(2, deletionTimestamp=DELETING, finalizers=["example.com/hold"])


def _collector() -> GarbageCollector:
    clock = VirtualClock()
    store = MemoryStore(clock)
    gc = GarbageCollector(store, clock, {RESOURCE: Informer(store, RESOURCE)})  # type: ignore[arg-type]
    gc.synced = True
    return gc


@pytest.mark.parametrize(
    ("before", "after", "queued"),
    [
        pytest.param(None, ORPHANING, True, id="listed being deleted with the orphan finalizer"),
        pytest.param(PLAIN, ORPHANING, True, id="its deletion starts with the orphan finalizer"),
        pytest.param(HELD, ORPHANING, True, id="being deleted, it is given the orphan finalizer"),
        pytest.param(
            ORPHANING,
            owner(3, deletionTimestamp=DELETING, finalizers=["orphan"], labels={"changed": "yes"}),
            False,
            id="a later update of it while the finalizer is pending",
        ),
        pytest.param(PLAIN, HELD, False, id="its deletion starts without the orphan finalizer"),
    ],
)
def test_an_object_is_queued_for_orphaning_when_its_deletion_starts_with_the_orphan_finalizer(
    before: JSON | None, after: JSON, queued: bool
) -> None:
    gc = _collector()
    tell = gc._handler(RESOURCE)
    if before is None:
        tell(Changes.added([(KEY, after)]))
    else:
        tell(Changes.added([(KEY, before)]))
        gc.clock.run_until(gc.clock.now() + 1)  # (the work queued for `before` is done)
        assert len(gc.attempt_to_orphan) == 0
        tell(Changes([("MODIFIED", KEY, before, after)], only="MODIFIED"))
    assert len(gc.attempt_to_orphan) == (1 if queued else 0)
