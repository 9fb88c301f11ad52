"""whatif on snapshots: evictions at once and later, tolerating pods, replacements, Pending with
the untolerated taint, in-flight evictions continued from timeAdded, drains, cordons and faults."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.sim.scenario import load_scenario
from kubetaint.sim.snapshot import SnapshotInfo, build_snapshot, snapshot_info
from kubetaint.sim.whatif import whatif
from kubetaint.sim.whatif_change import WhatIfError, WhatIfUsageError, parse_change

CAPTURED = "2026-01-01T00:10:00Z"
WEB_TOLERATION = {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"}


def node(name: str, *, taints: list[dict[str, Any]] | None = None, zone: str = "z1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
        "spec": {"taints": taints or []},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def pod(
    name: str, node_name: str, *, tolerations: list[dict[str, Any]] | None = None, app: str = ""
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app or name}},
        "spec": {
            "nodeName": node_name,
            "tolerations": tolerations or [],
            "containers": [{"name": "c", "image": "i"}],
        },
        "status": {"phase": "Running"},
    }


def replica_set(
    name: str, replicas: int, *, tolerations: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"tolerations": tolerations or [], "containers": [{"name": "c", "image": "i"}]},
            },
        },
    }


def run(
    objects: list[dict[str, Any]],
    change: list[str],
    *,
    duration: float = 3600.0,
    captured: str | None = CAPTURED,
) -> dict[str, Any]:
    scenario = load_scenario(build_snapshot(objects, SnapshotInfo(captured_at=captured)))
    return whatif(scenario, snapshot_info(scenario), parse_change(change), duration=duration)


def names(entries: list[dict[str, Any]]) -> list[str]:
    return [e["name"] for e in entries]


def test_a_noexecute_taint_evicts_untolerating_pods_at_once_and_their_replicas_move() -> None:
    doc = run(
        [
            node("n1"),
            node("n2"),
            replica_set("web", 1),
            pod("web-a", "n1", app="web"),
            pod("calm", "n1", tolerations=[WEB_TOLERATION]),
        ],
        ["taint", "n1", "maintenance=true:NoExecute"],
    )
    assert names(doc["evictions"]) == ["web-a"]
    (eviction,) = doc["evictions"]
    assert (eviction["when"], eviction["t"], eviction["owner"]) == ("at once", 0.0, "ReplicaSet/web")
    assert eviction["replacement"]["node"] == "n2"
    assert names(doc["notEvicted"]) == ["calm"]
    assert doc["summary"]["evictedAtOnce"] == 1 and doc["inFlight"] == []


def test_toleration_seconds_evicts_later_and_says_when() -> None:
    bounded = [{**WEB_TOLERATION, "tolerationSeconds": 600}]
    doc = run(
        [node("n1"), node("n2"), pod("p", "n1", tolerations=bounded)],
        ["taint", "n1", "maintenance=true:NoExecute"],
    )
    assert [(e["name"], e["when"], e["t"], e["replacement"]) for e in doc["evictions"]] == [
        ("p", "later", 600.0, None)
    ]


def test_a_pod_tolerating_longer_than_the_run_is_not_evicted() -> None:
    bounded = [{**WEB_TOLERATION, "tolerationSeconds": 7200}]
    doc = run(
        [node("n1"), pod("p", "n1", tolerations=bounded)], ["taint", "n1", "maintenance=true:NoExecute"]
    )
    assert doc["evictions"] == [] and names(doc["notEvicted"]) == ["p"]


def test_a_replacement_with_nowhere_to_go_is_pending_with_the_untolerated_taint_and_a_fix() -> None:
    doc = run(
        [node("n1"), replica_set("web", 1), pod("web-a", "n1", app="web")],
        ["taint", "n1", "maintenance=true:NoExecute"],
    )
    (pending,) = doc["pending"]
    assert pending["owner"] == "ReplicaSet/web"
    assert pending["message"].startswith("0/1 nodes are available: 1 node(s) had untolerated taint(s)")
    (verdict,) = pending["nodes"]
    assert verdict["plugin"] == "TaintToleration"
    assert verdict["untoleratedTaint"] == {"key": "maintenance", "value": "true", "effect": "NoExecute"}
    assert verdict["suggestedToleration"] == {
        "key": "maintenance",
        "operator": "Equal",
        "value": "true",
        "effect": "NoExecute",
    }
    assert doc["summary"]["pending"] == 1 and doc["summary"]["pendingWithout"] == 0


@pytest.mark.parametrize(
    ("captured", "expected_t"),
    [
        pytest.param(
            CAPTURED,
            200.0,
            id="a taint added 400s before the capture evicts a 600s-tolerating pod after 200s",
        ),
        pytest.param("2026-01-01T01:00:00Z", 0.0, id="an overdue timer fires at once"),
        pytest.param(None, 600.0, id="without a capture time the timer starts at zero (as after a restart)"),
    ],
)
def test_in_flight_evictions_continue_from_time_added(captured: str | None, expected_t: float) -> None:
    old_taint = {"key": "old", "value": "x", "effect": "NoExecute", "timeAdded": "2026-01-01T00:03:20Z"}
    bounded = [{"key": "old", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600}]
    doc = run(
        [node("n1", taints=[old_taint]), node("n2"), pod("p", "n1", tolerations=bounded)],
        ["cordon", "n2"],
        captured=captured,
    )
    assert doc["evictions"] == []
    assert [(e["name"], e["t"], e["tWithout"]) for e in doc["inFlight"]] == [("p", expected_t, expected_t)]
    assert bool(doc["notes"]) is (captured is not None)


def test_drain_evicts_and_reports_a_pdb_that_blocks_it() -> None:
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
    }
    doc = run(
        [
            node("n1"),
            node("n2"),
            replica_set("web", 2),
            pdb,
            pod("web-a", "n1", app="web"),
            pod("web-b", "n2", app="web"),
        ],
        ["drain", "n1"],
        duration=60,
    )
    assert doc["evictions"] == []
    assert names(doc["pdbBlocked"]) == ["web-a"]
    assert "disruption budget" in doc["pdbBlocked"][0]["message"]


def test_cordon_evicts_nothing() -> None:
    doc = run([node("n1"), pod("p", "n1")], ["cordon", "n1"])
    assert doc["evictions"] == [] and names(doc["notEvicted"]) == ["p"]


def pending_pod(name: str) -> dict[str, Any]:
    pending = pod(name, "")
    del pending["spec"]["nodeName"]
    return {**pending, "status": {"phase": "Pending"}}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        pytest.param(["cordon", "a"], "1 node(s) were unschedulable", id="a cordon"),
        pytest.param(["drain", "a"], "1 node(s) were unschedulable", id="a drain"),
        pytest.param(["taint", "a", "x=y:NoSchedule"], "2 node(s) had untolerated taint(s)", id="a taint"),
    ],
)
def test_a_pod_pending_in_the_snapshot_is_scheduled_after_the_change(change: list[str], reason: str) -> None:
    closed = node("b", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
    doc = run([node("a"), closed, pending_pod("p")], change, duration=60)
    assert (doc["summary"]["pending"], doc["summary"]["pendingWithout"]) == (1, 0)
    assert names(doc["pending"]) == ["p"] and reason in doc["pending"][0]["message"]


def test_a_failed_zone_evicts_after_the_default_not_ready_grace() -> None:
    doc = run(
        [node("n1", zone="a"), node("n2", zone="b"), replica_set("web", 1), pod("web-a", "n1", app="web")],
        ["fail", "zone=a"],
        duration=900,
    )
    (eviction,) = doc["evictions"]
    assert eviction["when"] == "later" and eviction["t"] > 300
    assert eviction["replacement"]["node"] == "n2"


def test_daemonset_pods_on_a_tainted_node_are_reported() -> None:
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }
    doc = run(
        [node("n1"), ds, pod("agent-a", "n1", app="agent")], ["taint", "n1", "maintenance=true:NoExecute"]
    )
    (entry,) = doc["daemonSets"]
    assert (entry["name"], entry["daemonSet"]) == ("agent-a", "agent")
    assert entry["outcome"] in (
        "not recreated on the node (the DaemonSet no longer tolerates it)",
        "recreated, then deleted again",
    )


def test_same_inputs_give_the_same_document() -> None:
    objects = [
        node("n1"),
        node("n2"),
        replica_set("web", 2),
        pod("web-a", "n1", app="web"),
        pod("web-b", "n1", app="web"),
    ]
    change = ["taint", "n1", "maintenance=true:NoExecute"]
    assert run(objects, change) == run(objects, change)


def test_unknown_nodes_and_zones_are_refused() -> None:
    with pytest.raises(WhatIfError, match='nodes "nope" not found'):
        run([node("n1")], ["cordon", "nope"])
    with pytest.raises(WhatIfError, match="unknown zone 'z9'"):
        run([node("n1")], ["fail", "zone=z9"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param([], "unknown change", id="no change at all"),
        pytest.param(["reboot", "n1"], 'unknown change "reboot"', id="an unknown verb"),
        pytest.param(
            ["taint", "n1"], "needs at least one node and a taint spec", id="a taint without a spec"
        ),
        pytest.param(
            ["taint", "n1", "k=v:Sometimes"],
            "Sometimes",
            id="a taint spec with a bad effect gets kubectl's message",
        ),
        pytest.param(["drain"], "needs at least one node", id="drain without nodes"),
        pytest.param(
            ["fail", "zone=a", "n1"], "either node names or one zone", id="fail mixes nodes and a zone"
        ),
    ],
)
def test_malformed_changes_are_usage_errors(args: list[str], message: str) -> None:
    with pytest.raises(WhatIfUsageError, match=message):
        parse_change(args)


def test_kubectl_spelling_with_the_nodes_type_is_accepted() -> None:
    change = parse_change(["taint", "nodes", "n1", "n2", "k=v:NoExecute"])
    assert (change.nodes, change.spec) == (["n1", "n2"], "k=v:NoExecute")
