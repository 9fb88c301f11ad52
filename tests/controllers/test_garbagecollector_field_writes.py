"""A field write outside metadata (a heartbeat round's lease renewals, a round of node status
posts) told to the garbage collector as one batch with its compact view queues exactly what
telling it each update alone queues: nothing for objects keeping their owners and not being
deleted, the orphaning or foreground deletion of those being deleted (listed, or updated to
being deleted, before the field write)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.clock import VirtualClock
from kubetaint.controllers.garbagecollector.controller import GarbageCollector
from kubetaint.store.changes import FieldWriteGroup
from kubetaint.store.informer import Changes, Informer
from kubetaint.store.interface import JSON, with_field
from kubetaint.store.memory import MemoryStore

OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}


def lease(name: str, **meta: Any) -> JSON:
    metadata: JSON = {"name": name, "namespace": "kube-node-lease", "uid": f"{name}-uid", **meta}
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata, "spec": {}}


def renewed(old: JSON, rv: int) -> JSON:
    new = with_field(old, ("spec", "renewTime"), "2026-01-01T00:00:10.000000Z")
    new["metadata"] = {**old["metadata"], "resourceVersion": str(rv)}
    return new


def _collector(synced: bool) -> GarbageCollector:
    clock = VirtualClock()
    store = MemoryStore(clock)
    informer = Informer(store, "leases.coordination.k8s.io")
    gc = GarbageCollector(store, clock, {"leases.coordination.k8s.io": informer})  # type: ignore[arg-type]
    gc.graph.present["rs-uid"] = ("replicasets.apps", "kube-node-lease", "rs")
    gc.synced = synced
    return gc


def _queued(gc: GarbageCollector) -> list[Any]:
    return [list(gc.attempt_to_delete._queued), list(gc.attempt_to_orphan._queued), sorted(gc.foreground)]


OLDS = [
    pytest.param([lease("a"), lease("b")], id="leases without owners"),
    pytest.param([lease("a", ownerReferences=[OWNER])], id="a lease with an owner present"),
    pytest.param(
        [lease("a", deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["orphan"]), lease("b")],
        id="a lease being deleted with the orphan finalizer",
    ),
    pytest.param(
        [lease("a"), lease("b", deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["foregroundDeletion"])],
        id="a lease being deleted in the foreground",
    ),
]


def _plain(obj: JSON) -> JSON:
    """`obj` before its deletion began (no deletionTimestamp, no finalizers)."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("deletionTimestamp", "finalizers")}
    return {**obj, "metadata": meta}


@pytest.mark.parametrize("synced", [True, False], ids=["synced", "not yet synced"])
@pytest.mark.parametrize("updated", [False, True], ids=["listed as they are", "updated to what they are"])
@pytest.mark.parametrize("olds", OLDS)
def test_a_field_write_outside_metadata_queues_what_its_updates_one_by_one_queue(
    olds: list[JSON], updated: bool, synced: bool
) -> None:
    news = [renewed(old, 10 + i) for i, old in enumerate(olds)]
    keys = [(old["metadata"]["namespace"], old["metadata"]["name"]) for old in olds]
    group = FieldWriteGroup(
        "leases.coordination.k8s.io",
        keys,
        olds,
        news,
        10,
        path=("spec", "renewTime"),
        value="2026-01-01T00:00:10.000000Z",
    )
    batched, alone = _collector(synced), _collector(synced)
    told = batched._handler("leases.coordination.k8s.io")
    handler = alone._handler("leases.coordination.k8s.io")
    for tell in (told, handler):
        if updated:
            tell(Changes.added([(key, _plain(old)) for key, old in zip(keys, olds, strict=True)]))
            tell(Changes([("MODIFIED", key, _plain(old), old) for key, old in zip(keys, olds, strict=True)]))
        else:
            tell(Changes.added(list(zip(keys, olds, strict=True))))
    for gc in (batched, alone):  # the queued work is done (the objects are not in the store)
        gc.clock.run_until(gc.clock.now() + 1)
    told(Changes.of_field_write(group))
    for key, old, new in zip(keys, olds, news, strict=True):
        handler(Changes([("MODIFIED", key, old, new)], only="MODIFIED"))
    assert _queued(batched) == _queued(alone)
