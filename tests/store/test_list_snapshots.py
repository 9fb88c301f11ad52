"""Paged lists are consistent snapshots, on every backend (etcd3 store.go GetList semantics):
every page of a list reflects the store at the first page's resourceVersion whatever is written
between pages, a watch from that resourceVersion replays every later change (so an informer's
list+watch converges to the store's state), and a snapshot whose history is compacted is 410
Expired with etcd3's messages."""

from __future__ import annotations

import base64
import json
import time

import pytest
from conformance import OpenStore, names, pod, relabelled, rv, status_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetaint.api.errors import StatusError
from kubetaint.store.interface import JSON, Store, WatchEvent
from kubetaint.store.snapshot import EXPIRED_LIST, INCONSISTENT_CONTINUE

KEYS = [("default", "a"), ("default", "b"), ("team", "c"), ("team", "d"), ("team-a", "e"), ("x", "f")]
KEY = st.sampled_from(KEYS)
WRITE = st.tuples(st.sampled_from(["create", "update", "delete"]), KEY)
EXAMPLES = {"memory": 80, "sqlite": 25, "etcd": 8}


def _write(store: Store, kind: str, key: tuple[str, str]) -> None:
    namespace, name = key
    try:
        if kind == "create":
            store.create("pods", pod(name, namespace=namespace, labels={"v": "0"}))
        elif kind == "update":
            old = store.get("pods", namespace, name)
            store.update("pods", relabelled(old, v=str(rv(old))))
        else:
            store.delete("pods", namespace, name)
    except StatusError as err:
        assert err.reason in ("AlreadyExists", "NotFound")


def _state(items: list[JSON]) -> dict[tuple[str, str], int]:
    return {(o["metadata"]["namespace"], o["metadata"]["name"]): rv(o) for o in items}


def _replay(state: dict[tuple[str, str], int], events: list[WatchEvent]) -> dict[tuple[str, str], int]:
    result = dict(state)
    for event in events:
        key = (event.object["metadata"]["namespace"], event.object["metadata"]["name"])
        if event.type == "DELETED":
            result.pop(key, None)
        else:
            result[key] = event.resource_version
    return result


def _backend(request: pytest.FixtureRequest) -> str:
    return str(request.node.callspec.params["open_store"])


def test_pages_are_the_first_pages_snapshot_and_a_watch_from_it_converges(
    open_store: OpenStore, request: pytest.FixtureRequest
) -> None:
    @settings(
        max_examples=EXAMPLES[_backend(request)],
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        initial=st.lists(KEY, unique=True),
        limit=st.integers(1, 3),
        between=st.lists(st.lists(WRITE, max_size=4), max_size=6),
        namespaced=st.booleans(),
    )
    def law(
        initial: list[tuple[str, str]],
        limit: int,
        between: list[list[tuple[str, tuple[str, str]]]],
        namespaced: bool,
    ) -> None:
        store = open_store()
        try:
            for key in initial:
                _write(store, "create", key)
            namespace = "team" if namespaced else ""
            whole = store.list("pods", namespace=namespace)
            expected = _state(whole.items)
            first = store.list("pods", namespace=namespace, limit=limit)
            assert first.resource_version == whole.resource_version
            pages = [first]
            writes = iter(between)
            while pages[-1].continue_token:
                for kind, key in next(writes, []):
                    _write(store, kind, key)
                pages.append(
                    store.list(
                        "pods", namespace=namespace, limit=limit, continue_token=pages[-1].continue_token
                    )
                )
            listed = [item for p in pages for item in p.items]
            assert all(p.resource_version == first.resource_version for p in pages)
            assert _state(listed) == expected
            assert len(listed) == len(expected)  # no object twice
            seen = 0
            for p in pages:
                seen += len(p.items)
                if p.continue_token:
                    assert p.remaining_item_count == len(expected) - seen
                else:
                    assert p.remaining_item_count is None
            for rest in writes:
                for kind, key in rest:
                    _write(store, kind, key)
            target = _state(store.list("pods", namespace=namespace).items)
            stream = store.watch("pods", namespace=namespace, resource_version=first.resource_version)
            try:
                events = stream.drain()
                deadline = time.monotonic() + 10
                while _replay(expected, events) != target and time.monotonic() < deadline:
                    events += stream.wait(0.5)  # etcd delivers on its own thread
            finally:
                stream.stop()
            assert _replay(expected, events) == target
        finally:
            store.close()

    law()


def test_an_exact_list_at_a_past_version_is_the_state_then(open_store: OpenStore) -> None:
    store = open_store()
    a = store.create("pods", pod("a"))
    store.create("pods", pod("b"))
    then = store.current_resource_version()
    store.update("pods", relabelled(a, v="1"))
    store.delete("pods", "default", "b")
    store.create("pods", pod("c"))
    past = store.list("pods", resource_version=then)
    assert past.resource_version == str(then)
    assert names(past.items) == ["a", "b"]
    assert past.items[0] == a


def test_an_exact_list_in_the_future_is_too_large(open_store: OpenStore) -> None:
    store = open_store()
    store.create("pods", pod("a"))
    now = store.current_resource_version()
    err = status_of(lambda: store.list("pods", resource_version=now + 5))
    assert (err.code, err.reason) == (504, "Timeout")
    assert err.message == f"Timeout: Too large resource version: {now + 5}, current: {now}"
    assert err.causes == [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]


def _compact(store: Store) -> None:
    for i in range(40):
        store.create("pods", pod(f"z{i:02}", namespace="zz"))


def test_an_exact_list_at_a_compacted_version_is_expired(open_store: OpenStore) -> None:
    store = open_store(history_size=4)
    store.create("pods", pod("a"))
    then = store.current_resource_version()
    _compact(store)
    err = status_of(lambda: store.list("pods", resource_version=then))
    assert (err.code, err.reason, err.message) == (410, "Expired", EXPIRED_LIST)


def test_a_continue_token_past_compaction_is_expired_with_an_inconsistent_token(
    open_store: OpenStore,
) -> None:
    store = open_store(history_size=4)
    for name in "abc":
        store.create("pods", pod(name))
    first = store.list("pods", namespace="default", limit=1)
    store.delete("pods", "default", "b")
    _compact(store)
    assert first.continue_token
    err = status_of(
        lambda: store.list("pods", namespace="default", limit=1, continue_token=first.continue_token)
    )
    assert (err.code, err.reason, err.message) == (410, "Expired", INCONSISTENT_CONTINUE)
    token = err.to_status()["metadata"]["continue"]
    assert json.loads(base64.urlsafe_b64decode(token))["rv"] == -1
    rest = store.list("pods", namespace="default", continue_token=token)  # the current state after "a"
    assert names(rest.items) == ["c"]
    assert rest.resource_version == str(store.current_resource_version())
