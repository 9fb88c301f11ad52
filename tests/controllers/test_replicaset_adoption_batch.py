"""The ReplicaSet controller adopts a sync's orphans through the store's
`update_owner_references_each` when it has one (the Registry) and no orphan has references, else
through its `update_each`: the same writes, in the same order, with the same resourceVersions and
watch events, the same refusals skipped and logged, as one update per pod (the way taken with a
store that has neither)."""

from __future__ import annotations

import itertools
import json
import logging
import random
from typing import Any

import pytest

from controllers.workload_builders import pod, replicaset
from kubetaint.clock import VirtualClock
from kubetaint.controllers.replicaset import ReplicaSetController
from kubetaint.registry import Registry
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, WatchEvent
from kubetaint.store.memory import MemoryStore


class Without:
    """The Registry without some methods (`hidden`): `update_each` and
    `update_owner_references_each` hidden, the controller's fallback of one update per pod."""

    def __init__(self, registry: Registry, hidden: tuple[str, ...]) -> None:
        self._registry = registry
        self._hidden = hidden

    def __getattr__(self, name: str) -> Any:
        if name in self._hidden:
            raise AttributeError(name)
        return getattr(self._registry, name)


#: what the controller's client hides of the Registry, per way of adopting
WAYS = {
    "owners": (),
    "each": ("update_owner_references_each",),
    "one by one": ("update_each", "update_owner_references_each"),
}


FOREIGN = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg", "uid": "cfg-uid"}

ORPHANS = [
    pytest.param([pod(f"orphan-{i}") for i in range(5)], id="five bare orphans"),
    pytest.param(
        [pod("orphan-0"), pod("with-other-owner", ownerReferences=[FOREIGN]), pod("orphan-1")],
        id="an orphan with a non-controller reference keeps it before the new controller reference",
    ),
    pytest.param(
        [pod("orphan-0"), pod("elsewhere", labels={"app": "db"}), pod("orphan-1")],
        id="a pod the selector does not match is left alone",
    ),
    pytest.param(
        [pod("orphan-0"), pod("bad-label", labels={"app": "web", "tier": "x"}), pod("orphan-1")],
        id="orphans with more labels are adopted too",
    ),
    pytest.param([pod(f"orphan-{i}") for i in range(12)], id="more orphans than replicas"),
]


def run(orphans: list[JSON], *, way: str) -> tuple[list[str], list[str]]:
    clock = VirtualClock()
    counter = itertools.count()
    store = MemoryStore(clock, uid_factory=lambda: f"uid-{next(counter):05d}")
    registry = Registry(store, clock=clock)
    registry.create("namespaces", {"metadata": {"name": "default"}})
    events: list[WatchEvent] = []
    store.subscribe(each_event(events.append), "pods")
    client: Any = Without(registry, WAYS[way])
    for orphan in orphans:
        registry.create("pods", orphan)
    ReplicaSetController(client, clock, random.Random(1)).start()
    registry.create("replicasets.apps", replicaset("web", 4))
    clock.run_pending()
    seen = [json.dumps([e.type, e.resource_version, e.object], sort_keys=True) for e in events]
    final = [json.dumps(p, sort_keys=True) for p in store.list("pods").items]
    return seen, final


@pytest.mark.parametrize("orphans", ORPHANS)
def test_adoption_by_update_each_is_one_update_per_pod(orphans: list[JSON]) -> None:
    reference = run(orphans, way="one by one")
    assert run(orphans, way="each") == reference
    assert run(orphans, way="owners") == reference


def test_adopted_pods_that_had_no_references_share_one_reference_list() -> None:
    seen, _ = run([pod(f"orphan-{i}") for i in range(3)], way="owners")
    assert len(seen) > 3
    clock = VirtualClock()
    store = MemoryStore(clock)
    registry = Registry(store, clock=clock)
    registry.create("namespaces", {"metadata": {"name": "default"}})
    for i in range(3):
        registry.create("pods", pod(f"orphan-{i}"))
    ReplicaSetController(registry, clock, random.Random(1)).start()
    registry.create("replicasets.apps", replicaset("web", 3))
    clock.run_pending()
    refs = [store.get("pods", "default", f"orphan-{i}")["metadata"]["ownerReferences"] for i in range(3)]
    assert refs[0] is refs[1] is refs[2]
    assert refs[0][0]["kind"] == "ReplicaSet" and refs[0][0]["controller"] is True


@pytest.mark.parametrize("way", list(WAYS))
def test_a_refused_adoption_is_logged_and_the_others_are_made(
    way: str, caplog: pytest.LogCaptureFixture
) -> None:
    clock = VirtualClock()
    store = MemoryStore(clock)
    registry = Registry(store, clock=clock)
    registry.create("namespaces", {"metadata": {"name": "default"}})
    for i in range(3):
        registry.create("pods", pod(f"orphan-{i}"))
    controller = ReplicaSetController(Without(registry, WAYS[way]), clock, random.Random(1))
    controller.start()
    rs = registry.create("replicasets.apps", replicaset("web", 3))
    stale = store.get("pods", "default", "orphan-1")
    registry.update("pods", {**stale, "metadata": {**stale["metadata"], "annotations": {"a": "b"}}})
    pods = [
        stale if p["metadata"]["name"] == "orphan-1" else p for p in controller.index.orphans_in("default")
    ]
    controller.index.orphans_in = lambda _ns: pods  # type: ignore[method-assign]
    controller.index.orphan_candidates = lambda _ns, _sel: pods  # type: ignore[method-assign]
    with caplog.at_level(logging.INFO, logger="kubetaint.controllers.replicaset.controller"):
        adopted = controller._adopt_orphans(rs, controller.owners.selectors.parsed(rs))  # type: ignore[arg-type]
    assert [p["metadata"]["name"] for p in adopted] == ["orphan-0", "orphan-2"]
    assert "could not update owner of pod orphan-1" in caplog.text
    assert not store.get("pods", "default", "orphan-1")["metadata"].get("ownerReferences")
