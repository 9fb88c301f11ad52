"""Snapshots with storage: a pending pod whose claim is bound to a local PersistentVolume on node-2
goes to node-2 (`explain` and `simulate` of the snapshot); with node-2 cordoned it stays pending
with VolumeBinding's reason (the binding survives the snapshot's new uids)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kubetaint.cli.main import cli
from kubetaint.sim.snapshot import SnapshotInfo, build_snapshot

JSON = dict[str, Any]


def _node(name: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


VOLUME = {
    "apiVersion": "v1",
    "kind": "PersistentVolume",
    "metadata": {"name": "pv-node-2", "uid": "old-pv-uid"},
    "spec": {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce"],
        "local": {"path": "/mnt"},
        "claimRef": {
            "kind": "PersistentVolumeClaim",
            "namespace": "default",
            "name": "data",
            "uid": "old-uid",
        },
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-2"]}
                        ]
                    }
                ]
            }
        },
    },
    "status": {"phase": "Bound"},
}
CLAIM = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {
        "name": "data",
        "namespace": "default",
        "uid": "old-uid",
        "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
    },
    "spec": {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "5Gi"}},
        "volumeName": "pv-node-2",
    },
    "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}},
}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "db", "namespace": "default"},
    "spec": {
        "containers": [{"name": "c", "image": "postgres"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
    },
}


def _snapshot(tmp_path: Path, cordoned: bool) -> Path:
    node_2 = _node("node-2")
    if cordoned:
        node_2["spec"] = {"unschedulable": True}
    doc = build_snapshot([_node("node-1"), node_2, VOLUME, CLAIM, POD], SnapshotInfo())
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(doc))
    return path


def test_explain_of_a_snapshot_places_the_pod_on_its_volumes_node(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["explain", str(_snapshot(tmp_path, False)), "-o", "json"])
    assert result.exit_code == 0, result.output
    (pod,) = json.loads(result.stdout)["pods"]
    assert pod["node"] == "node-2"
    nodes = {n["name"]: n for n in pod["nodes"]}
    assert nodes["node-1"]["filter"] == {
        "plugin": "VolumeBinding",
        "code": "UnschedulableAndUnresolvable",
        "reason": "node(s) didn't match PersistentVolume's node affinity",
    }


def test_simulate_of_a_snapshot_keeps_the_pod_off_other_nodes(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["simulate", str(_snapshot(tmp_path, True)), "-o", "json"])
    assert result.exit_code == 0, result.output
    (failed, *_) = [r for r in json.loads(result.stdout)["timeline"] if r["reason"] == "FailedScheduling"]
    assert failed["message"].startswith(
        "0/2 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, "
        "1 node(s) were unschedulable."
    ), failed["message"]
