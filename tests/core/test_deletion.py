"""Deletion with finalizers and propagation policies (generic registry store.go rules) and the
garbage collector's dependency graph."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.controllers.garbagecollector.graph import DependencyGraph, owner_resource
from kubetaint.core.deletion import (
    deletion_finalizers,
    keep_deletion_fields,
    marked_for_deletion,
    propagation_from_options,
    should_delete_during_update,
)

JSON = dict[str, Any]
NOW = "2026-01-01T00:00:10Z"


@pytest.mark.parametrize(
    ("finalizers", "policy", "expected"),
    [
        pytest.param([], None, None, id="no policy and no finalizers: delete at once"),
        pytest.param([], "Background", None, id="background adds nothing"),
        pytest.param([], "Orphan", ["orphan"], id="orphan adds the orphan finalizer"),
        pytest.param([], "Foreground", ["foregroundDeletion"], id="foreground adds foregroundDeletion"),
        pytest.param(
            ["orphan"], "Foreground", ["foregroundDeletion"], id="an explicit policy replaces the other"
        ),
        pytest.param(["orphan"], None, None, id="an existing orphan finalizer is the policy"),
        pytest.param(["orphan"], "Background", [], id="background drops a pending orphan finalizer"),
        pytest.param(
            ["example.com/x"], "Orphan", ["example.com/x", "orphan"], id="other finalizers are kept"
        ),
    ],
)
def test_deletion_finalizers(finalizers: list[str], policy: str | None, expected: list[str] | None) -> None:
    assert deletion_finalizers(finalizers, policy) == expected


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        pytest.param({}, None, id="no options"),
        pytest.param({"propagationPolicy": "Foreground"}, "Foreground", id="propagationPolicy"),
        pytest.param({"orphanDependents": True}, "Orphan", id="legacy orphanDependents true"),
        pytest.param({"orphanDependents": False}, "Background", id="legacy orphanDependents false"),
    ],
)
def test_propagation_from_options(options: JSON, expected: str | None) -> None:
    assert propagation_from_options(options) == expected


def rs(**meta: Any) -> JSON:
    return {"metadata": {"name": "web-1", "namespace": "default", "uid": "u1", **meta}, "spec": {}}


def test_marking_sets_the_deletion_timestamp_and_a_zero_grace_period() -> None:
    marked = marked_for_deletion(rs(), "Orphan", NOW)
    assert marked is not None
    meta = marked["metadata"]
    assert (meta["finalizers"], meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"]) == (
        ["orphan"],
        NOW,
        0,
    )


def test_a_second_delete_keeps_the_first_deletion_timestamp() -> None:
    first = marked_for_deletion(rs(), "Foreground", NOW)
    assert first is not None
    again = marked_for_deletion(first, None, "2026-01-01T00:05:00Z")
    assert again is not None and again["metadata"]["deletionTimestamp"] == NOW


def test_an_object_without_finalizers_is_deleted_at_once() -> None:
    assert marked_for_deletion(rs(), "Background", NOW) is None


def test_removing_the_last_finalizer_of_a_marked_object_deletes_it() -> None:
    old = rs(finalizers=["orphan"], deletionTimestamp=NOW, deletionGracePeriodSeconds=0)
    assert should_delete_during_update(rs(deletionTimestamp=NOW), old)
    assert not should_delete_during_update(rs(finalizers=["x"], deletionTimestamp=NOW), old)
    assert not should_delete_during_update(rs(), rs())


def test_an_update_cannot_remove_the_deletion_timestamp() -> None:
    old = rs(finalizers=["orphan"], deletionTimestamp=NOW, deletionGracePeriodSeconds=0)
    kept = keep_deletion_fields(rs(finalizers=["orphan"]), old)
    assert (
        kept["metadata"]["deletionTimestamp"] == NOW and kept["metadata"]["deletionGracePeriodSeconds"] == 0
    )


def owned(name: str, uid: str, *owners: str, kind: str = "ReplicaSet") -> JSON:
    refs = [{"apiVersion": "apps/v1", "kind": kind, "name": o, "uid": o} for o in owners]
    return {"metadata": {"name": name, "namespace": "default", "uid": uid, "ownerReferences": refs}}


def test_the_graph_indexes_dependents_by_owner_uid() -> None:
    graph = DependencyGraph()
    graph.add("replicasets.apps", {"metadata": {"name": "rs", "namespace": "default", "uid": "rs"}})
    graph.add("pods", owned("p1", "p1", "rs"))
    graph.add("pods", owned("p2", "p2", "rs"))
    assert sorted(uid for uid, _ in graph.dependents("rs")) == ["p1", "p2"]
    graph.update("pods", owned("p1", "p1", "rs"), owned("p1", "p1"))
    assert [uid for uid, _ in graph.dependents("rs")] == ["p2"]
    graph.remove(owned("p2", "p2", "rs"))
    assert not graph.has_dependents("rs") and list(graph.absent_owners()) == []


def test_owners_never_seen_are_absent_owners() -> None:
    graph = DependencyGraph()
    graph.add("pods", owned("p1", "p1", "ghost"))
    assert list(graph.absent_owners()) == ["ghost"]


def test_references_to_kinds_not_followed_are_not_indexed() -> None:
    """Events are not followed (upstream's default ignoredResources); every other built-in kind
    the server serves is, StatefulSets included."""
    graph = DependencyGraph()
    pod = owned("p", "p")
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "e"}]
    graph.add("pods", pod)
    assert list(graph.absent_owners()) == []
    assert owner_resource({"apiVersion": "v1", "kind": "Event"}) is None
    assert owner_resource({"apiVersion": "events.k8s.io/v1", "kind": "Event"}) is None
    assert owner_resource({"apiVersion": "apps/v1", "kind": "StatefulSet"}) == "statefulsets.apps"
    assert owner_resource({"apiVersion": "v1", "kind": "Pod"}) == "pods"
