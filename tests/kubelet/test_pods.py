"""Kubelet admission of bound pods, Running status, rejection strings and graceful deletion."""

from __future__ import annotations

import pytest

from kubelet.builders import container, events, make_pool, pod, taint_node
from kubetaint.kubelet import KubeletSettings
from kubetaint.kubelet.admission import admit, eviction_admit

TAINT_MESSAGE = "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"


def run_pod(store, clock, obj):
    store.create("pods", obj)
    clock.run_pending()
    return store.get("pods", obj["metadata"]["namespace"], obj["metadata"]["name"])


def test_admitted_pod_runs_with_conditions_ips_and_start_time() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    clock.advance(7)
    status = run_pod(store, clock, pod("a", "n1", containers=[container(cpu="100m", memory="64Mi")]))[
        "status"
    ]
    assert status["phase"] == "Running"
    assert [c["type"] for c in status["conditions"]] == [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    assert all(c["status"] == "True" for c in status["conditions"])
    assert status["startTime"] == "2026-01-01T00:00:07Z"
    assert status["hostIP"] == "192.168.0.10" and status["podIP"] == "10.0.0.1"
    assert status["qosClass"] == "Burstable"
    assert status["containerStatuses"][0]["state"] == {"running": {"startedAt": "2026-01-01T00:00:07Z"}}


def test_host_network_pod_gets_the_host_ip() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    status = run_pod(store, clock, pod("a", "n1", hostNetwork=True))["status"]
    assert status["podIP"] == "192.168.0.10"


@pytest.mark.parametrize(
    ("taint", "tolerations", "phase"),
    [
        pytest.param(
            {"key": "k", "value": "v", "effect": "NoExecute"},
            [],
            "Failed",
            id="untolerated NoExecute taint rejects the pod",
        ),
        pytest.param(
            {"key": "k", "value": "v", "effect": "NoSchedule"},
            [],
            "Running",
            id="untolerated NoSchedule taint is ignored by the kubelet",
        ),
        pytest.param(
            {"key": "k", "value": "v", "effect": "PreferNoSchedule"},
            [],
            "Running",
            id="PreferNoSchedule taint is ignored",
        ),
        pytest.param(
            {"key": "k", "value": "v", "effect": "NoExecute"},
            [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute"}],
            "Running",
            id="tolerated NoExecute taint admits",
        ),
        pytest.param(
            {"key": "k", "value": "v", "effect": "NoExecute"},
            [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}],
            "Running",
            id="tolerationSeconds does not matter at admission",
        ),
        pytest.param(
            {"key": "k", "value": "v", "effect": "NoExecute"},
            [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            "Failed",
            id="a NoSchedule toleration does not cover a NoExecute taint",
        ),
    ],
)
def test_kubelet_admission_checks_only_noexecute_taints(taint, tolerations, phase) -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    taint_node(store, "n1", taint)
    got = run_pod(store, clock, pod("a", "n1", tolerations=tolerations))
    assert got["status"]["phase"] == phase
    if phase == "Failed":
        assert got["status"]["reason"] == "TaintToleration"
        assert got["status"]["message"] == "Pod was rejected: " + TAINT_MESSAGE
        [event] = events(store, "TaintToleration")
        assert event["type"] == "Warning" and event["message"] == TAINT_MESSAGE


def test_static_pods_are_never_rejected_for_taints() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    taint_node(store, "n1", {"key": "k", "effect": "NoExecute"})
    static = pod("a", "n1", annotations={"kubernetes.io/config.source": "file"})
    assert run_pod(store, clock, static)["status"]["phase"] == "Running"


@pytest.mark.parametrize(
    ("requests", "reason", "message"),
    [
        pytest.param(
            ("3", None),
            "OutOfcpu",
            "Node didn't have enough resource: cpu, requested: 3000, used: 6000, capacity: 8000",
            id="cpu over allocatable gives OutOfcpu in millicores",
        ),
        pytest.param(
            (None, "30Gi"),
            "OutOfmemory",
            "Node didn't have enough resource: memory, requested: 32212254720, used: 4294967296, "
            "capacity: 34359738368",
            id="memory over allocatable gives OutOfmemory in bytes",
        ),
        pytest.param(
            ("3", "30Gi"),
            "OutOfcpu",
            "Node didn't have enough resource: cpu, requested: 3000, used: 6000, capacity: 8000",
            id="only the first reason is reported and cpu comes before memory",
        ),
    ],
)
def test_resource_admission(requests, reason, message) -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    run_pod(store, clock, pod("big", "n1", containers=[container(cpu="6", memory="4Gi")]))
    cpu, memory = requests
    got = run_pod(store, clock, pod("more", "n1", containers=[container(cpu=cpu, memory=memory)]))
    assert got["status"]["reason"] == reason
    assert got["status"]["message"] == "Pod was rejected: " + message


def test_pod_count_limit_gives_outofpods() -> None:
    clock, store, pool = make_pool(["n1"], capacity={"cpu": "8", "memory": "32Gi", "pods": "2"})
    pool.start()
    for name in ("a", "b"):
        run_pod(store, clock, pod(name, "n1"))
    got = run_pod(store, clock, pod("c", "n1"))
    assert got["status"]["reason"] == "OutOfpods"
    assert got["status"]["message"] == (
        "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2"
    )


def test_node_selector_mismatch_is_rejected_by_node_affinity_predicate() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    got = run_pod(store, clock, pod("a", "n1", nodeSelector={"disk": "ssd"}))
    assert got["status"]["reason"] == "NodeAffinity"
    assert got["status"]["message"] == (
        "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
    )


@pytest.mark.parametrize(
    ("pressures", "pod_obj", "admitted"),
    [
        pytest.param(
            ["MemoryPressure"],
            pod("a", containers=[container(memory="1Gi")]),
            True,
            id="memory pressure admits burstable pods",
        ),
        pytest.param(["MemoryPressure"], pod("a"), False, id="memory pressure refuses best-effort pods"),
        pytest.param(
            ["MemoryPressure"],
            pod(
                "a",
                tolerations=[
                    {
                        "key": "node.kubernetes.io/memory-pressure",
                        "operator": "Exists",
                        "effect": "NoSchedule",
                    }
                ],
            ),
            True,
            id="best-effort pods tolerating the memory-pressure taint are admitted",
        ),
        pytest.param(
            ["DiskPressure"],
            pod("a", containers=[container(memory="1Gi")]),
            False,
            id="disk pressure refuses every pod",
        ),
        pytest.param(
            ["DiskPressure"],
            pod("a", priority=2_000_000_000),
            True,
            id="critical pods are admitted under any pressure",
        ),
    ],
)
def test_eviction_manager_admission(pressures, pod_obj, admitted) -> None:
    result = eviction_admit(pod_obj, pressures)
    assert result.admit is admitted
    if not admitted:
        assert result.reason == "Evicted"
        assert result.message == f"The node had condition: [{' '.join(pressures)}]. "


def test_admission_sees_memory_pressure_fault() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    pool.fault(["n1"], "memory-pressure")
    got = run_pod(store, clock, pod("a", "n1"))
    assert got["status"]["reason"] == "Evicted"
    assert got["status"]["message"] == "Pod was rejected: The node had condition: [MemoryPressure]. "


def test_admit_pure_function_reports_taint_last() -> None:
    node = {
        "metadata": {"name": "n", "labels": {}},
        "spec": {"taints": [{"key": "k", "effect": "NoExecute"}]},
        "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}},
    }
    result = admit(pod("a", "n", containers=[container(cpu="2")]), node, [])
    assert result.reason == "OutOfcpu"
    assert admit(pod("a", "n"), node, []).reason == "TaintToleration"


def test_deleted_pod_is_finalised_at_once_by_default() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    got = run_pod(store, clock, pod("a", "n1"))
    clock.advance(5)
    marked = {
        **got,
        "metadata": {
            **got["metadata"],
            "deletionTimestamp": "2026-01-01T00:00:35Z",
            "deletionGracePeriodSeconds": 30,
        },
    }
    store.update("pods", marked)
    clock.run_pending()
    assert store.list("pods").items == []


def test_deleted_pod_waits_for_its_grace_period_when_configured() -> None:
    clock, store, pool = make_pool(["n1"], KubeletSettings(honor_grace_period=True))
    pool.start()
    got = run_pod(store, clock, pod("a", "n1"))
    marked = {**got, "metadata": {**got["metadata"], "deletionTimestamp": "2026-01-01T00:00:30Z"}}
    store.update("pods", marked)
    clock.advance(29)
    assert len(store.list("pods").items) == 1
    clock.advance(1)
    assert store.list("pods").items == []


def test_stopped_kubelet_leaves_new_pods_pending_until_recovery() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    pool.fault(["n1"], "stop")
    got = run_pod(store, clock, pod("a", "n1"))
    assert "status" not in got
    clock.advance(30)
    pool.fault(["n1"], "recover")
    clock.run_pending()
    assert store.get("pods", "default", "a")["status"]["phase"] == "Running"


def test_pods_of_other_nodes_and_unbound_pods_are_ignored() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    assert "status" not in run_pod(store, clock, pod("a"))
    assert "status" not in run_pod(store, clock, pod("b", "elsewhere"))


def test_running_pods_from_a_snapshot_are_adopted_without_readmission() -> None:
    clock, store, pool = make_pool([])
    obj = pod("a", "n1", containers=[container(cpu="100")])
    obj["status"] = {"phase": "Running"}
    store.create("pods", obj)
    from kubelet.builders import node_config

    kubelet = pool.add_node(node_config("n1"))
    pool.start()
    clock.run_pending()
    assert store.get("pods", "default", "a")["status"] == {"phase": "Running"}
    assert [p["metadata"]["name"] for p in kubelet.running_pods()] == ["a"]
