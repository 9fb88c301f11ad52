"""Shared pod helpers: readiness/availability, templates, and ActivePodsWithRanks facts."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from controllers.workload_builders import pod
from kubetaint.controllers.replicaset.podutil import (
    controller_of,
    is_active,
    is_available,
    pod_from_template,
    rank_for_deletion,
    ranks_by_colocation,
)
from kubetaint.core.names import generate_name

T0 = 1767225600.0  # 2026-01-01T00:00:00Z


def ready_at(name: str, stamp: str, **kw) -> dict:
    p = pod(name, node_name="n", **kw)
    p["status"]["conditions"][0]["lastTransitionTime"] = stamp
    return p


@pytest.mark.parametrize(
    ("phase", "deleting", "active"),
    [
        pytest.param("Running", False, True, id="running pods are active"),
        pytest.param("Pending", False, True, id="pending pods are active"),
        pytest.param("Succeeded", False, False, id="succeeded pods are not"),
        pytest.param("Failed", False, False, id="failed pods are not"),
        pytest.param("Running", True, False, id="terminating pods are not"),
    ],
)
def test_is_active(phase, deleting, active) -> None:
    extra = {"deletionTimestamp": "2026-01-01T00:00:00Z"} if deleting else {}
    assert is_active(pod("p", phase=phase, **extra)) is active


def test_availability_waits_min_ready_seconds() -> None:
    p = ready_at("p", "2026-01-01T00:00:00Z")
    assert is_available(p, 0, T0)
    assert not is_available(p, 30, T0 + 29)
    assert is_available(p, 30, T0 + 30)
    assert not is_available(pod("q", ready=False), 0, T0)


def test_ready_pods_that_became_ready_more_recently_go_first_by_log_bucket() -> None:
    now = T0 + 3600
    young = ready_at("young", "2026-01-01T00:59:00Z")  # ready 60 s ago
    old = ready_at("old", "2026-01-01T00:00:00Z")  # ready 3600 s ago
    assert [p["metadata"]["name"] for p in rank_for_deletion([old, young], [0, 0], now)] == ["young", "old"]


def test_same_log_bucket_falls_back_to_uid_order() -> None:
    now = T0 + 3600
    a = ready_at("a", "2026-01-01T00:00:00Z", uid="uid-b")
    b = ready_at("b", "2026-01-01T00:00:01Z", uid="uid-a")
    assert [p["metadata"]["name"] for p in rank_for_deletion([a, b], [0, 0], now)] == ["b", "a"]


def test_more_restarts_go_first_then_newer_creation() -> None:
    restarted = pod("restarted", node_name="n", ready=False, created="2026-01-01T00:00:00Z")
    restarted["status"]["containerStatuses"] = [{"name": "c", "restartCount": 4}]
    fresh = pod("fresh", node_name="n", ready=False, created="2026-01-01T00:00:00Z")
    assert rank_for_deletion([fresh, restarted], [0, 0], T0 + 60)[0]["metadata"]["name"] == "restarted"
    older = pod("older", node_name="n", ready=False, created="2026-01-01T00:00:00Z")
    newer = pod("newer", node_name="n", ready=False, created="2026-01-01T00:59:00Z")
    assert rank_for_deletion([older, newer], [0, 0], T0 + 3600)[0]["metadata"]["name"] == "newer"


def test_colocation_ranks_count_active_related_pods_per_node() -> None:
    pods = [
        pod("a", node_name="n1"),
        pod("b", node_name="n1"),
        pod("c", node_name="n2"),
        pod("d", node_name="n2", phase="Failed"),
    ]
    assert ranks_by_colocation(pods, pods) == [2, 2, 1, 1]


def test_pod_from_template_copies_labels_annotations_and_spec() -> None:
    owner = {"metadata": {"name": "web", "namespace": "prod", "uid": "u1"}}
    template = {"metadata": {"labels": {"app": "web"}, "annotations": {"a": "1"}}, "spec": {"containers": []}}
    ref = {"kind": "ReplicaSet", "uid": "u1", "controller": True}
    created = pod_from_template(template, owner, ref, generate_name("web-", random.Random(0)))
    assert created["metadata"]["namespace"] == "prod"
    assert created["metadata"]["generateName"] == "web-"
    assert created["metadata"]["annotations"] == {"a": "1"}
    assert controller_of(created) == ref
    assert created["metadata"]["labels"] == {"app": "web"}
    created["metadata"]["annotations"]["b"] = "2"
    assert template["metadata"]["annotations"] == {"a": "1"}


@pytest.mark.parametrize("reference", [False, True], ids=["shared labels", "reference mode: a copy"])
def test_pods_of_one_template_share_its_labels_object(
    reference: bool, switch_reference_mode: Callable[[bool], None]
) -> None:
    switch_reference_mode(reference)
    owner = {"metadata": {"name": "web", "namespace": "prod", "uid": "u1"}}
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}
    first, second = (pod_from_template(template, owner, {}, name) for name in ("web-a", "web-b"))
    assert first["metadata"]["labels"] == second["metadata"]["labels"] == {"app": "web"}
    shared = first["metadata"]["labels"] is template["metadata"]["labels"]
    assert shared is (second["metadata"]["labels"] is template["metadata"]["labels"]) is not reference
