"""MemoryStore.create_many's shortcut for the usual create request (a plain metadata dict with a
non-empty string name and a string namespace or none): it takes prepare_create's steps inline and
reads the key once; the objects stored, uids drawn, resourceVersions, history, events and the
failure reported must be what one `create` after another gives, for requests it takes and for
those it leaves to prepare_create (no name, a name or namespace that is not a string, metadata
of another type)."""

from __future__ import annotations

import copy
import itertools
import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.store import memory as memorybulk
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, WatchEvent
from kubetaint.store.memory import MemoryStore
from store.commits import create_many


def make_store() -> tuple[MemoryStore, list[WatchEvent]]:
    counter = itertools.count()
    store = MemoryStore(VirtualClock(), uid_factory=lambda: f"uid-{next(counter)}")
    seen: list[WatchEvent] = []
    store.subscribe(each_event(seen.append))
    return store, seen


def state(store: MemoryStore, seen: list[WatchEvent], resource: str) -> Any:
    listed = store.list(resource)
    events = [(e.type, e.resource, json.dumps(e.object, sort_keys=False), e.resource_version) for e in seen]
    return (
        json.dumps(listed.items, sort_keys=False),
        listed.resource_version,
        events,
        [(e.type, e.resource_version) for e in store._history],
        store._uid(),  # the next uid: as many drawn
    )


def one_by_one(store: MemoryStore, resource: str, objects: list[JSON]) -> tuple[int, str | None]:
    done = 0
    for obj in objects:
        try:
            store.create(resource, obj)
        except StatusError as err:
            return done, err.message
        done += 1
    return done, None


def at_once(store: MemoryStore, resource: str, objects: list[JSON]) -> tuple[int, str | None]:
    stored, failure = create_many(store, resource, objects)
    return len(stored), failure.message if failure is not None else None


def pod(name: Any, **meta: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "a"}, **meta},
        "spec": {"containers": [{"name": "c", "image": "i"}], "nodeName": "n1"},
    }


REQUESTS: list[Any] = [
    pytest.param("pods", [pod("a"), pod("b")], id="plain pods"),
    pytest.param("pods", [pod("a", uid="given"), pod("b")], id="a uid given (one is drawn all the same)"),
    pytest.param("pods", [pod("a", creationTimestamp="2020-01-01T00:00:00Z")], id="a creation time given"),
    pytest.param("pods", [pod("a", generation=4)], id="a generation given"),
    pytest.param("pods", [pod("a", resourceVersion="77")], id="a resourceVersion given (dropped)"),
    pytest.param("pods", [pod("a"), pod("a")], id="a name taken"),
    pytest.param("pods", [pod("a"), pod("")], id="an empty name (refused)"),
    pytest.param(
        "pods", [pod("a"), {**pod("x"), "metadata": {"namespace": "default"}}], id="no name (refused)"
    ),
    pytest.param("pods", [pod(7)], id="a name that is not a string"),
    pytest.param("pods", [pod("a", namespace=None)], id="a null namespace"),
    pytest.param("pods", [pod("a", namespace=3)], id="a namespace that is not a string"),
    pytest.param("pods", [{**pod("a"), "metadata": None}], id="null metadata (refused)"),
    pytest.param(
        "pods", [{**pod("a"), "metadata": OrderedDict(name="a", namespace="d")}], id="a dict subclass"
    ),
    pytest.param(
        "nodes",
        [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
            {"kind": "Node", "metadata": {"name": "n2"}},
        ],
        id="a resource without generation, cluster-scoped",
    ),
]


@pytest.mark.parametrize(("resource", "objects"), REQUESTS)
def test_create_many_leaves_what_one_create_after_another_leaves(resource: str, objects: list[JSON]) -> None:
    reference, reference_seen = make_store()
    expected = one_by_one(reference, resource, copy.deepcopy(objects))
    store, seen = make_store()
    got = at_once(store, resource, objects)
    assert got == expected
    assert state(store, seen, resource) == state(reference, reference_seen, resource)


def count_prepared(monkeypatch: pytest.MonkeyPatch) -> list[JSON]:
    """The requests create_many hands to prepare_create (the general path)."""
    calls: list[JSON] = []
    real: Callable[..., JSON] = memorybulk.prepare_create

    def counting(resource: str, obj: JSON, *rest: Any) -> JSON:
        calls.append(obj)
        return real(resource, obj, *rest)

    monkeypatch.setattr(memorybulk, "prepare_create", counting)
    return calls


@pytest.mark.parametrize(
    ("obj", "general"),
    [
        pytest.param(pod("a"), False, id="a plain pod takes the shortcut"),
        pytest.param(pod("a", namespace=None), False, id="no namespace takes the shortcut"),
        pytest.param(pod(7), True, id="a name that is not a string does not"),
        pytest.param(pod(""), True, id="an empty name does not"),
        pytest.param(pod("a", namespace=3), True, id="a namespace that is not a string does not"),
        pytest.param({**pod("a"), "metadata": OrderedDict(name="a")}, True, id="a dict subclass does not"),
    ],
)
def test_which_requests_take_the_shortcut(obj: JSON, general: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_prepared(monkeypatch)
    store, _ = make_store()
    create_many(store, "pods", [obj])
    assert calls == ([obj] if general else [])


def test_the_stored_metadata_is_a_copy_in_the_requests_key_order() -> None:
    store, _ = make_store()
    request = pod("a", resourceVersion="5")
    (stored,), failure = create_many(store, "pods", [request])
    assert failure is None
    assert stored["metadata"] is not request["metadata"] and request["metadata"]["resourceVersion"] == "5"
    assert list(stored["metadata"]) == [
        "name",
        "namespace",
        "labels",
        "uid",
        "creationTimestamp",
        "generation",
        "resourceVersion",
    ]
    assert stored["spec"] is request["spec"]
