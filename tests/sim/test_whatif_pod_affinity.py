"""whatif with the default profile's InterPodAffinity: a replacement keeps its ReplicaSet's
required pod anti-affinity (it avoids the node of its sibling even when that node scores best
otherwise)."""

from __future__ import annotations

from typing import Any

from kubetaint.sim.scenario import load_scenario
from kubetaint.sim.snapshot import SnapshotInfo, build_snapshot, snapshot_info
from kubetaint.sim.whatif import whatif
from kubetaint.sim.whatif_change import parse_change

ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
        ]
    }
}


def node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": "z1"},
        },
        "spec": {"taints": []},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def pod(
    name: str, node_name: str, app: str, *, cpu: str = "", affinity: dict[str, Any] | None = None
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "i"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: dict[str, Any] = {"nodeName": node_name, "containers": [container]}
    if affinity:
        spec["affinity"] = affinity
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
        "spec": spec,
        "status": {"phase": "Running"},
    }


def web_replica_set() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "i"}], "affinity": ANTI},
            },
        },
    }


def test_a_replacement_avoids_the_node_of_the_pod_its_anti_affinity_names() -> None:
    objects = [
        node("n1"),
        node("n2"),
        node("n3"),
        web_replica_set(),
        pod("web-a", "n1", "web", affinity=ANTI),
        pod("web-b", "n2", "web", affinity=ANTI),
        pod("hog", "n3", "hog", cpu="3"),  # n3 scores lowest for resources: n2 would win otherwise
    ]
    scenario = load_scenario(build_snapshot(objects, SnapshotInfo(captured_at="2026-01-01T00:10:00Z")))
    doc = whatif(
        scenario,
        snapshot_info(scenario),
        parse_change(["taint", "n1", "maintenance=true:NoExecute"]),
        duration=600.0,
    )
    (eviction,) = doc["evictions"]
    assert eviction["name"] == "web-a"
    assert eviction["replacement"]["node"] == "n3"
