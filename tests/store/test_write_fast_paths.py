"""The shortcuts on the store's write path give what the general code gives: prepare_update and
MemoryStore.update_many for updates carrying the stored object's own metadata, the selector-less
watch filter, batch dispatch, the WatchEvent constructor and object_key."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.api.selectors import parse_field_selector, parse_label_selector
from kubetaint.clock import VirtualClock
from kubetaint.store.changes import ChangeBatch, each_event
from kubetaint.store.interface import JSON, WatchEvent, object_key
from kubetaint.store.memory import MemoryStore
from kubetaint.store.mutation import prepare_update
from kubetaint.store.watch import Dispatcher, WatchFilter
from store.commits import update_many


def stored_pod(**meta: Any) -> JSON:
    metadata = {
        "name": "p",
        "namespace": "ns",
        "uid": "u1",
        "creationTimestamp": "t0",
        "resourceVersion": "5",
    }
    metadata.update(meta)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {"nodeName": "n1"},
        "status": {"phase": "Pending"},
    }


def generation_pod() -> JSON:
    return stored_pod(generation=3)


def without(field: str) -> JSON:
    pod = stored_pod()
    del pod["metadata"][field]
    return pod


@pytest.mark.parametrize(
    "resource, old, change",
    [
        pytest.param(
            "pods", generation_pod(), {"spec": {"nodeName": "n2"}}, id="a spec change bumps generation"
        ),
        pytest.param(
            "pods", generation_pod(), {"status": {"phase": "Running"}}, id="a status change does not"
        ),
        pytest.param("pods", generation_pod(), {}, id="an unchanged copy is a no-op"),
        pytest.param("configmaps", stored_pod(), {"data": {"k": "v"}}, id="a new field without generation"),
        pytest.param("configmaps", stored_pod(), {"status": None}, id="a field set to null"),
        pytest.param(
            "configmaps", without("creationTimestamp"), {"status": {}}, id="stored without creationTimestamp"
        ),
        pytest.param("configmaps", without("uid"), {"status": {}}, id="stored without uid"),
        pytest.param(
            "configmaps", without("resourceVersion"), {"status": {}}, id="stored without resourceVersion"
        ),
    ],
)
def test_an_update_with_the_stored_metadata_prepares_as_with_a_copy_of_it(
    resource: str, old: JSON, change: JSON
) -> None:
    shared = {**old, **change}  # carries old's own metadata object
    copied = {**shared, "metadata": dict(old["metadata"])}
    fast, general = prepare_update(resource, shared, old), prepare_update(resource, copied, old)
    assert json.dumps(fast) == json.dumps(general)  # key order included
    if fast is not None:
        assert fast["metadata"] is not old["metadata"], "the backend writes resourceVersion into it"


def test_conflicts_are_still_found_with_a_copied_metadata() -> None:
    old = stored_pod()
    with pytest.raises(StatusError) as err:
        prepare_update("pods", {**old, "metadata": {**old["metadata"], "resourceVersion": "4"}}, old)
    assert err.value.code == 409


def event(
    kind: str, namespace: str, old_namespace: str | None, labels: dict[str, str] | None = None
) -> WatchEvent:
    obj = {"metadata": {"name": "x", "namespace": namespace, "labels": labels or {}}}
    old = None if old_namespace is None else {"metadata": {"name": "x", "namespace": old_namespace}}
    return WatchEvent(kind, "leases", obj, 7, old)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "namespace, label_selector, given, seen_as",
    [
        pytest.param("", None, event("MODIFIED", "a", "a"), "MODIFIED", id="all namespaces see a change"),
        pytest.param("", None, event("ADDED", "a", None), "ADDED", id="all namespaces see an add"),
        pytest.param("", None, event("DELETED", "a", None), "DELETED", id="all namespaces see a delete"),
        pytest.param(
            "", None, event("MODIFIED", "a", None), "ADDED", id="a change without its old object is an add"
        ),
        pytest.param("a", None, event("MODIFIED", "a", "a"), "MODIFIED", id="a change in the namespace"),
        pytest.param("a", None, event("MODIFIED", "b", "b"), None, id="a change elsewhere is unseen"),
        pytest.param("a", None, event("ADDED", "b", None), None, id="an add elsewhere is unseen"),
        pytest.param("a", None, event("DELETED", "a", None), "DELETED", id="a delete in the namespace"),
        pytest.param(
            "a", None, event("MODIFIED", "a", "b"), "ADDED", id="moving into the namespace is an add"
        ),
        pytest.param("a", None, event("MODIFIED", "b", "a"), "DELETED", id="moving out is a delete"),
        pytest.param(
            "a",
            None,
            event("MODIFIED", "a", None),
            "ADDED",
            id="a change without old object in the namespace",
        ),
        pytest.param(
            "a", "k=v", event("MODIFIED", "a", "a", {"k": "v"}), "ADDED", id="starting to match a selector"
        ),
        pytest.param(
            "a", "k=v", event("MODIFIED", "a", "a"), None, id="a selector not matched before or after"
        ),
        pytest.param(
            "", None, WatchEvent("MODIFIED", "pods", {"metadata": {}}, 1, {}), None, id="another resource"
        ),
    ],
)
def test_watch_filter_translation(
    namespace: str, label_selector: str | None, given: WatchEvent, seen_as: str | None
) -> None:
    watch_filter = WatchFilter(
        "leases", namespace, parse_label_selector(label_selector), parse_field_selector(None, "leases")
    )
    seen = watch_filter.translate(given)
    assert (seen.type if seen is not None else None) == seen_as
    if seen is not None:
        assert seen.object is given.object and seen.resource_version == given.resource_version


def numbered(n: int) -> WatchEvent:
    return WatchEvent("MODIFIED", "leases", {"n": n}, n, {})


def test_events_handlers_cause_are_delivered_after_the_ones_already_queued() -> None:
    dispatcher = Dispatcher()
    delivered: list[int] = []

    def handler(ev: WatchEvent) -> None:
        delivered.append(ev.resource_version)
        if ev.resource_version == 1:
            dispatcher.publish(ChangeBatch([numbered(10)]))  # a write from inside a handler

    dispatcher.subscribe(each_event(handler), "leases")
    for one in [numbered(1), numbered(2), numbered(3)]:
        dispatcher.publish(ChangeBatch([one]))
    dispatcher.dispatch()
    assert delivered == [1, 2, 3, 10]


def test_a_failing_handler_leaves_the_rest_of_the_batch_for_the_next_dispatch() -> None:
    dispatcher = Dispatcher()
    delivered: list[int] = []

    def handler(ev: WatchEvent) -> None:
        if ev.resource_version == 2 and 2 not in delivered:
            delivered.append(2)
            raise RuntimeError("boom")
        delivered.append(ev.resource_version)

    dispatcher.subscribe(each_event(handler), "leases")
    for one in [numbered(1), numbered(2), numbered(3)]:
        dispatcher.publish(ChangeBatch([one]))
    with pytest.raises(RuntimeError):
        dispatcher.dispatch()
    dispatcher.publish(ChangeBatch([numbered(4)]))
    dispatcher.dispatch()
    assert delivered == [1, 2, 3, 4]


def test_a_handler_unsubscribed_mid_batch_sees_no_later_event() -> None:
    dispatcher = Dispatcher()
    first: list[int] = []
    second: list[int] = []

    def stopper(ev: WatchEvent) -> None:
        first.append(ev.resource_version)
        if ev.resource_version == 1:
            unsubscribe()

    dispatcher.subscribe(each_event(stopper), "leases")
    unsubscribe = dispatcher.subscribe(each_event(lambda ev: second.append(ev.resource_version)), "leases")
    for one in [numbered(1), numbered(2)]:
        dispatcher.publish(ChangeBatch([one]))
    dispatcher.dispatch()
    assert first == [1, 2] and second == [1]


def test_watch_events_stay_frozen_dataclasses() -> None:
    made = WatchEvent("ADDED", "pods", {"a": 1}, 3)
    assert made == WatchEvent("ADDED", "pods", {"a": 1}, 3, None)
    assert made.old_object is None
    assert dataclasses.replace(made, type="DELETED").type == "DELETED"
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.type = "DELETED"  # type: ignore[misc]


@pytest.mark.parametrize(
    "obj, key",
    [
        pytest.param({"metadata": {"namespace": "a", "name": "b"}}, ("a", "b"), id="a namespaced object"),
        pytest.param({"metadata": {"name": "n"}}, ("", "n"), id="a cluster-scoped object"),
        pytest.param({"metadata": {"namespace": None, "name": "n"}}, ("", "n"), id="a null namespace"),
        pytest.param({}, ("", ""), id="no metadata"),
        pytest.param({"metadata": None}, ("", ""), id="null metadata"),
        pytest.param({"metadata": {"name": 5}}, ("", "5"), id="a name that is not a string"),
    ],
)
def test_object_key(obj: JSON, key: tuple[str, str]) -> None:
    assert object_key(obj) == key
    assert all(type(part) is str for part in object_key(obj))


def memory_store() -> MemoryStore:
    counter = iter(range(1000))
    return MemoryStore(VirtualClock(), uid_factory=lambda: f"uid-{next(counter)}")


def configmap(name: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns"},
        "data": {},
    }


def pod_with_generation(name: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"n": 0},
    }


@pytest.mark.parametrize(
    "resource, build, change",
    [
        pytest.param(
            "configmaps", configmap, lambda o, i: {**o, "data": {"i": str(i)}}, id="new data, no generation"
        ),
        pytest.param("configmaps", configmap, lambda o, i: {**o}, id="unchanged copies are no-ops"),
        pytest.param(
            "pods",
            pod_with_generation,
            lambda o, i: {**o, "spec": {"n": i}},
            id="spec changes bump generation",
        ),
    ],
)
def test_batched_updates_with_the_stored_metadata_store_what_copies_of_it_store(
    resource: str, build: Any, change: Any
) -> None:
    def run(share: bool) -> tuple[str, list[tuple[str, int, str]]]:
        store = memory_store()
        seen: list[tuple[str, int, str]] = []
        store.subscribe(each_event(lambda e: seen.append((e.type, e.resource_version, json.dumps(e.object)))))
        current = [store.create(resource, build(n)) for n in ("a", "b", "c")]
        for i in range(1, 4):
            batch = [change(obj, i) for obj in current]
            if not share:
                batch = [{**obj, "metadata": dict(obj["metadata"])} for obj in batch]
            current, err = update_many(store, resource, batch)
            assert err is None
        return json.dumps(current), seen

    assert run(share=True) == run(share=False)
