"""A component's informers: the shared informer it is given, or its own, started and stopped with it."""

from __future__ import annotations

from kubetaint.clock.virtual import VirtualClock
from kubetaint.store.component_informers import ComponentInformers
from kubetaint.store.informer import Informer
from kubetaint.store.memory import MemoryStore


def _node(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def test_a_given_informer_is_used_and_left_to_its_sharer() -> None:
    store = MemoryStore(VirtualClock())
    shared = Informer(store, "nodes")
    informers = ComponentInformers(store)
    assert informers.shared_or_own(shared, "nodes") is shared
    assert not informers.owns(shared)
    informers.start()
    assert not shared.started
    shared.start()
    informers.stop()
    assert shared.started


def test_an_own_informer_is_started_and_stopped_with_the_component() -> None:
    store = MemoryStore(VirtualClock())
    store.create("nodes", _node("n1"))
    informers = ComponentInformers(store)
    own = informers.shared_or_own(None, "nodes")
    assert informers.owns(own)
    assert not own.started
    informers.start()
    assert own.started
    assert own.get("", "n1") is not None
    informers.stop()
    assert not own.started
    store.create("nodes", _node("n2"))
    assert own.get("", "n2") is None


def test_an_own_informer_follows_the_namespace_it_is_asked_for() -> None:
    store = MemoryStore(VirtualClock())
    for namespace in ("a", "b"):
        store.create("configmaps", {"metadata": {"namespace": namespace, "name": "c"}})
    informers = ComponentInformers(store)
    own = informers.shared_or_own(None, "configmaps", namespace="a")
    informers.start()
    assert list(own.keys()) == [("a", "c")]


def test_start_all_starts_the_shared_informers_too_in_the_order_asked() -> None:
    store = MemoryStore(VirtualClock())
    store.create("nodes", _node("n1"))
    told: list[str] = []
    informers = ComponentInformers(store)
    shared = informers.shared_or_own(Informer(store, "nodes"), "nodes")
    own = informers.shared_or_own(None, "pods")
    shared.add_handlers(lambda changes: told.append("nodes"))
    own.add_handlers(lambda changes: told.append("pods"))
    store.create("pods", {"metadata": {"namespace": "default", "name": "p"}})
    informers.start_all()
    assert shared.started and own.started
    assert told == ["nodes", "pods"]
