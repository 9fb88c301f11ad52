"""The memory store pins the store contract: resourceVersions, preconditions, selectors, watch."""

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.store.changes import each_event
from kubetaint.store.interface import StoreOptions, WatchEvent
from kubetaint.store.memory import MemoryStore


def pod(name: str, node: str = "", labels: dict[str, str] | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]},
    }


@pytest.fixture
def store() -> MemoryStore:
    counter = iter(range(10**6))
    return MemoryStore(VirtualClock(), uid_factory=lambda: f"uid-{next(counter)}")


def test_create_sets_metadata_and_rejects_duplicates(store: MemoryStore) -> None:
    created = store.create("pods", pod("a"))
    assert created["metadata"]["resourceVersion"] == "1"
    assert created["metadata"]["uid"] == "uid-0"
    assert created["metadata"]["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert created["metadata"]["generation"] == 1
    with pytest.raises(StatusError) as err:
        store.create("pods", pod("a"))
    assert err.value.code == 409 and err.value.reason == "AlreadyExists"
    assert err.value.message == 'pods "a" already exists'


def test_stale_update_conflicts_and_noop_update_keeps_version(store: MemoryStore) -> None:
    created = store.create("pods", pod("a"))
    same = store.update("pods", {**created})
    assert same["metadata"]["resourceVersion"] == "1"
    changed = {**created, "metadata": {**created["metadata"], "labels": {"x": "1"}}}
    updated = store.update("pods", changed)
    assert updated["metadata"]["resourceVersion"] == "2"
    with pytest.raises(StatusError) as err:
        store.update("pods", changed)
    assert err.value.code == 409 and err.value.reason == "Conflict"
    assert "the object has been modified" in err.value.message


def test_pods_by_node_index_and_selectors(store: MemoryStore) -> None:
    store.create("pods", pod("a", "n1", {"app": "web"}))
    store.create("pods", pod("b", "n2", {"app": "db"}))
    store.create("pods", pod("c", "n1", {"app": "db"}))
    on_n1 = store.list("pods", field_selector="spec.nodeName=n1")
    assert [p["metadata"]["name"] for p in on_n1.items] == ["a", "c"]
    dbs = store.list("pods", label_selector="app in (db)")
    assert [p["metadata"]["name"] for p in dbs.items] == ["b", "c"]
    moved = store.update("pods", {**pod("a", "n2", {"app": "web"})})
    assert moved["spec"]["nodeName"] == "n2"
    assert [p["metadata"]["name"] for p in store.list("pods", field_selector="spec.nodeName=n1").items] == [
        "c"
    ]


def test_paging_with_continue(store: MemoryStore) -> None:
    for name in "abcde":
        store.create("pods", pod(name))
    first = store.list("pods", limit=2)
    assert [p["metadata"]["name"] for p in first.items] == ["a", "b"] and first.continue_token
    second = store.list("pods", limit=10, continue_token=first.continue_token)
    assert [p["metadata"]["name"] for p in second.items] == ["c", "d", "e"]
    assert second.continue_token is None


def test_watch_resumes_from_a_resource_version_and_expires_when_compacted() -> None:
    store = MemoryStore(VirtualClock(), options=StoreOptions(history_size=3))
    for name in "abcd":
        store.create("pods", pod(name))
    resumed = store.watch("pods", resource_version="2")
    assert [e.object["metadata"]["name"] for e in resumed.drain()] == ["c", "d"]
    store.delete("pods", "default", "a")
    events = resumed.drain()
    assert [(e.type, e.object["metadata"]["name"], e.resource_version) for e in events] == [
        ("DELETED", "a", 5)
    ]
    with pytest.raises(StatusError) as err:
        store.watch("pods", resource_version="1")
    assert err.value.code == 410


def test_label_watch_sees_objects_leave_and_enter(store: MemoryStore) -> None:
    created = store.create("pods", pod("a", labels={"app": "web"}))
    stream = store.watch("pods", resource_version="1", label_selector="app=web")
    store.update("pods", {**created, "metadata": {**created["metadata"], "labels": {"app": "db"}}})
    assert [e.type for e in stream.drain()] == ["DELETED"]
    stream.stop()


def test_handlers_see_commit_order_even_when_they_write(store: MemoryStore) -> None:
    seen: list[tuple[str, str]] = []

    def react(event: WatchEvent) -> None:
        name = event.object["metadata"]["name"]
        seen.append((event.type, name))
        if name == "a" and event.type == "ADDED":
            store.create("pods", pod("from-handler"))

    store.subscribe(each_event(react))
    store.create("pods", pod("a"))
    assert seen == [("ADDED", "a"), ("ADDED", "from-handler")]


def test_informer_lists_then_follows_changes(store: MemoryStore) -> None:
    from kubetaint.store.informer import EventHandlers, Informer

    store.create("pods", pod("a", "n1"))
    log: list[str] = []
    informer = Informer(store, "pods", field_selector="spec.nodeName=n1")
    informer.add_handlers(
        EventHandlers(
            on_add=lambda o: log.append("add " + o["metadata"]["name"]),
            on_update=lambda old, new: log.append("update " + new["metadata"]["name"]),
            on_delete=lambda o: log.append("delete " + o["metadata"]["name"]),
        )
    )
    informer.start()
    store.create("pods", pod("b", "n1"))
    store.create("pods", pod("elsewhere", "n2"))
    store.update("pods", pod("b", "n2"))
    store.delete("pods", "default", "a")
    assert log == ["add a", "add b", "delete b", "delete a"]
    assert len(informer) == 0
