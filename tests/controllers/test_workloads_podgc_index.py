"""Pod GC's indexes: an informer add skips unindexing a pod it does not know (the start-up replay
of every pod), and must leave exactly the indexes the generic `_index` (unindex, then record)
leaves, whatever the pod was indexed as before; the indexes always equal a recount of the pods."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import make_env, pod
from kubetaint.controllers.podgc import PodGCController

JSON = dict[str, Any]
Key = tuple[str, str]


def _controller() -> PodGCController:
    clock, store, _ = make_env()
    return PodGCController(store, clock)


def _indexes(controller: PodGCController) -> tuple[Any, ...]:
    return (
        set(controller._terminated),
        set(controller._terminating),
        dict(controller._node_of),
        {node: set(keys) for node, keys in controller._by_node.items()},
    )


def _variant(name: str, node: str, phase: str, deleting: bool) -> JSON:
    extra = {"deletionTimestamp": "2026-01-01T00:00:00Z"} if deleting else {}
    return pod(name, node_name=node, phase=phase, **extra)


_variants = st.builds(
    _variant,
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["", "n1", "n2"]),
    st.sampled_from(["Running", "Pending", "Succeeded", "Failed"]),
    st.booleans(),
)
_steps = st.lists(st.tuples(st.sampled_from(["add", "update", "delete"]), _variants), max_size=30)


def _recount(pods: dict[Key, JSON]) -> tuple[Any, ...]:
    terminated = {k for k, p in pods.items() if p["status"]["phase"] in ("Succeeded", "Failed")}
    terminating = {k for k, p in pods.items() if p["metadata"].get("deletionTimestamp")}
    node_of = {k: p["spec"]["nodeName"] for k, p in pods.items() if p["spec"].get("nodeName")}
    by_node: dict[str, set[Key]] = {}
    for key, node in node_of.items():
        by_node.setdefault(node, set()).add(key)
    return terminated, terminating, node_of, by_node


@settings(max_examples=150, deadline=None)
@given(_steps)
def test_an_add_indexes_what_the_generic_index_does(steps: list[tuple[str, JSON]]) -> None:
    """Adds may even arrive for a pod indexed already (a replay to handlers that saw it)."""
    fast, generic = _controller(), _controller()
    pods: dict[Key, JSON] = {}
    for action, obj in steps:
        key = ("default", obj["metadata"]["name"])
        if action == "delete":
            fast._unindex(obj)
            generic._unindex(obj)
            pods.pop(key, None)
        elif action == "add":
            fast._add(obj)
            generic._index(obj)
            pods[key] = obj
        else:
            fast._reindex(pods.get(key, obj), obj)
            generic._reindex(pods.get(key, obj), obj)
            pods[key] = obj
        assert _indexes(fast) == _indexes(generic)
        assert _indexes(fast) == _recount(pods)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(None, _variant("a", "n1", "Running", False), id="a new pod on a node"),
        pytest.param(None, _variant("a", "", "Pending", False), id="a new unbound pod"),
        pytest.param(
            _variant("a", "n1", "Failed", True),
            _variant("a", "n2", "Running", False),
            id="an add over a terminated deleting pod indexed on another node",
        ),
        pytest.param(
            _variant("a", "n1", "Succeeded", False),
            _variant("a", "", "Running", False),
            id="an add over a terminated pod, now unbound",
        ),
    ],
)
def test_an_add_replaces_whatever_was_indexed(before: JSON | None, after: JSON) -> None:
    fast, generic = _controller(), _controller()
    if before is not None:
        fast._index(before)
        generic._index(before)
    fast._add(after)
    generic._index(after)
    assert _indexes(fast) == _indexes(generic) == _recount({("default", "a"): after})
