"""DaemonSet rolling updates as pkg/controller/daemon/update.go: update_test.go's
TestGetUnavailableNumbers table (updatedDesiredNodeCounts) and its TestDaemonSetUpdatesPods*
flows, driven through the controller and the memory store."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.workload_builders import daemonset, make_env, node, pod, pods_of
from kubetaint.clock.base import format_time
from kubetaint.controllers.daemonset import DaemonSetController, update
from kubetaint.controllers.daemonset.placement import target_node_name

NS = "kube-system"
JSON = dict[str, Any]


def unavailable(value: int | str) -> JSON:
    return {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": value}}


def surge(value: int | str) -> JSON:
    return {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": value}}


def ready_pod(name: str, node_name: str, **meta: Any) -> JSON:
    return pod(name, labels={"app": "agent"}, node_name=node_name, namespace=NS, **meta)


@pytest.mark.parametrize(
    ("nodes", "strategy", "by_node", "max_surge", "max_unavailable", "empty_nodes"),
    [
        pytest.param(0, unavailable(0), {}, 0, 0, 0, id="No nodes"),
        pytest.param(
            2,
            unavailable(1),
            {"node-0": [ready_pod("pod-0", "node-0")], "node-1": [ready_pod("pod-1", "node-1")]},
            0,
            1,
            0,
            id="Two nodes with ready pods",
        ),
        pytest.param(
            2,
            unavailable(0),
            {"node-0": [ready_pod("pod-0", "node-0")]},
            0,
            1,
            1,
            id="Two nodes, one node without pods",
        ),
        pytest.param(
            2,
            surge(0),
            {"node-0": [ready_pod("pod-0", "node-0")]},
            0,
            1,
            1,
            id="Two nodes, one node without pods, surge",
        ),
        pytest.param(
            2,
            unavailable("50%"),
            {"node-0": [ready_pod("pod-0", "node-0")], "node-1": [ready_pod("pod-1", "node-1")]},
            0,
            1,
            0,
            id="Two nodes with pods, MaxUnavailable in percents",
        ),
        pytest.param(
            2,
            surge("50%"),
            {"node-0": [ready_pod("pod-0", "node-0")], "node-1": [ready_pod("pod-1", "node-1")]},
            1,
            0,
            0,
            id="Two nodes with pods, MaxUnavailable in percents, surge",
        ),
        pytest.param(
            2,
            surge("100%"),
            {"node-0": [ready_pod("pod-0", "node-0")], "node-1": [ready_pod("pod-1", "node-1")]},
            2,
            0,
            0,
            id="Two nodes with pods, MaxUnavailable is 100%, surge",
        ),
        pytest.param(
            3,
            unavailable("50%"),
            {
                "node-0": [ready_pod("pod-0", "node-0")],
                "node-1": [ready_pod("pod-1", "node-1", deletionTimestamp="2026-01-01T00:00:00Z")],
            },
            0,
            2,
            1,
            id="Two nodes with pods, MaxUnavailable in percents, pod terminating",
        ),
    ],
)
def test_get_unavailable_numbers(nodes, strategy, by_node, max_surge, max_unavailable, empty_nodes) -> None:
    ds = daemonset("x")
    ds["spec"]["updateStrategy"] = strategy
    should_run = {f"node-{i}": True for i in range(nodes)}
    grouped = {name: list(pods) for name, pods in by_node.items()}
    counts = update.updated_desired_node_counts(ds, should_run, grouped)
    assert counts[:2] == (max_surge, max_unavailable)
    assert sum(1 for pods in grouped.values() if not pods) == empty_nodes


# the flows ----------------------------------------------------------------------------------------


def start(nodes: int = 5):
    clock, store, rng = make_env()
    DaemonSetController(store, clock, rng).start()
    for i in range(nodes):
        store.create("nodes", node(f"node-{i}"))
    store.create("daemonsets.apps", daemonset("foo"))
    clock.run_pending()
    return clock, store


def set_ready(store, clock, ready: bool, which=lambda p: True) -> int:
    """Bind each matching daemon pod to its node, Running with Ready `ready` since now."""
    count = 0
    for p in pods_of(store, NS):
        if p["metadata"].get("deletionTimestamp") or not which(p):
            continue
        cond = {"type": "Ready", "status": "True" if ready else "False"}
        cond["lastTransitionTime"] = format_time(clock.now())
        spec = {**p["spec"], "nodeName": target_node_name(p)}
        store.update("pods", {**p, "spec": spec, "status": {"phase": "Running", "conditions": [cond]}})
        count += 1
    return count


def change_template(store, strategy: JSON, image: str = "foo2/bar2", **spec: Any) -> str:
    ds = store.get("daemonsets.apps", NS, "foo")
    template = ds["spec"]["template"]
    containers = [{**template["spec"]["containers"][0], "image": image}]
    new_spec = {
        **ds["spec"],
        "updateStrategy": strategy,
        "template": {**template, "spec": {**template["spec"], "containers": containers}},
        **spec,
    }
    store.update("daemonsets.apps", {**ds, "spec": new_spec})
    return image


def images(store) -> list[tuple[str, str]]:
    """(node, image) of each daemon pod not being deleted, by node then image."""
    return sorted(
        (target_node_name(p) or "", p["spec"]["containers"][0]["image"])
        for p in pods_of(store, NS)
        if not p["metadata"].get("deletionTimestamp")
    )


def count_images(store, image: str) -> int:
    return sum(1 for _node, img in images(store) if img == image)


def status_of(store) -> JSON:
    return store.get("daemonsets.apps", NS, "foo")["status"]


@pytest.mark.parametrize(
    ("max_unavailable", "rounds"),
    [
        pytest.param(2, [2, 4, 5], id="TestDaemonSetUpdatesPods: two at a time, then the last one"),
        pytest.param(3, [3, 5], id="maxUnavailable 3: three, then the last two"),
        pytest.param("40%", [2, 4, 5], id="maxUnavailable 40% of five nodes: two at a time"),
    ],
)
def test_rolling_update_replaces_max_unavailable_pods_per_round(max_unavailable, rounds) -> None:
    clock, store = start()
    set_ready(store, clock, True)
    clock.run_pending()
    new = change_template(store, unavailable(max_unavailable))
    for expected in rounds:
        clock.run_pending()
        assert count_images(store, new) == expected
        assert len(images(store)) == 5  # one pod per node all along
        set_ready(store, clock, True, lambda p: p["spec"]["containers"][0]["image"] == new)
    clock.run_pending()
    assert count_images(store, new) == 5
    status = status_of(store)
    assert (
        status["updatedNumberScheduled"],
        status["numberAvailable"],
        status["desiredNumberScheduled"],
    ) == (
        5,
        5,
        5,
    )
    assert status["observedGeneration"] == store.get("daemonsets.apps", NS, "foo")["metadata"]["generation"]


def test_new_pods_not_ready_stop_the_update_at_max_unavailable() -> None:
    """TestDaemonSetUpdatesWhenNewPosIsNotReady: the new pods never turn ready, nothing more goes."""
    clock, store = start()
    set_ready(store, clock, True)
    new = change_template(store, unavailable(3))
    clock.run_pending()
    clock.advance(600)
    assert count_images(store, new) == 3
    assert len(images(store)) == 5


def test_all_old_pods_not_ready_are_all_replaced_at_once() -> None:
    """TestDaemonSetUpdatesAllOldPodsNotReady: unavailable old pods are replaced regardless of
    maxUnavailable."""
    clock, store = start()
    new = change_template(store, unavailable(3))
    clock.run_pending()
    assert count_images(store, new) == 5


def test_no_template_change_replaces_nothing() -> None:
    """TestDaemonSetUpdatesNoTemplateChanged."""
    clock, store = start()
    set_ready(store, clock, True)
    ds = store.get("daemonsets.apps", NS, "foo")
    before = sorted(p["metadata"]["name"] for p in pods_of(store, NS))
    store.update("daemonsets.apps", {**ds, "spec": {**ds["spec"], "updateStrategy": unavailable(3)}})
    clock.run_pending()
    assert sorted(p["metadata"]["name"] for p in pods_of(store, NS)) == before


def test_max_surge_creates_new_pods_beside_old_ones_and_deletes_old_ones_once_new_are_ready() -> None:
    """TestDaemonSetUpdatesPodsWithMaxSurge: two surge pods at a time; an old pod goes when the
    new pod on its node is available."""
    clock, store = start()
    set_ready(store, clock, True)
    new = change_template(store, surge(2))
    clock.run_pending()
    assert count_images(store, new) == 2
    assert len(images(store)) == 7  # two nodes run an old and a new pod
    for expected in (4, 5):
        set_ready(store, clock, True, lambda p: p["spec"]["containers"][0]["image"] == new)
        clock.run_pending()
        assert count_images(store, new) == expected
    set_ready(store, clock, True, lambda p: p["spec"]["containers"][0]["image"] == new)
    clock.run_pending()
    assert images(store) == [(f"node-{i}", new) for i in range(5)]
    assert status_of(store)["updatedNumberScheduled"] == 5


def test_surge_pods_wait_for_min_ready_seconds_before_the_old_pods_go() -> None:
    clock, store = start(2)
    set_ready(store, clock, True)
    clock.advance(5)  # the new pods are younger than the old ones
    new = change_template(store, surge(2), minReadySeconds=15)
    clock.run_pending()
    set_ready(store, clock, True, lambda p: p["spec"]["containers"][0]["image"] == new)
    clock.run_pending()
    assert len(images(store)) == 4  # ready, not yet available: the old pods stay
    assert status_of(store)["updatedNumberScheduled"] == 0  # the oldest pod of each node is old
    clock.advance(16)
    assert images(store) == [("node-0", new), ("node-1", new)]


def test_surge_pod_carries_the_daemonset_tolerations_and_node_affinity() -> None:
    """A surge pod is a daemon pod: the template's tolerations plus the controller's, pinned to
    the node of the old pod it replaces."""
    clock, store = start(1)
    set_ready(store, clock, True)
    gpu = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}
    ds = store.get("daemonsets.apps", NS, "foo")
    template = ds["spec"]["template"]
    spec = {**template["spec"], "tolerations": [gpu]}
    store.update(
        "daemonsets.apps",
        {**ds, "spec": {**ds["spec"], "updateStrategy": surge(1), "template": {**template, "spec": spec}}},
    )
    clock.run_pending()
    pods = [p for p in pods_of(store, NS) if (p["spec"].get("tolerations") or [])[:1] == [gpu]]
    assert len(pods) == 1 and len(pods_of(store, NS)) == 2
    tolerations = pods[0]["spec"]["tolerations"]
    assert {t["key"] for t in tolerations} >= {"gpu", "node.kubernetes.io/unreachable"}
    assert target_node_name(pods[0]) == "node-0"


def test_on_delete_replaces_a_pod_only_once_it_is_deleted() -> None:
    clock, store = start(2)
    set_ready(store, clock, True)
    new = change_template(store, {"type": "OnDelete"})
    clock.run_pending()
    assert count_images(store, new) == 0
    victim = next(p for p in pods_of(store, NS) if target_node_name(p) == "node-0")
    store.delete("pods", NS, victim["metadata"]["name"])
    clock.run_pending()
    assert images(store) == [("node-0", new), ("node-1", "nginx")]
