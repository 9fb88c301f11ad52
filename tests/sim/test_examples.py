"""Each example in examples/ reproduces the outcome the upstream Taints and Tolerations page
documents for it."""

from __future__ import annotations

from .helpers import final_pod, records, run_example


def test_either_matching_toleration_lets_a_pod_onto_the_tainted_node() -> None:
    doc = run_example("two-matching-tolerations")
    assert {r["name"]: r["node"] for r in records(doc, "Scheduled")} == {
        "equal": "node-0",
        "exists": "node-0",
    }
    assert records(doc, "FailedScheduling", "none")[0]["message"].startswith(
        "0/1 nodes are available: 1 node(s) had untolerated taint(s)."
    )


def test_empty_key_exists_tolerates_everything_and_empty_effect_matches_every_effect() -> None:
    doc = run_example("special-cases")
    scheduled = {r["name"]: r["node"] for r in records(doc, "Scheduled")}
    assert scheduled["tolerates-everything"] == "mixed-0"
    assert scheduled["any-effect-of-key1"] == "key1only-0"
    # A key1 toleration does not cover the node's other taint.
    assert "key1-on-mixed" not in scheduled


def test_three_taints_keep_a_new_pod_off_but_leave_the_running_pod_alone() -> None:
    doc = run_example("multiple-taints")
    assert records(doc, "FailedScheduling", "new-pod")
    assert not records(doc, "Scheduled", "new-pod")
    assert not records(doc, "TaintManagerEviction", "already-running")
    running = final_pod(doc, "already-running")
    assert running is not None and running["spec"]["nodeName"] == "node-0"


def test_toleration_seconds_evicts_exactly_an_hour_after_the_taint() -> None:
    doc = run_example("toleration-seconds")
    (taint,) = records(doc, "TaintAdded", "node-0")[-1:]
    assert taint["message"] == "key1=value1:NoExecute"
    marking = records(doc, "TaintManagerEviction", "tolerates-an-hour")
    assert [r["message"] for r in marking] == ["Marking for deletion Pod default/tolerates-an-hour"]
    assert marking[0]["t"] - taint["t"] == 3600.0
    untolerated = records(doc, "TaintManagerEviction", "no-toleration")
    assert untolerated[0]["t"] == taint["t"]
    assert doc["summary"]["evicted"] == 2


def test_dedicated_nodes_take_only_the_group_and_the_group_only_them() -> None:
    doc = run_example("dedicated-nodes")
    for record in records(doc, "Scheduled"):
        on_dedicated = record["node"].startswith("dedicated-")
        assert on_dedicated == record["name"].startswith("group-"), record
    assert doc["summary"]["scheduled"] == 8


def test_extended_resource_toleration_lets_gpu_pods_onto_gpu_nodes_only() -> None:
    doc = run_example("special-hardware")
    scheduled = {r["name"]: r["node"] for r in records(doc, "Scheduled")}
    assert scheduled == {"trainer": "gpu-0", "web": "cpu-0"}
    trainer = final_pod(doc, "trainer")
    assert trainer is not None
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in trainer["spec"][
        "tolerations"
    ]


def test_default_300s_toleration_evicts_and_6000s_unreachable_toleration_stays() -> None:
    doc = run_example("taint-based-eviction")
    (unreachable,) = [r for r in records(doc, "TaintAdded", "node-0") if r["message"].endswith("NoExecute")]
    assert unreachable["message"] == "node.kubernetes.io/unreachable:NoExecute"
    # Stopped at 60 s; Ready goes Unknown after the 50 s grace period (seen at the next 5 s pass);
    # the NoExecute taint follows one monitor pass later.
    assert 110.0 <= unreachable["t"] <= 120.0
    (marking,) = records(doc, "TaintManagerEviction", "default-tolerations")
    assert marking["t"] - unreachable["t"] == 300.0
    assert not records(doc, "TaintManagerEviction", "long-unreachable")
    assert final_pod(doc, "long-unreachable") is not None


def test_daemonset_pods_survive_not_ready_and_unreachable_nodes() -> None:
    doc = run_example("daemonset-tolerations")
    evicted = {r["name"] for r in records(doc, "TaintManagerEviction")}
    assert evicted == {"regular"}
    agents = [p for p in doc["final"]["pods"] if p["metadata"]["name"].startswith("agent-")]
    assert sorted(p["spec"]["nodeName"] for p in agents) == ["node-0", "node-1", "node-2", "node-3"]


def test_memory_pressure_keeps_best_effort_pods_off_and_admits_burstable_ones() -> None:
    doc = run_example("memory-pressure")
    assert (
        records(doc, "TaintAdded", "node-0")[-1]["message"] == "node.kubernetes.io/memory-pressure:NoSchedule"
    )
    assert records(doc, "FailedScheduling", "best-effort")
    assert [r["node"] for r in records(doc, "Scheduled", "burstable")] == ["node-0"]
