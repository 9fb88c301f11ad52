"""The pod strategy's PrepareForCreate on every create through the registry (a component's create,
a run of creates, the reference mode's one by one), and its absence where the registry restores
declared state (`restore=True`: a scenario or snapshot being loaded)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubetaint.admission import AdmissionChain
from kubetaint.clock import VirtualClock
from kubetaint.clock.base import format_time
from kubetaint.registry import Registry
from kubetaint.registry.defaulting import pod_prepared_for_create
from kubetaint.store.interface import Create
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]

#: What a kubelet posted for a running pod: a scenario declares such pods as they are.
RUNNING: JSON = {"phase": "Running", "qosClass": "BestEffort", "podIP": "10.0.0.7"}


def make_registry() -> tuple[Registry, VirtualClock]:
    clock = VirtualClock()
    store = MemoryStore(clock)
    store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    return Registry(store, admission=AdmissionChain(), rng=random.Random(7), clock=clock), clock


def pod(name: str, *, status: JSON | None = None, **spec: Any) -> JSON:
    obj: JSON = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause"}], **spec},
    }
    if status is not None:
        obj["status"] = status
    return obj


def guaranteed() -> JSON:
    limits = {"cpu": "100m", "memory": "64Mi"}
    return {"containers": [{"name": "c", "image": "pause", "resources": {"limits": limits}}]}


@pytest.mark.parametrize(
    ("spec", "qos"),
    [
        pytest.param({}, "BestEffort", id="a pod without requests is BestEffort"),
        pytest.param(guaranteed(), "Guaranteed", id="limits alone default the requests: Guaranteed"),
        pytest.param(
            {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1"}}}]},
            "Burstable",
            id="requests without limits are Burstable",
        ),
    ],
)
def test_a_created_pod_starts_pending_with_its_qos_class(spec: JSON, qos: str) -> None:
    registry, _ = make_registry()
    created = registry.create("pods", pod("p", **spec))
    assert created["status"] == {"phase": "Pending", "qosClass": qos}
    assert created["metadata"]["generation"] == 1


def test_a_created_pod_loses_the_status_its_creator_wrote() -> None:
    registry, _ = make_registry()
    created = registry.create("pods", pod("p", status={"phase": "Running", "podIP": "10.0.0.7"}))
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


def test_a_gated_pod_starts_with_podscheduled_false_schedulinggated() -> None:
    registry, clock = make_registry()
    created = registry.create("pods", pod("p", schedulingGates=[{"name": "example.com/gate"}]))
    assert created["status"]["conditions"] == [
        {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": format_time(clock.now()),
            "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
        }
    ]


@pytest.mark.parametrize("count", [pytest.param(1, id="one create"), pytest.param(3, id="a run of creates")])
def test_a_commit_of_pod_creates_prepares_each_pod(count: int) -> None:
    registry, _ = make_registry()
    results = registry.commit([Create("pods", pod(f"p{i}", status=RUNNING)) for i in range(count)])
    assert [r["status"] for r in results] == [{"phase": "Pending", "qosClass": "BestEffort"}] * count  # type: ignore[index]


@pytest.mark.parametrize("count", [pytest.param(1, id="one pod"), pytest.param(3, id="a run of pods")])
def test_restored_pods_keep_the_status_they_declare(count: int) -> None:
    registry, _ = make_registry()
    results = registry.commit(
        [Create("pods", pod(f"p{i}", status=RUNNING)) for i in range(count)], restore=True
    )
    assert [r["status"] for r in results] == [RUNNING] * count  # type: ignore[index]


def test_a_restored_pod_without_status_stays_without_one() -> None:
    registry, _ = make_registry()
    assert "status" not in registry.create("pods", pod("p"), restore=True)


def test_a_requested_qos_class_is_kept_as_getpodqos_reads_it_before_the_reset() -> None:
    assert pod_prepared_for_create(pod("p", status={"qosClass": "Guaranteed"}))["status"] == {
        "phase": "Pending",
        "qosClass": "Guaranteed",
    }


def test_a_malformed_quantity_leaves_the_qos_class_to_validation() -> None:
    spec = {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "lots"}}}]}
    assert pod_prepared_for_create(pod("p", **spec))["status"] == {"phase": "Pending"}
