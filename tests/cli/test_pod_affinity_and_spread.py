"""The default profile's InterPodAffinity and PodTopologySpread through `kubetaint explain` and
`kubetaint simulate`: a pod with required anti-affinity against a pod on `a1` is not placed on
`a1` and explain names InterPodAffinity's reason; a 3-zone spread places pods within maxSkew."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from kubetaint.cli.explain import explain_command
from kubetaint.cli.main import cli

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {kubernetes.io/hostname: a1, topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: b1, labels: {kubernetes.io/hostname: b1, topology.kubernetes.io/zone: b}}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: default, labels: {app: db}}
spec:
  nodeName: a1
  containers: [{name: c, image: postgres}]
---
apiVersion: v1
kind: Pod
metadata: {name: replica, namespace: default, labels: {app: db}}
spec:
  containers: [{name: c, image: postgres}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: db}}
        topologyKey: kubernetes.io/hostname
"""

ANTI_REASON = "node(s) didn't match pod anti-affinity rules"


def _explain(tmp_path: Path, text: str, *args: str) -> tuple[int, str]:
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    result = CliRunner().invoke(explain_command, ["-f", str(path), *args])
    return result.exit_code, result.stdout


def test_explain_keeps_a_pod_with_anti_affinity_off_the_node_of_the_pod_it_avoids(tmp_path: Path) -> None:
    code, out = _explain(tmp_path, CLUSTER)
    assert code == 0
    assert "Pod default/replica: Scheduled on b1" in out
    header = next(line for line in out.splitlines() if line.strip().startswith("NODE"))
    row = next(line for line in out.splitlines() if ANTI_REASON in line)
    assert row.index(ANTI_REASON) == header.index("InterPodAffinity"), (
        "the reason in InterPodAffinity's column"
    )


def test_explain_json_names_inter_pod_affinity_on_a1(tmp_path: Path) -> None:
    code, out = _explain(tmp_path, CLUSTER, "-o", "json")
    assert code == 0
    (report,) = json.loads(out)["pods"]
    assert report["node"] == "b1"
    a1 = next(n for n in report["nodes"] if n["name"] == "a1")
    assert a1["feasible"] is False
    assert a1["filter"] == {"plugin": "InterPodAffinity", "code": "Unschedulable", "reason": ANTI_REASON}


def test_explain_reports_unschedulable_when_every_node_holds_an_avoided_pod(tmp_path: Path) -> None:
    text = (
        CLUSTER
        + """
---
apiVersion: v1
kind: Pod
metadata: {name: db-2, namespace: default, labels: {app: db}}
spec:
  nodeName: b1
  containers: [{name: c, image: postgres}]
"""
    )
    code, out = _explain(tmp_path, text, "-o", "json")
    assert code == 0
    (report,) = json.loads(out)["pods"]
    assert report["result"] == "Unschedulable"
    # (what preemption adds after it is another matter)
    assert report["message"].startswith(f"0/2 nodes are available: 2 {ANTI_REASON}. preemption: ")


SPREAD_SCENARIO = """
apiVersion: kubetaint.dev/v1alpha1
kind: Scenario
metadata: {name: three-zone-spread}
spec:
  seed: 3
  until: 1m
  nodeGroups:
  - {name: node, count: 6, zones: [zone-a, zone-b, zone-c]}
  events:
  - at: 1s
    apply:
      apiVersion: apps/v1
      kind: ReplicaSet
      metadata: {name: web}
      spec:
        replicas: 10
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers: [{name: c, image: nginx}]
            topologySpreadConstraints:
            - maxSkew: 1
              topologyKey: topology.kubernetes.io/zone
              whenUnsatisfiable: DoNotSchedule
              labelSelector: {matchLabels: {app: web}}
"""


def test_simulate_spreads_a_replica_set_over_three_zones_within_max_skew(tmp_path: Path) -> None:
    path = tmp_path / "spread.yaml"
    path.write_text(SPREAD_SCENARIO)
    result = CliRunner().invoke(cli, ["simulate", str(path), "-o", "json"])
    assert result.exit_code == 0, result.stdout
    doc = json.loads(result.stdout)
    scheduled = [
        e for e in doc["timeline"] if e.get("reason") == "Scheduled" and e["name"].startswith("web-")
    ]
    assert len(scheduled) == 10
    # node-0..5 round robin over zone-a, zone-b, zone-c
    zone_of = {f"node-{i}": "abc"[i % 3] for i in range(6)}
    per_zone = Counter(zone_of[e["node"]] for e in scheduled)
    assert sorted(per_zone.values()) == [3, 3, 4]
