"""Graceful pod deletion: BeforeDelete/CheckGracefulDelete as data, the registry and the control
plane (a kubelet finishes the deletion; a stopped node's pods stay Terminating)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.clock.base import format_time
from kubetaint.controlplane import ControlPlane
from kubetaint.registry import Registry
from kubetaint.registry.graceful import DeletePlan, plan_pod_delete
from kubetaint.store.memory import MemoryStore

NOW = 1_000_000.0


def pod(
    name: str = "p",
    *,
    node: str = "n1",
    phase: str = "Running",
    grace: int | None = None,
    deleting: tuple[float, int] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
    if node:
        spec["nodeName"] = node
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if deleting is not None:
        meta["deletionTimestamp"] = format_time(deleting[0])
        meta["deletionGracePeriodSeconds"] = deleting[1]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase}}


def _marked(deadline: float, period: int) -> tuple[str, int]:
    return format_time(deadline), period


PLANS = [
    pytest.param(pod(node=""), None, None, id="a pod not bound to a node is deleted at once"),
    pytest.param(pod(phase="Succeeded"), None, None, id="a succeeded pod is deleted at once"),
    pytest.param(pod(phase="Failed"), 30, None, id="a failed pod is deleted at once whatever the request"),
    pytest.param(pod(), None, _marked(NOW + 30, 30), id="a bound pod gets the default 30 seconds"),
    pytest.param(pod(grace=10), None, _marked(NOW + 10, 10), id="the pod's own grace period is used"),
    pytest.param(pod(grace=10), 5, _marked(NOW + 5, 5), id="the request's grace period wins"),
    pytest.param(pod(), 0, None, id="a grace period of zero deletes at once"),
    pytest.param(pod(), -5, _marked(NOW + 1, 1), id="a negative grace period counts as one second"),
    pytest.param(pod(grace=-3), None, _marked(NOW + 1, 1), id="a negative spec grace period counts as one"),
    pytest.param(
        pod(deleting=(NOW + 20, 30)),
        10,
        _marked(NOW, 10),
        id="a shorter grace period moves the deadline earlier",
    ),
    pytest.param(pod(deleting=(NOW + 20, 30)), 0, None, id="grace zero finishes a terminating pod"),
    pytest.param(
        pod(deleting=(NOW + 20, 0)), None, None, id="a terminating pod with no grace left is removed"
    ),
]


@pytest.mark.parametrize(("obj", "requested", "expected"), PLANS)
def test_plans(obj: dict[str, Any], requested: int | None, expected: tuple[str, int] | None) -> None:
    plan = plan_pod_delete(obj, requested, NOW)
    if expected is None:
        assert plan == DeletePlan(immediate=True)
        return
    assert not plan.immediate and plan.updated is not None
    meta = plan.updated["metadata"]
    assert (meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"]) == expected


@pytest.mark.parametrize("requested", [None, 30, 45], ids=["no request", "the same period", "a longer one"])
def test_a_pending_deletion_is_left_alone_unless_shortened(requested: int | None) -> None:
    assert plan_pod_delete(pod(deleting=(NOW + 20, 30)), requested, NOW) == DeletePlan(immediate=False)


def _registry() -> tuple[Registry, VirtualClock]:
    clock = VirtualClock(start=NOW)
    return Registry(MemoryStore(clock), rng=random.Random(1), clock=clock, graceful_pod_deletion=True), clock


def test_the_registry_marks_a_bound_pod_and_keeps_it() -> None:
    registry, _ = _registry()
    registry.store.create("pods", pod())
    marked = registry.delete("pods", "default", "p")
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 30
    assert registry.get("pods", "default", "p")["metadata"]["deletionTimestamp"] == format_time(NOW + 30)
    registry.delete("pods", "default", "p", grace_period_seconds=0)
    with pytest.raises(StatusError):
        registry.get("pods", "default", "p")


def test_the_registry_checks_the_uid_precondition_before_marking() -> None:
    registry, _ = _registry()
    registry.store.create("pods", pod())
    with pytest.raises(StatusError) as info:
        registry.delete("pods", "default", "p", uid="someone-else")
    assert info.value.code == 409
    assert "deletionTimestamp" not in registry.get("pods", "default", "p")["metadata"]


def test_a_dry_run_delete_marks_nothing() -> None:
    registry, _ = _registry()
    registry.store.create("pods", pod())
    dry = registry.delete("pods", "default", "p", dry_run=True)
    assert dry["metadata"]["deletionGracePeriodSeconds"] == 30
    assert "deletionTimestamp" not in registry.get("pods", "default", "p")["metadata"]


def test_without_graceful_deletion_the_registry_deletes_at_once() -> None:
    clock = VirtualClock(start=NOW)
    registry = Registry(MemoryStore(clock), rng=random.Random(1))
    registry.store.create("pods", pod())
    registry.delete("pods", "default", "p")
    assert registry.list("pods").items == []


def _plane() -> tuple[ControlPlane, VirtualClock]:
    clock = VirtualClock(start=NOW)
    cp = ControlPlane(MemoryStore(clock), clock, seed=1, graceful_deletion=True)
    cp.ensure_system_namespaces()
    for name in ("n1", "n2"):
        cp.fleet.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {}})
    cp.start()
    return cp, clock


def _running(cp: ControlPlane, clock: VirtualClock, name: str) -> str:
    cp.registry.create("pods", {**pod(name, node=""), "status": {}})
    clock.advance(2)
    placed = cp.store.get("pods", "default", name)
    assert placed["status"]["phase"] == "Running"
    return str(placed["spec"]["nodeName"])


def test_the_kubelet_finishes_a_graceful_deletion() -> None:
    cp, clock = _plane()
    _running(cp, clock, "web")
    cp.registry.delete("pods", "default", "web")
    clock.advance(1)
    assert cp.store.list("pods", namespace="default").items == []


def test_a_pod_on_a_stopped_node_stays_terminating() -> None:
    cp, clock = _plane()
    node = _running(cp, clock, "web")
    cp.fleet.fault([node], "stop")
    cp.registry.delete("pods", "default", "web")
    clock.advance(120)
    left = cp.store.get("pods", "default", "web")
    assert left["metadata"]["deletionGracePeriodSeconds"] == 30
    cp.fleet.fault([node], "recover")
    clock.advance(30)
    assert cp.store.list("pods", namespace="default").items == []


def test_graceful_deletion_without_a_clock_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="needs a clock"):
        Registry(MemoryStore(VirtualClock()), graceful_pod_deletion=True)


def _with_finalizer(obj: dict[str, Any], finalizer: str = "example.com/keep") -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], "finalizers": [finalizer]}}


@pytest.mark.parametrize(
    ("obj", "requested", "expected"),
    [
        pytest.param(pod(node=""), None, _marked(NOW, 0), id="an unbound pod is marked now with grace zero"),
        pytest.param(pod(), 0, _marked(NOW, 0), id="a forced delete only marks the pod"),
        pytest.param(
            pod(deleting=(NOW + 20, 30)),
            0,
            _marked(NOW - 10, 0),
            id="the kubelet's final delete ends the grace period",
        ),
        pytest.param(
            pod(deleting=(NOW + 20, 0)),
            None,
            _marked(NOW, 0),
            id="a later deadline without grace becomes now",
        ),
    ],
)
def test_a_pod_with_finalizers_is_marked_where_it_would_be_removed(
    obj: dict[str, Any], requested: int | None, expected: tuple[str, int]
) -> None:
    registry, _ = _registry()
    registry.store.create("pods", _with_finalizer(obj))
    registry.delete("pods", "default", "p", grace_period_seconds=requested)
    meta = registry.get("pods", "default", "p")["metadata"]
    assert (meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"]) == expected
    assert meta["finalizers"] == ["example.com/keep"]


def test_a_pod_already_marked_for_its_finalizers_is_not_written_again() -> None:
    registry, _ = _registry()
    stored = registry.store.create("pods", _with_finalizer(pod(deleting=(NOW - 5, 0))))
    registry.delete("pods", "default", "p", grace_period_seconds=0)
    assert (
        registry.get("pods", "default", "p")["metadata"]["resourceVersion"]
        == stored["metadata"]["resourceVersion"]
    )


def test_removing_the_last_finalizer_of_a_marked_pod_deletes_it() -> None:
    registry, _ = _registry()
    registry.store.create("pods", _with_finalizer(pod(node="")))
    registry.delete("pods", "default", "p")
    marked = registry.get("pods", "default", "p")
    registry.update("pods", {**marked, "metadata": {**marked["metadata"], "finalizers": []}})
    with pytest.raises(StatusError) as info:
        registry.get("pods", "default", "p")
    assert info.value.code == 404


def test_removing_a_finalizer_of_a_pod_in_its_grace_period_keeps_it() -> None:
    registry, _ = _registry()
    registry.store.create("pods", _with_finalizer(pod()))
    registry.delete("pods", "default", "p")
    marked = registry.get("pods", "default", "p")
    registry.update("pods", {**marked, "metadata": {**marked["metadata"], "finalizers": []}})
    assert registry.get("pods", "default", "p")["metadata"]["deletionGracePeriodSeconds"] == 30


def test_the_kubelet_leaves_a_deleted_pod_with_finalizers_terminating_in_a_terminal_phase() -> None:
    cp, clock = _plane()
    cp.registry.create("pods", {**_with_finalizer(pod("web", node="")), "status": {}})
    clock.advance(2)
    cp.registry.delete("pods", "default", "web")
    clock.advance(1)
    left = cp.store.get("pods", "default", "web")
    assert left["metadata"]["deletionGracePeriodSeconds"] == 0
    assert left["status"]["phase"] == "Succeeded"
    assert [s["state"]["terminated"]["reason"] for s in left["status"]["containerStatuses"]] == ["Completed"]
    cp.registry.update("pods", {**left, "metadata": {**left["metadata"], "finalizers": []}})
    clock.advance(1)
    assert cp.store.list("pods", namespace="default").items == []


def test_a_pod_the_garbage_collector_deletes_keeps_its_finalizers_honoured() -> None:
    cp, clock = _plane()
    template = {
        "metadata": {"labels": {"app": "web"}, "finalizers": ["example.com/keep"]},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    cp.registry.create(
        "replicasets.apps",
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template},
        },
    )
    clock.advance(5)
    (owned,) = cp.store.list("pods", namespace="default").items
    cp.registry.delete("replicasets.apps", "default", "web")
    clock.advance(10)
    left = cp.store.get("pods", "default", owned["metadata"]["name"])
    assert left["metadata"]["deletionTimestamp"] and left["status"]["phase"] == "Succeeded"
    cp.registry.update("pods", {**left, "metadata": {**left["metadata"], "finalizers": []}})
    clock.advance(1)
    assert cp.store.list("pods", namespace="default").items == []


def _immediate_registry(clock: bool) -> Registry:
    """A registry deleting pods at once (the simulator's): with or without a clock."""
    store_clock = VirtualClock(start=NOW)
    return Registry(MemoryStore(store_clock), rng=random.Random(1), clock=store_clock if clock else None)


@pytest.mark.parametrize(
    ("clock", "stamp"),
    [
        pytest.param(True, format_time(NOW), id="with a clock the deletion timestamp is now"),
        pytest.param(False, format_time(0), id="without a clock the deletion timestamp is the epoch"),
    ],
)
def test_a_pod_deleted_at_once_is_only_marked_while_it_has_finalizers(clock: bool, stamp: str) -> None:
    registry = _immediate_registry(clock)
    registry.store.create("pods", _with_finalizer(pod()))
    registry.delete("pods", "default", "p")
    meta = registry.get("pods", "default", "p")["metadata"]
    assert (meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"]) == (stamp, 0)
    assert meta["finalizers"] == ["example.com/keep"]
    marked = registry.get("pods", "default", "p")
    registry.update("pods", {**marked, "metadata": {**marked["metadata"], "finalizers": []}})
    with pytest.raises(StatusError) as info:
        registry.get("pods", "default", "p")
    assert info.value.code == 404


def test_a_pod_deleted_at_once_without_finalizers_is_removed() -> None:
    registry = _immediate_registry(True)
    registry.store.create("pods", pod())
    registry.delete("pods", "default", "p")
    with pytest.raises(StatusError) as info:
        registry.get("pods", "default", "p")
    assert info.value.code == 404


def test_a_pod_already_marked_is_not_written_again_by_a_delete_at_once() -> None:
    registry = _immediate_registry(True)
    stored = registry.store.create("pods", _with_finalizer(pod(deleting=(NOW - 5, 0))))
    registry.delete("pods", "default", "p")
    assert (
        registry.get("pods", "default", "p")["metadata"]["resourceVersion"]
        == stored["metadata"]["resourceVersion"]
    )
