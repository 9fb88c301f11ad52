"""The timeline's store subscriber takes a batch of changes (as store.watch.Dispatcher delivers
an adoption's pod updates) leaving exactly what taking them one by one leaves: the same
records in the same order and the same pod-to-node notes (which later Pod events read). Pod
updates only note the node; every other change of a group (a create, a delete, an update of a
node or an Event) takes the one-by-one way where it comes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.clock import VirtualClock
from kubetaint.sim.timeline import TimelineRecorder
from kubetaint.store.changes import ChangeBatch
from kubetaint.store.interface import JSON, WatchEvent
from kubetaint.store.memory import MemoryStore
from store.commits import update_many


def pod(name: str, node: str | None = "node-1", namespace: str | None = "default") -> JSON:
    meta: JSON = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    spec: JSON = {} if node is None else {"nodeName": node}
    return {"metadata": meta, "spec": spec}


def node(name: str, taints: list[JSON] | None = None) -> JSON:
    return {"metadata": {"name": name}, "spec": {"taints": taints or []}}


def scheduled(name: str) -> JSON:
    return {
        "metadata": {"name": f"{name}.1", "namespace": "default"},
        "reason": "Scheduled",
        "message": f"assigned {name}",
        "involvedObject": {"kind": "Pod", "name": name, "namespace": "default"},
    }


TAINT = {"key": "k", "effect": "NoSchedule"}


def event(kind: str, resource: str, obj: JSON, old: JSON | None = None, rv: int = 1) -> WatchEvent:
    return WatchEvent(kind, resource, obj, rv, old)  # type: ignore[arg-type]


#: events a group may hold, each with a sentence
EVENTS: list[Any] = [
    pytest.param(event("MODIFIED", "pods", pod("a"), pod("a")), id="a pod update notes its node"),
    pytest.param(event("MODIFIED", "pods", pod("b", node=None), pod("b")), id="an unbound pod notes nothing"),
    pytest.param(
        event("MODIFIED", "pods", pod("c", namespace=None), pod("c")),
        id="a pod without namespace is default's",
    ),
    pytest.param(
        event("MODIFIED", "pods", pod("a", "node-2"), pod("a")), id="a pod moved notes its new node"
    ),
    pytest.param(event("ADDED", "pods", pod("d")), id="a pod create records Created"),
    pytest.param(event("DELETED", "pods", pod("a")), id="a pod delete records Deleted"),
    pytest.param(event("ADDED", "events", scheduled("a")), id="an Event about a pod reads its node"),
    pytest.param(event("ADDED", "events", scheduled("c")), id="an Event about another pod"),
    pytest.param(event("MODIFIED", "nodes", node("n", [TAINT]), node("n")), id="a taint added to a node"),
    pytest.param(event("ADDED", "nodes", node("m")), id="a node create"),
]


def _records(recorder: TimelineRecorder) -> tuple[str, str]:
    return json.dumps(recorder.records), json.dumps(sorted(recorder._pod_node.items()))


def _fed(events: list[WatchEvent], *, grouped: bool) -> tuple[str, str]:
    recorder = TimelineRecorder(lambda: 5.0, 0.0)
    if grouped:
        recorder.on_change(events)
    else:
        for one in events:
            recorder.on_change.one(one)
    return _records(recorder)


@pytest.mark.parametrize("first", EVENTS)
@pytest.mark.parametrize("second", EVENTS)
def test_a_group_of_two_leaves_what_two_changes_leave(first: WatchEvent, second: WatchEvent) -> None:
    group = [
        first,
        second,
        event("ADDED", "events", scheduled("a")),
        event("ADDED", "events", scheduled("c")),
    ]
    assert _fed(group, grouped=True) == _fed(group, grouped=False)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([p.values[0] for p in EVENTS]), max_size=8))
def test_any_group_leaves_what_its_changes_leave(group: list[WatchEvent]) -> None:
    assert _fed(group, grouped=True) == _fed(group, grouped=False)


def test_the_store_delivers_an_update_group_at_once_and_single_changes_one_by_one() -> None:
    store = MemoryStore(VirtualClock())
    recorder = TimelineRecorder(lambda: 0.0, 0.0)
    batches: list[int] = []

    def counting(batch: ChangeBatch) -> None:
        """The recorder's subscriber, counting the events of each batch it is given."""
        batches.append(len(batch))
        recorder.on_change(batch)

    store.subscribe(counting, "pods")
    made = [store.create("pods", pod(f"p{i}")) for i in range(3)]
    update_many(store, "pods", [{**p, "status": {"phase": "Running"}} for p in made])
    assert batches == [1, 1, 1, 3]
    assert [r["reason"] for r in recorder.records] == ["Created"] * 3
    assert recorder._pod_node == {("default", f"p{i}"): "node-1" for i in range(3)}
