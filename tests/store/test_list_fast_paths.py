"""MemoryStore.list's shortcut for a `spec.nodeName=<n>` selector (the node index already holds
exactly those pods, so the selector is not tested again on each) lists what testing every pod
of the store against the selector lists, in the same order."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.selectors import parse_field_selector
from kubetaint.clock import VirtualClock
from kubetaint.store.interface import JSON
from kubetaint.store.memory import MemoryStore
from store.commits import update_many


class OddStr(str):
    """A str whose str() (what the selector compares) is not its value (what the index keys on)."""

    __slots__ = ()

    def __str__(self) -> str:
        return super().__str__() + "-odd"


def pod(name: str, namespace: str, node: Any, phase: str = "Running") -> JSON:
    spec: dict[str, Any] = {} if node is ... else {"nodeName": node}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": {"phase": phase},
    }


def generic(store: MemoryStore, selector: str, namespace: str = "") -> list[JSON]:
    """Every pod in list order, tested against the selector one by one."""
    fields = parse_field_selector(selector, "pods")
    return [p for p in store.list("pods", namespace=namespace).items if fields.matches(p)]


def indexed(store: MemoryStore, selector: str, namespace: str = "") -> list[JSON]:
    """The pods the node index offers, tested against the selector one by one."""
    fields = parse_field_selector(selector, "pods")
    node = fields.exact_value("spec.nodeName")
    return [p for _, p in store._candidates("pods", namespace, node) if fields.matches(p)]


def store_of(pods: list[JSON]) -> MemoryStore:
    store = MemoryStore(VirtualClock())
    for p in pods:
        store.create("pods", p)
    return store


#: nodeName values a stored pod can have (validation refuses other types)
NODES = ["n1", "n2", "", None, ...]
#: other types, which the node index files under "" (or under their value)
ODD_NODES = [5, True, OddStr("n1"), OddStr("n2")]
SELECTORS = [
    "spec.nodeName=n1",
    "spec.nodeName==n1",
    "spec.nodeName=n2",
    "spec.nodeName=",
    "spec.nodeName!=n1",
    "spec.nodeName=5",
    "spec.nodeName=true",
    "spec.nodeName=n1,status.phase=Running",
    "status.phase=Pending,spec.nodeName=n1",
    "spec.nodeName=n1,spec.nodeName=n2",
    "spec.nodeName=n1,spec.nodeName!=n1",
]


@pytest.mark.parametrize("selector", SELECTORS)
def test_a_node_selector_lists_what_testing_every_pod_lists(selector: str) -> None:
    pods = [
        pod(f"p{i}", namespace, node, phase)
        for i, (namespace, node, phase) in enumerate(
            (ns, node, phase)
            for ns in ("team", "team-a")
            for node in NODES
            for phase in ("Running", "Pending")
        )
    ]
    store = store_of(pods)
    assert store.list("pods", field_selector=selector).items == generic(store, selector)
    assert store.list("pods", namespace="team", field_selector=selector).items == generic(
        store, selector, "team"
    )


@pytest.mark.parametrize("selector", SELECTORS)
def test_odd_node_names_are_tested_against_the_selector_as_ever(selector: str) -> None:
    store = store_of([pod(f"p{i}", "ns", node) for i, node in enumerate([*NODES, *ODD_NODES])])
    assert store.list("pods", field_selector=selector).items == indexed(store, selector)


def test_a_node_name_of_a_str_subclass_is_still_tested_by_the_selector() -> None:
    store = store_of([pod("a", "ns", OddStr("n1")), pod("b", "ns", "n1")])
    listed = store.list("pods", field_selector="spec.nodeName=n1").items
    assert [p["metadata"]["name"] for p in listed] == ["b"]


def test_pages_of_a_node_selector_list_follow_on() -> None:
    store = store_of([pod(f"p{i}", "ns", "n1" if i % 2 else "n2") for i in range(9)])
    first = store.list("pods", field_selector="spec.nodeName=n1", limit=2)
    rest = store.list("pods", field_selector="spec.nodeName=n1", continue_token=first.continue_token)
    assert first.items + rest.items == generic(store, "spec.nodeName=n1")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "a-b"]), st.sampled_from(NODES), st.sampled_from(["Running", "X"])
        ),
        max_size=12,
    ),
    st.sampled_from(SELECTORS),
)
def test_any_pods_list_by_node_as_the_selector_tests_them(
    specs: list[tuple[str, Any, str]], selector: str
) -> None:
    store = store_of([pod(f"p{i}", ns, node, phase) for i, (ns, node, phase) in enumerate(specs)])
    assert store.list("pods", field_selector=selector).items == generic(store, selector)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["create", "update", "update_many", "keep_spec", "delete"]),
            st.integers(0, 4),
            st.sampled_from(NODES),
            st.sampled_from(["Running", "X"]),
        ),
        max_size=20,
    ),
    st.sampled_from(SELECTORS),
)
def test_the_node_index_follows_creates_updates_and_deletes(
    steps: list[tuple[str, int, Any, str]], selector: str
) -> None:
    """Updates on the same node replace the pod in its node's bucket (also those keeping the very
    spec object, with new metadata: an adoption), moves re-file it: every node's listing is still
    what testing every pod lists, and the index holds each pod once."""
    store = store_of([])
    for op, i, node, phase in steps:
        name = f"p{i}"
        exists = name in store._objects.get("pods", {}).get("default", {})
        if op == "create" and not exists:
            store.create("pods", pod(name, "default", node, phase))
        elif op in ("update", "update_many") and exists:
            current = store.get("pods", "default", name)
            body = {**pod(name, "default", node, phase), "metadata": current["metadata"]}
            if op == "update":
                store.update("pods", body)
            else:
                update_many(store, "pods", [body])
        elif op == "keep_spec" and exists:
            current = store.get("pods", "default", name)
            meta = {**current["metadata"], "ownerReferences": [{"kind": "ReplicaSet", "name": node or "x"}]}
            body = {**current, "metadata": meta, "status": {"phase": phase}}
            update_many(store, "pods", [body])
        elif op == "delete" and exists:
            store.delete("pods", "default", name)
        assert store.list("pods", field_selector=selector).items == generic(store, selector)
        filed = [key for bucket in store._pods_by_node.values() for key in bucket]
        assert sorted(filed) == sorted(("default", p["metadata"]["name"]) for p in store.list("pods").items)
        for bucket in store._pods_by_node.values():
            for key, obj in bucket.items():
                assert store.get("pods", *key) is obj
