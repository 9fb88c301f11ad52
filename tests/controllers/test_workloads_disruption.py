"""PodDisruptionBudget status: disruptionsAllowed tables for integer and percentage minAvailable and
maxUnavailable (facts from upstream disruption_test.go), controller scale lookups, failures."""

from __future__ import annotations

import pytest

from controllers.workload_builders import events, make_env, owner_ref, pod, replicaset
from kubetaint.controllers.disruption import DisruptionController
from kubetaint.controllers.disruption.budget import (
    BudgetError,
    desired_healthy,
    disruptions_allowed,
    scaled_value,
)

PDB = "poddisruptionbudgets.policy"


def pdb(name: str = "pdb", **spec) -> dict:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }


def start():
    clock, store, _ = make_env()
    DisruptionController(store, clock).start()
    return clock, store


def status(store, name: str = "pdb") -> dict:
    return store.get(PDB, "default", name)["status"]


def summary(st: dict) -> tuple[int, int, int, int]:
    return st["currentHealthy"], st["desiredHealthy"], st["expectedPods"], st["disruptionsAllowed"]


@pytest.mark.parametrize(
    ("value", "total", "expected"),
    [
        pytest.param(3, 10, 3, id="integers are taken as they are"),
        pytest.param("28%", 4, 2, id="percentages round up: 28% of 4 is 1.12 -> 2"),
        pytest.param("50%", 3, 2, id="50% of 3 rounds up to 2"),
        pytest.param("100%", 7, 7, id="100% is the total"),
        pytest.param("0%", 7, 0, id="0% is nothing"),
    ],
)
def test_scaled_value(value, total, expected) -> None:
    assert scaled_value(value, total) == expected


def test_scaled_value_rejects_non_percentages() -> None:
    with pytest.raises(BudgetError, match="string is not a percentage"):
        scaled_value("3", 10)


@pytest.mark.parametrize(
    ("min_available", "max_unavailable", "scale", "pods", "healthy", "expected"),
    [
        pytest.param(3, None, 0, 3, 3, (3, 3, 0), id="minAvailable 3 of 3 healthy allows none"),
        pytest.param(2, None, 0, 3, 3, (3, 2, 1), id="minAvailable 2 of 3 healthy allows one"),
        pytest.param(2, None, 0, 3, 1, (3, 2, 0), id="fewer healthy than desired allows none"),
        pytest.param(None, 1, 3, 3, 3, (3, 2, 1), id="maxUnavailable 1 of scale 3 allows one"),
        pytest.param(None, 5, 3, 3, 3, (3, 0, 3), id="maxUnavailable above scale floors desired at 0"),
        pytest.param("28%", None, 4, 4, 4, (4, 2, 2), id="minAvailable 28% of 4 desires 2"),
        pytest.param(None, "25%", 10, 10, 10, (10, 7, 3), id="maxUnavailable 25% of 10 rounds up to 3"),
        pytest.param(1, None, 0, 0, 0, (0, 1, 0), id="no pods allows nothing"),
    ],
)
def test_budget_arithmetic(min_available, max_unavailable, scale, pods, healthy, expected) -> None:
    exp, desired = desired_healthy(min_available, max_unavailable, scale, pods)
    assert (exp, desired, disruptions_allowed(healthy, desired, exp)) == expected


def create_ready_pods(store, count: int, owner: dict | None = None, ready: int | None = None) -> None:
    for i in range(count):
        store.create("pods", pod(f"web-{i}", owner=owner, node_name="n1", ready=ready is None or i < ready))


def test_integer_min_available_counts_selected_pods() -> None:
    clock, store = start()
    store.create(PDB, pdb(minAvailable=2))
    create_ready_pods(store, 3)
    clock.run_pending()
    st = status(store)
    assert summary(st) == (3, 2, 3, 1)
    [cond] = st["conditions"]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
        "DisruptionAllowed",
        "True",
        "SufficientPods",
        "",
    )
    assert st["observedGeneration"] == 1


def test_losing_a_ready_pod_flips_the_condition() -> None:
    clock, store = start()
    store.create(PDB, pdb(minAvailable=3))
    create_ready_pods(store, 3)
    clock.run_pending()
    assert status(store)["conditions"][0]["reason"] == "InsufficientPods"
    clock.advance(10)
    store.create("pods", pod("extra", node_name="n1"))
    clock.run_pending()
    st = status(store)
    assert summary(st) == (4, 3, 4, 1)
    assert st["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:10Z"


def test_percentage_uses_the_replicaset_scale() -> None:
    clock, store = start()
    rs = store.create("replicasets.apps", replicaset("web", 4))
    store.create(PDB, pdb(minAvailable="50%"))
    create_ready_pods(store, 3, owner_ref(rs, "ReplicaSet"))
    clock.run_pending()
    assert summary(status(store)) == (3, 2, 4, 1)


def test_max_unavailable_uses_the_deployment_scale_through_its_replicaset() -> None:
    clock, store = start()
    dep = store.create(
        "deployments.apps",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 5},
        },
    )
    rs_body = replicaset("web-abc", 3)
    rs_body["metadata"]["ownerReferences"] = [owner_ref(dep, "Deployment")]
    rs = store.create("replicasets.apps", rs_body)
    store.create(PDB, pdb(maxUnavailable=1))
    create_ready_pods(store, 3, owner_ref(rs, "ReplicaSet"))
    clock.run_pending()
    assert summary(status(store)) == (3, 4, 5, 0)


def test_daemonset_pods_with_max_unavailable_fail_safe() -> None:
    clock, store = start()
    ds_ref = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "name": "agent",
        "uid": "u-ds",
        "controller": True,
    }
    store.create(PDB, pdb(maxUnavailable=1))
    create_ready_pods(store, 2, ds_ref)
    clock.run_pending()
    st = status(store)
    assert st["disruptionsAllowed"] == 0
    [cond] = st["conditions"]
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "False",
        "SyncFailed",
        "daemonsets.apps does not implement the scale subresource",
    )
    event = events(store, "CalculateExpectedPodCountFailed")[0]
    assert event["type"] == "Warning"
    assert event["message"] == (
        "Failed to calculate the number of expected pods: daemonsets.apps does not implement the scale subresource"
    )


def test_pod_whose_controller_is_gone_fails_safe() -> None:
    clock, store = start()
    ghost = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "gone",
        "uid": "u-gone",
        "controller": True,
    }
    store.create(PDB, pdb(minAvailable="50%"))
    create_ready_pods(store, 1, ghost)
    clock.run_pending()
    assert status(store)["conditions"][0]["message"] == 'found no controllers for pod "web-0"'


def test_no_matching_pods_records_an_event_and_allows_nothing() -> None:
    clock, store = start()
    store.create(PDB, pdb(minAvailable=1))
    clock.run_pending()
    assert summary(status(store)) == (0, 1, 0, 0)
    assert events(store, "NoPods")[0]["message"] == "No matching pods found"


def test_terminating_and_not_ready_pods_are_not_healthy() -> None:
    clock, store = start()
    store.create(PDB, pdb(minAvailable=1))
    create_ready_pods(store, 3, ready=2)
    p = store.get("pods", "default", "web-0")
    store.update("pods", {**p, "metadata": {**p["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}})
    clock.run_pending()
    assert summary(status(store)) == (1, 1, 3, 0)


def test_disrupted_pods_within_the_timeout_are_not_healthy_and_expire_after_two_minutes() -> None:
    clock, store = start()
    body = pdb(minAvailable=1)
    create_ready_pods(store, 3)
    created = store.create(PDB, body)
    store.update(PDB, {**created, "status": {"disruptedPods": {"web-1": "2026-01-01T00:00:00Z"}}})
    clock.run_pending()
    st = status(store)
    assert summary(st) == (2, 1, 3, 1) and st["disruptedPods"] == {"web-1": "2026-01-01T00:00:00Z"}
    clock.advance(121)
    st = status(store)
    assert summary(st) == (3, 1, 3, 2) and "disruptedPods" not in st
    assert (
        events(store, "NotDeleted")[0]["message"]
        == "Pod was expected by PDB default/default to be deleted but it wasn't"
    )
