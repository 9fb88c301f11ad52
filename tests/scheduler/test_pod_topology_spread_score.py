"""PodTopologySpread PreScore/Score/NormalizeScore, ported from upstream's
podtopologyspread/scoring_test.go (TestPodTopologySpreadScore) as data. The system-defaulting
case is taken here with a ReplicaSet's selector (with a Service's, as upstream, in
test_default_selector.py)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.pod_affinity_builders import expr, make_node, make_pod, scheduler_with, scores

PLUGIN = "PodTopologySpread"
HOST = "kubernetes.io/hostname"
FOO = {"foo": ""}
FOO_SELECTOR = {"matchExpressions": [expr("foo", "Exists")]}


def soft(max_skew: int, key: str, selector: dict[str, Any] | None = FOO_SELECTOR) -> dict[str, Any]:
    out: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway"}
    if selector is not None:
        out["labelSelector"] = selector
    return out


def host(name: str, **labels: str) -> dict[str, Any]:
    return make_node(name, {HOST: name, **labels})


def pods_on(spread: dict[str, int]) -> list[dict[str, Any]]:
    return [make_pod(node=node, labels=FOO) for node, count in spread.items() for _ in range(count)]


ABCD = [host("node-a"), host("node-b"), host("node-c"), host("node-d")]

CASES = [
    pytest.param(
        [soft(1, HOST)],
        [],
        [host("node-a"), host("node-b")],
        [],
        [100, 100],
        id="one constraint on node, no existing pods",
    ),
    pytest.param(
        [soft(1, HOST)],
        pods_on({"node-a": 2, "node-b": 1}),
        [host("node-a")],
        [host("node-b")],
        [100],
        id="one constraint on node, only one candidate node",
    ),
    pytest.param(
        [soft(1, HOST)],
        pods_on({"node-a": 1, "node-b": 1}),
        [host("node-a"), host("node-b")],
        [],
        [100, 100],
        id="one constraint on node, the same number of matching pods everywhere",
    ),
    pytest.param(
        [soft(1, HOST)],
        pods_on({"node-a": 2, "node-b": 1, "node-d": 3}),
        ABCD,
        [],
        [20, 60, 100, 0],
        id="one constraint on node, all 4 nodes candidates (2/1/0/3)",
    ),
    pytest.param(
        [soft(1, HOST, None)],
        pods_on({"node-a": 2, "node-b": 1, "node-d": 3}),
        ABCD,
        [],
        [100, 100, 100, 100],
        id="one constraint on node, null selector",
    ),
    pytest.param(
        [soft(2, HOST)],
        pods_on({"node-a": 2, "node-b": 1, "node-d": 3}),
        ABCD,
        [],
        [33, 66, 100, 16],
        id="one constraint on node, maxSkew 2",
    ),
    pytest.param(
        [soft(3, HOST)],
        pods_on({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}),
        ABCD,
        [],
        [44, 66, 77, 100],
        id="one constraint on node, maxSkew 3",
    ),
    pytest.param(
        [soft(1, HOST)],
        pods_on({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        [host("node-a"), host("node-b"), host("node-x")],
        [host("node-y")],
        [33, 83, 100],
        id="one constraint on node, 3 of 4 nodes candidates",
    ),
    pytest.param(
        [soft(1, HOST)],
        pods_on({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        [host("node-a"), make_node("node-b", {"n": "node-b"}), host("node-x")],
        [host("node-y")],
        [16, 0, 100],
        id="one constraint on node, a candidate without the topology key",
    ),
    pytest.param(
        [soft(1, "zone")],
        pods_on({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        [host("node-a", zone="zone1"), host("node-b", zone="zone1"), host("node-x", zone="zone2")],
        [host("node-y", zone="zone2")],
        [75, 75, 100],
        id="one constraint on zone, 3 of 4 nodes candidates",
    ),
]


@pytest.mark.parametrize(("constraints", "existing", "candidates", "failed", "want"), CASES)
def test_pod_topology_spread_score(
    constraints: list[Any], existing: list[Any], candidates: list[Any], failed: list[Any], want: list[int]
) -> None:
    sched = scheduler_with(candidates + failed, existing)
    names = [n["metadata"]["name"] for n in candidates]
    got = scores(sched, PLUGIN, make_pod(labels=FOO, spread=constraints), names)
    assert [got[n] for n in names] == want


def test_system_defaulting_spreads_a_replica_sets_pods_over_hostnames() -> None:
    """Upstream's "system defaulting, nodes don't have zone, pods match service", with the
    selector coming from the pod's controlling ReplicaSet."""
    sched = scheduler_with(ABCD, pods_on({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}))
    sched.add_replica_set(
        {"metadata": {"name": "rs", "namespace": "default"}, "spec": {"selector": FOO_SELECTOR}}
    )
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}
    got = scores(sched, PLUGIN, make_pod(labels=FOO, owner=owner))
    assert got == {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}


def test_system_defaulting_without_a_known_owner_is_skipped() -> None:
    sched = scheduler_with(ABCD, pods_on({"node-a": 4}))
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "ss", "uid": "u", "controller": True}
    assert scores(sched, PLUGIN, make_pod(labels=FOO, owner=owner)) == dict.fromkeys(
        ("node-a", "node-b", "node-c", "node-d"), 0
    )
