"""MemoryStore.list_keyed (what an unfiltered informer's start lists) holds exactly `list`'s
objects, in `list`'s order, each with its object_key, and `list`'s resourceVersion; an informer
started from it caches and tells its handlers what one started from `list` does (a store without
the capability, or a filtered informer, takes `list`)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.clock import VirtualClock
from kubetaint.store.base import StoreBase
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import JSON, ListResult, object_key
from kubetaint.store.memory import MemoryStore

NAMESPACES = ["default", "team", "team-a", "a", "kube-system"]
NAMES = ["x", "x-1", "y", "a.b", "z0"]


class ListOnlyStore(StoreBase):
    """A MemoryStore seen through `list` only (StoreBase's list_keyed lists and keys each object)."""

    def __init__(self, inner: MemoryStore) -> None:
        self._inner = inner

    def list(self, resource: str, **kwargs: Any) -> ListResult:
        return self._inner.list(resource, **kwargs)

    def subscribe(self, handler: Any, resource: str | None = None) -> Any:
        return self._inner.subscribe(handler, resource)


def pod(namespace: str, name: str, node: str = "n1") -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name[:1]}},
        "spec": {"nodeName": node},
    }


def filled(keys: list[tuple[str, str]], deleted: list[tuple[str, str]]) -> MemoryStore:
    store = MemoryStore(VirtualClock())
    for namespace, name in keys:
        store.create("pods", pod(namespace, name))
        store.create("configmaps", {"metadata": {"name": name, "namespace": namespace}})
    for namespace, name in dict.fromkeys(deleted):
        if (namespace, name) in keys:
            store.delete("pods", namespace, name)
    return store


def started(store: Any, **selectors: Any) -> tuple[Informer, list[JSON]]:
    informer = Informer(store, "pods", **selectors)
    told: list[JSON] = []
    informer.add_handlers(EventHandlers(on_add=told.append))
    informer.start()
    return informer, told


KEYS = st.lists(st.tuples(st.sampled_from(NAMESPACES), st.sampled_from(NAMES)), unique=True, max_size=14)


@settings(max_examples=80, deadline=None)
@given(KEYS, st.lists(st.tuples(st.sampled_from(NAMESPACES), st.sampled_from(NAMES)), max_size=5))
def test_keyed_listing_is_the_listing_with_each_object_key(
    keys: list[tuple[str, str]], deleted: list[tuple[str, str]]
) -> None:
    store = filled(keys, deleted)
    listed = store.list("pods")
    keyed, resource_version = store.list_keyed("pods")
    assert [obj for _, obj in keyed] == listed.items
    assert all(a is b for (_, a), b in zip(keyed, listed.items, strict=True))
    assert [key for key, _ in keyed] == [object_key(obj) for obj in listed.items]
    assert str(resource_version) == listed.resource_version


@settings(max_examples=60, deadline=None)
@given(KEYS, st.lists(st.tuples(st.sampled_from(NAMESPACES), st.sampled_from(NAMES)), max_size=5))
def test_an_informer_started_from_the_keyed_listing_is_one_started_from_list(
    keys: list[tuple[str, str]], deleted: list[tuple[str, str]]
) -> None:
    store = filled(keys, deleted)
    fast, fast_told = started(store)
    generic, generic_told = started(ListOnlyStore(store))
    assert list(fast.keyed_items()) == list(generic.keyed_items())
    assert fast_told == generic_told
    assert all(a is b for a, b in zip(fast_told, generic_told, strict=True))
    assert fast._synced_rv == generic._synced_rv == store.current_resource_version()


@pytest.mark.parametrize(
    "selectors",
    [
        pytest.param({"namespace": "team"}, id="an informer of one namespace lists that namespace"),
        pytest.param({"label_selector": "app=x"}, id="an informer with a label selector lists its matches"),
        pytest.param(
            {"field_selector": "spec.nodeName=n2"}, id="an informer with a field selector lists its matches"
        ),
    ],
)
def test_a_filtered_informer_lists_what_the_store_lists_for_its_selectors(selectors: dict[str, Any]) -> None:
    store = filled([("team", "x"), ("team", "y"), ("default", "x")], [])
    store.create("pods", pod("team", "x-1", node="n2"))
    informer, told = started(store, **selectors)
    expected = store.list("pods", **selectors).items
    assert told == expected
    assert list(informer.keyed_items()) == [(object_key(obj), obj) for obj in expected]


@pytest.mark.parametrize(
    "resource",
    [
        pytest.param("pods", id="a resource with objects"),
        pytest.param("nodes", id="a resource never written lists nothing"),
    ],
)
def test_keyed_listing_of_a_resource(resource: str) -> None:
    store = filled([("default", "x")], [])
    keyed, resource_version = store.list_keyed(resource)
    assert keyed == [(object_key(obj), obj) for obj in store.list(resource).items]
    assert resource_version == store.current_resource_version() == 2


NODES = ["n1", "n2", "n3", ""]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(NAMESPACES), st.sampled_from(NAMES), st.sampled_from(NODES)),
        max_size=30,
    ),
    st.lists(st.tuples(st.sampled_from(NAMESPACES), st.sampled_from(NAMES)), max_size=10),
    st.sets(st.sampled_from(NODES)),
)
def test_pods_by_node_are_what_listing_each_node_gives(
    pods: list[tuple[str, str, str]], deleted: list[tuple[str, str]], nodes: set[str]
) -> None:
    store = MemoryStore(VirtualClock())
    for namespace, name, node in pods:
        if not any(key == (namespace, name) for key, _ in _created(store)):
            store.create("pods", pod(namespace, name, node))
    for namespace, name in dict.fromkeys(deleted):
        if (namespace, name) in [key for key, _ in _created(store)]:
            store.delete("pods", namespace, name)
    indexed = store.capabilities.pods_by_node
    assert indexed is not None
    expected = {}
    for node in nodes:
        listed = store.list("pods", field_selector=f"spec.nodeName={node}").items if node else []
        if listed:
            expected[node] = [(object_key(obj), obj) for obj in listed]
    got = indexed.keyed_pods_by_node(nodes)
    assert {node: [(key, obj["metadata"]["uid"]) for key, obj in pairs] for node, pairs in got.items()} == {
        node: [(key, obj["metadata"]["uid"]) for key, obj in pairs] for node, pairs in expected.items()
    }
    assert all(obj is store.get("pods", *key) for pairs in got.values() for key, obj in pairs)


def _created(store: MemoryStore) -> list[tuple[tuple[str, str], JSON]]:
    return store.list_keyed("pods")[0]
