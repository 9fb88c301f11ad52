"""Snapshots: cleaning captured objects, the Scenario document, loading (Scenario, v1 List, bad
files) and StatefulSets (kept as objects, or rebuilt from an older snapshot's annotation)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubetaint.sim.simulation import Simulation
from kubetaint.sim.snapshot import (
    SNAPSHOT_ANNOTATION,
    SnapshotError,
    SnapshotInfo,
    build_snapshot,
    clean_object,
    from_list,
    load_snapshot,
    load_snapshot_document,
)
from kubetaint.sim.snapshot_run import run_to_start

CAPTURED = "2026-01-01T00:10:00Z"


def node(name: str, *, taints: list[dict[str, Any]] | None = None, ready: str = "True") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": "u-" + name, "resourceVersion": "7", "managedFields": [{}]},
        "spec": {"taints": taints or []},
        "status": {
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": ready}],
            "images": [{"names": ["big"]}],
        },
    }


def pod(
    name: str, node_name: str = "", *, owner: tuple[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "labels": {"app": "web"},
        "uid": "p-" + name,
    }
    if owner is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": "x", "controller": True}
        ]
    meta.update(extra.pop("meta", {}))
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": extra.pop("status", {"phase": "Running"}),
    }


@pytest.mark.parametrize(
    ("obj", "kept"),
    [
        pytest.param(pod("a", "n1"), True, id="a running pod is kept"),
        pytest.param(pod("a", "n1", status={"phase": "Succeeded"}), False, id="a finished pod is left out"),
        pytest.param(
            pod("a", "n1", meta={"deletionTimestamp": CAPTURED}), False, id="a terminating pod is left out"
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}},
            False,
            id="a system namespace is not duplicated",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}},
            True,
            id="a user namespace is kept",
        ),
        pytest.param(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "system-node-critical"},
                "value": 1,
            },
            False,
            id="a built-in priority class is not duplicated",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
            False,
            id="a kind the simulator does not hold is left out",
        ),
    ],
)
def test_clean_object_keeps_what_a_simulation_can_hold(obj: dict[str, Any], kept: bool) -> None:
    assert (clean_object(obj) is not None) is kept


def test_clean_object_drops_server_metadata_and_adopting_owners_but_keeps_taint_time() -> None:
    taint = {"key": "k", "value": "v", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}
    cleaned = clean_object(node("n1", taints=[taint]))
    assert cleaned is not None
    assert set(cleaned["metadata"]) == {"name"}
    assert cleaned["spec"]["taints"] == [taint]
    assert "images" not in cleaned["status"]
    rs_pod = clean_object(pod("a", "n1", owner=("ReplicaSet", "web")))
    sts_pod = clean_object(pod("s-0", "n1", owner=("StatefulSet", "s")))
    assert rs_pod is not None and "ownerReferences" not in rs_pod["metadata"]
    assert sts_pod is not None and sts_pod["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"


def test_build_snapshot_is_a_scenario_with_the_annotation_and_faults_for_unready_nodes() -> None:
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"replicas": 2},
    }
    lease = {
        "kind": "Lease",
        "metadata": {"name": "n1", "namespace": "kube-node-lease"},
        "spec": {"renewTime": CAPTURED},
    }
    doc = build_snapshot(
        [node("n1"), node("n2", ready="Unknown"), node("n3", ready="False"), sts, lease, pod("a", "n1")],
        SnapshotInfo(captured_at=CAPTURED, server_version="v1.35.0"),
    )
    assert (doc["apiVersion"], doc["kind"]) == ("kubetaint.dev/v1alpha1", "Scenario")
    info = json.loads(doc["metadata"]["annotations"][SNAPSHOT_ANNOTATION])
    assert info["capturedAt"] == CAPTURED and info["serverVersion"] == "v1.35.0" and info["version"] == 1
    assert info["leases"] == {"n1": CAPTURED}
    assert info["statefulSets"] == []
    assert doc["spec"]["events"] == [
        {"at": 0, "fault": "stop", "node": "n2"},
        {"at": 0, "fault": "not-ready", "node": "n3"},
    ]
    assert [o["kind"] for o in doc["spec"]["objects"]] == ["Node", "Node", "Node", "StatefulSet", "Pod"]


def test_a_snapshot_file_runs_as_a_scenario(tmp_path: Path) -> None:
    doc = build_snapshot([node("n1"), pod("a", "n1")], SnapshotInfo(captured_at=CAPTURED))
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(doc))
    scenario, info = load_snapshot(path)
    assert info.captured_at == CAPTURED
    sim = Simulation(scenario, until=60)
    sim.run_until(60)
    assert [(p["metadata"]["name"], p["spec"]["nodeName"]) for p in sim.objects("pods")] == [("a", "n1")]


def test_a_saved_kubectl_list_loads_as_a_snapshot(tmp_path: Path) -> None:
    items = [{k: v for k, v in node("n1").items()}, pod("a"), pod("b", "n1")]
    path = tmp_path / "list.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    scenario, info = load_snapshot(path)
    assert info.captured_at is None
    assert [o["metadata"]["name"] for o in scenario.objects] == ["n1", "a", "b"]
    assert from_list({"apiVersion": "v1", "kind": "List", "items": items})["kind"] == "Scenario"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            '{"apiVersion": "v1", "kind": "Pod"}',
            'not a scenario or snapshot: kind "Pod"',
            id="a single object is not a snapshot",
        ),
        pytest.param("[1, 2]", "not a scenario or snapshot", id="a list of numbers is not a snapshot"),
        pytest.param("{: nope", "invalid JSON", id="broken text names the problem"),
        pytest.param(
            '{"apiVersion": "v1", "kind": "List", "items": 3}', "items list", id="a List without items"
        ),
        pytest.param(
            json.dumps(
                {
                    "apiVersion": "kubetaint.dev/v1alpha1",
                    "kind": "Scenario",
                    "metadata": {"annotations": {SNAPSHOT_ANNOTATION: '{"version": 9}'}},
                }
            ),
            "unsupported snapshot version 9",
            id="a snapshot from a newer format version is refused",
        ),
    ],
)
def test_files_that_are_not_snapshots_get_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(SnapshotError) as info:
        load_snapshot(path)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match=r"nope\.json"):
        load_snapshot(tmp_path / "nope.json")


def _sts_pod(name: str, node_name: str, revision: str) -> dict[str, Any]:
    return pod(
        name,
        node_name,
        owner=("StatefulSet", "db"),
        meta={"labels": {"app": "db", "controller-revision-hash": revision}},
    )


def _pods_after_drain(doc: dict[str, Any]) -> dict[str, tuple[str | None, str]]:
    scenario, info = load_snapshot_document(doc)
    sim = Simulation(scenario, until=600)
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in sim.objects("pods")}
    run_to_start(sim, info)
    sim.kubectl("drain n1 --force")
    sim.run_until(60)
    return {
        p["metadata"]["name"]: (
            p["spec"].get("nodeName"),
            "kept" if uids.get(p["metadata"]["name"]) == p["metadata"]["uid"] else "recreated",
        )
        for p in sim.objects("pods")
    }


def test_a_snapshot_statefulset_owns_its_pods_and_recreates_a_drained_one_under_its_name() -> None:
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default", "uid": "x"},
        "spec": {
            "replicas": 2,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "db"}},
            "serviceName": "db",
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
        "status": {"updateRevision": "db-5f7c", "currentRevision": "db-5f7c"},
    }
    doc = build_snapshot(
        [node("n1"), node("n2"), sts, _sts_pod("db-0", "n1", "db-5f7c"), _sts_pod("db-1", "n2", "db-5f7c")],
        SnapshotInfo(captured_at=CAPTURED),
    )
    # db-1 (on n2) is adopted and kept, not rolled; db-0 comes back under its name on n2
    assert _pods_after_drain(doc) == {"db-0": ("n2", "recreated"), "db-1": ("n2", "kept")}


def test_an_older_snapshot_with_statefulsets_only_in_its_annotation_still_recreates_their_pods() -> None:
    doc = build_snapshot(
        [node("n1"), node("n2"), _sts_pod("db-0", "n1", "db-1a"), _sts_pod("db-7", "n1", "db-1a")],
        SnapshotInfo(captured_at=CAPTURED),
    )
    annotation = json.loads(doc["metadata"]["annotations"][SNAPSHOT_ANNOTATION])
    annotation["statefulSets"] = [{"namespace": "default", "name": "db", "replicas": 1}]
    doc["metadata"]["annotations"][SNAPSHOT_ANNOTATION] = json.dumps(annotation)
    # ordinal 7 is beyond replicas: scaled away, not recreated
    assert _pods_after_drain(doc) == {"db-0": ("n2", "recreated")}


def load_snapshot_from(doc: dict[str, Any]) -> Any:
    from kubetaint.sim.scenario import load_scenario
    from kubetaint.sim.snapshot import snapshot_info

    scenario = load_scenario(doc)
    return scenario, snapshot_info(scenario)


def test_a_multi_document_file_of_manifests_runs_as_a_saved_list(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: n1\n  containers: [{name: c, image: i}]\n"
    )
    scenario, info = load_snapshot(path)
    assert sorted(o["kind"] for o in scenario.objects) == ["Node", "Pod"]
    assert info.captured_at is None


def test_a_key_given_twice_in_a_saved_list_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text(
        '{"apiVersion": "v1", "kind": "List",\n "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "name": "b"}}]}'
    )
    with pytest.raises(SnapshotError) as err:
        load_snapshot(path)
    assert str(err.value) == f"{path}:2: items[0].metadata.name: duplicate field"
