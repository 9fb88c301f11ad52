"""A bound pod's update that keeps its node and its very spec object (an owner, label or status
change) is taken over in place by the scheduler cache; the result must be what removing the old
PodInfo and adding a fresh one gives: the same pods in the same order, the same totals and the
same per-node columns."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from kubetaint.registry.binding import bound_pod
from kubetaint.scheduler.cache import Cache
from kubetaint.scheduler.podinfo import PodInfo, make_pod_info, pod_key, same_spec_facts

from .builders import cache_state, cache_with_pods, pod

JSON = dict[str, Any]


def _owner_change(p: JSON) -> JSON:
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}
    return {**p, "metadata": {**p["metadata"], "ownerReferences": [ref]}}


def _label_change(p: JSON) -> JSON:
    return {**p, "metadata": {**p["metadata"], "labels": {"tier": "web"}}}


def _status_change(p: JSON) -> JSON:
    return {**p, "status": {"phase": "Running", "startTime": "2024-01-01T00:00:00Z"}}


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(_owner_change, id="an owner reference is added (ReplicaSet adoption)"),
        pytest.param(_label_change, id="the labels change"),
        pytest.param(_status_change, id="the status changes"),
    ],
)
@pytest.mark.parametrize("index", [0, 1, 2, 3], ids=["first", "with an extended resource", "last", "alone"])
def test_update_keeping_the_spec_matches_remove_then_add(change: Any, index: int) -> None:
    shortcut, pods = cache_with_pods()
    reference, _ = cache_with_pods()
    updated = change(pods[index])
    assert updated["spec"] is pods[index]["spec"]
    shortcut.update_pod(updated)
    fresh_spec = {**updated, "spec": dict(updated["spec"])}  # a new spec object: the full path
    reference.remove_pod(pods[index])
    reference.add_pod(fresh_spec)
    assert cache_state(shortcut) == cache_state(reference)
    info = shortcut.pod_info(pod_key(updated))
    assert info is not None and info.pod is updated


def test_update_of_an_assumed_pod_confirms_it() -> None:
    cache, pods = cache_with_pods()
    cache.assumed.add(pod_key(pods[0]))
    cache.update_pod(_owner_change(pods[0]))
    assert pod_key(pods[0]) not in cache.assumed


def test_moving_to_another_node_with_the_same_spec_object_moves_the_totals() -> None:
    cache, pods = cache_with_pods()
    moved = {**pods[3], "metadata": dict(pods[3]["metadata"])}
    moved["spec"]["nodeName"] = "n1"  # a test-only edit of the shared spec: the node differs
    before_n1 = int(cache.req[cache.nodes["n1"].slot, 0])
    cache.update_pod(moved)
    assert cache.pod_nodes[pod_key(moved)] == "n1"
    assert int(cache.req[cache.nodes["n1"].slot, 0]) == before_n1 + 250
    assert int(cache.req[cache.nodes["n2"].slot, 0]) == 0
    assert np.all(cache.pod_count[[cache.nodes["n1"].slot, cache.nodes["n2"].slot]] == [4, 0])


def _assumed_then_bound(bind: Any) -> tuple[Cache, JSON]:
    """A cache holding the pods of cache_with_pods and an unbound pod assumed on n1, then told
    of its binding `bind(unbound)`."""
    cache, _ = cache_with_pods()
    unbound = pod("e", cpu="300m", memory="1Gi", extra_requests={"example.com/gpu": "2"})
    cache.assume_pod(make_pod_info(unbound), "n1")
    bound = bind(unbound)
    cache.update_pod(bound)
    return cache, bound


def _binding(p: JSON) -> JSON:
    """The bound pod as the pods/binding subresource stores it (the spec's values kept)."""
    return bound_pod(p, "n1")


@pytest.mark.parametrize(
    "bind",
    [
        pytest.param(_binding, id="the binding keeps every spec value but nodeName"),
        pytest.param(
            lambda p: {**bound_pod(p, "n1"), "status": {"phase": "Pending"}},
            id="the binding arrives with a new status",
        ),
    ],
)
def test_binding_an_assumed_pod_matches_remove_then_add(bind: Any) -> None:
    shortcut, bound = _assumed_then_bound(bind)
    reference, _ = _assumed_then_bound(lambda p: json.loads(json.dumps(bind(p))))  # copies: the full path
    assert cache_state(shortcut) == cache_state(reference)
    key = pod_key(bound)
    info, fresh = shortcut.pod_info(key), reference.pod_info(key)
    assert info is not None and fresh is not None and info.pod is bound
    assert key not in shortcut.assumed and key not in reference.assumed
    assert {s: getattr(info, s) for s in PodInfo.__slots__ if s != "pod"} == {
        s: getattr(fresh, s) for s in PodInfo.__slots__ if s != "pod"
    }
    assert info.node_name == "n1"


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        pytest.param({"a": 1}, None, False, id="no new spec"),
        pytest.param(None, None, False, id="no spec at all"),
        pytest.param({"a": (x := [1])}, {"a": x, "nodeName": "n"}, True, id="nodeName added"),
        pytest.param({"a": x, "nodeName": "m"}, {"nodeName": "n", "a": x}, True, id="nodeName changed"),
        pytest.param({"a": x}, {"a": [1], "nodeName": "n"}, False, id="an equal copy of a value"),
        pytest.param({"a": x}, {"a": x, "b": None}, False, id="a key added"),
        pytest.param({"a": x, "b": None}, {"a": x, "nodeName": "n"}, False, id="a key dropped for nodeName"),
        pytest.param({"a": None}, {"b": None}, False, id="another key with the same value"),
    ],
)
def test_specs_share_their_facts_only_holding_the_very_same_values(old: Any, new: Any, same: bool) -> None:
    assert same_spec_facts(old, new) is same


def test_a_binding_to_another_node_than_assumed_moves_the_pod() -> None:
    shortcut, bound = _assumed_then_bound(lambda p: bound_pod(p, "n2"))
    reference, _ = _assumed_then_bound(lambda p: json.loads(json.dumps(bound_pod(p, "n2"))))
    assert cache_state(shortcut) == cache_state(reference)
    assert shortcut.pod_nodes[pod_key(bound)] == "n2"


def _nominated(p: JSON) -> JSON:
    return {**p, "status": {**(p.get("status") or {}), "nominatedNodeName": "n2"}}


def _attributes(pi: PodInfo) -> dict[str, Any]:
    return {name: getattr(pi, name) for name in PodInfo.__slots__}


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param([_owner_change], id="an adoption"),
        pytest.param([_status_change, _owner_change], id="a status post then an adoption"),
        pytest.param([_owner_change, _status_change, _nominated], id="an adoption, then status changes"),
        pytest.param([_label_change, _status_change], id="a relabelling, then a status post"),
    ],
)
@pytest.mark.parametrize("grouped", [pytest.param(False, id="one by one"), pytest.param(True, id="grouped")])
def test_a_renewed_pod_info_reads_as_a_fresh_one(changes: list[Any], grouped: bool) -> None:
    """Each change keeping the spec object, taken in place or not: the cached PodInfo then holds
    what a PodInfo made afresh from the latest object holds (start time, nomination, identity)."""
    cache, pods = cache_with_pods()
    current = pods[1]
    for change in changes:
        current = change(current)
        if grouped:
            cache.refresh_kept_specs([(current, pod_key(current), current["spec"]["nodeName"])])
        else:
            cache.refresh_kept_spec(current, pod_key(current), current["spec"]["nodeName"])
        info = cache.pod_info(pod_key(current))
        assert info is not None
        assert _attributes(info) == _attributes(make_pod_info(current))
