"""Pure pieces of the hollow kubelet: QoS classes, requests, node affinity, conditions, leases."""

from __future__ import annotations

import pytest

from kubelet.builders import container, make_store, pod
from kubetaint.clock import VirtualClock
from kubetaint.core.nodeaffinity import node_selector_terms_match, required_node_affinity_matches
from kubetaint.core.qos import pod_qos_class
from kubetaint.kubelet.lease import LEASE_NAMESPACE, LEASE_RESOURCE, NodeLease
from kubetaint.kubelet.node_status import NodeConfig, initial_node, merge_conditions, node_labels
from kubetaint.kubelet.resources import pod_requests


@pytest.mark.parametrize(
    ("containers", "qos"),
    [
        pytest.param([container()], "BestEffort", id="no requests or limits is BestEffort"),
        pytest.param(
            [container(cpu="1", memory="1Gi", limits=True)],
            "Guaranteed",
            id="equal requests and limits for cpu and memory is Guaranteed",
        ),
        pytest.param(
            [container(cpu="1", memory="1Gi")], "Burstable", id="requests without limits is Burstable"
        ),
        pytest.param([container(cpu="1", limits=True)], "Burstable", id="cpu-only limits is Burstable"),
        pytest.param(
            [container(cpu="1", memory="1Gi", limits=True), container()],
            "Burstable",
            id="one best-effort container makes the pod Burstable",
        ),
    ],
)
def test_qos_class(containers, qos) -> None:
    assert pod_qos_class(pod("p", containers=containers)) == qos


def test_pod_requests_sum_containers_max_init_and_add_overhead() -> None:
    obj = pod("p", containers=[container(cpu="500m", memory="1Gi"), container("b", cpu="250m")])
    obj["spec"]["initContainers"] = [container("init", cpu="2", memory="10Mi")]
    obj["spec"]["overhead"] = {"cpu": "100m"}
    assert pod_requests(obj) == {"cpu": 2100, "memory": 2**30}


def test_limits_default_requests() -> None:
    obj = pod("p", containers=[{"name": "c", "resources": {"limits": {"cpu": "2"}}}])
    assert pod_requests(obj) == {"cpu": 2000}


NODE = {"metadata": {"name": "n1", "labels": {"zone": "a", "gen": "5"}}}


@pytest.mark.parametrize(
    ("terms", "matches"),
    [
        pytest.param([], False, id="no terms select nothing"),
        pytest.param([{}], False, id="an empty term selects nothing"),
        pytest.param(
            [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}],
            True,
            id="In matches",
        ),
        pytest.param(
            [{"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}],
            False,
            id="NotIn excludes",
        ),
        pytest.param(
            [{"matchExpressions": [{"key": "disk", "operator": "DoesNotExist"}]}],
            True,
            id="DoesNotExist on a missing label matches",
        ),
        pytest.param(
            [{"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["4"]}]}],
            True,
            id="Gt compares integers",
        ),
        pytest.param(
            [{"matchExpressions": [{"key": "gen", "operator": "Lt", "values": ["4"]}]}],
            False,
            id="Lt compares integers",
        ),
        pytest.param(
            [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}],
            True,
            id="metadata.name field matches",
        ),
        pytest.param(
            [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]},
                {"matchExpressions": [{"key": "zone", "operator": "Exists"}]},
            ],
            True,
            id="terms are ORed",
        ),
        pytest.param(
            [
                {
                    "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
                    "matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}],
                }
            ],
            False,
            id="requirements within a term are ANDed",
        ),
    ],
)
def test_node_selector_terms(terms, matches) -> None:
    assert node_selector_terms_match(terms, NODE) is matches


def test_node_selector_labels_must_all_match() -> None:
    assert required_node_affinity_matches(pod("p", nodeSelector={"zone": "a"}), NODE)
    assert not required_node_affinity_matches(pod("p", nodeSelector={"zone": "a", "gen": "6"}), NODE)


def test_node_labels_and_initial_node() -> None:
    config = NodeConfig("n1", zone="z1", region="r1", labels={"kubernetes.io/os": "windows", "team": "x"})
    labels = node_labels(config)
    assert labels["topology.kubernetes.io/zone"] == "z1" and labels["topology.kubernetes.io/region"] == "r1"
    assert labels["kubernetes.io/os"] == "windows" and labels["team"] == "x"
    node = initial_node(
        NodeConfig(
            "n2", allocatable={"cpu": "7"}, register_with_taints=[{"key": "a", "effect": "NoSchedule"}]
        )
    )
    assert node["status"]["allocatable"] == {"cpu": "7"}
    assert node["spec"]["taints"] == [{"key": "a", "effect": "NoSchedule"}]


def test_merge_conditions_keeps_transition_time_when_status_is_unchanged_and_foreign_conditions() -> None:
    existing = [
        {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
        {"type": "KernelDeadlock", "status": "False"},
    ]
    merged, changed = merge_conditions(existing, {"Ready": "True", "MemoryPressure": "True"}, 1767225660.0)
    by_type = {c["type"]: c for c in merged}
    assert by_type["Ready"]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert by_type["Ready"]["lastHeartbeatTime"] == "2026-01-01T00:01:00Z"
    assert by_type["MemoryPressure"]["lastTransitionTime"] == "2026-01-01T00:01:00Z"
    assert by_type["KernelDeadlock"] == {"type": "KernelDeadlock", "status": "False"}
    assert changed == [("MemoryPressure", "True")]


def test_node_lease_recovers_from_a_foreign_write_and_from_deletion() -> None:
    clock = VirtualClock()
    store = make_store(clock)
    store.create("nodes", {"metadata": {"name": "n1"}})
    lease = NodeLease(store, "n1")
    assert lease.renew(clock.now())
    current = store.get(LEASE_RESOURCE, LEASE_NAMESPACE, "n1")
    store.update(LEASE_RESOURCE, {**current, "spec": {**current["spec"], "holderIdentity": "someone"}})
    clock.advance(10)
    assert lease.renew(clock.now())
    spec = store.get(LEASE_RESOURCE, LEASE_NAMESPACE, "n1")["spec"]
    assert spec["holderIdentity"] == "n1" and spec["renewTime"] == "2026-01-01T00:00:10.000000Z"
    store.delete(LEASE_RESOURCE, LEASE_NAMESPACE, "n1")
    clock.advance(10)
    assert lease.renew(clock.now())
    assert (
        store.get(LEASE_RESOURCE, LEASE_NAMESPACE, "n1")["spec"]["renewTime"] == "2026-01-01T00:00:20.000000Z"
    )


def test_no_lease_without_its_node() -> None:
    clock = VirtualClock()
    store = make_store(clock)
    assert not NodeLease(store, "ghost").renew(clock.now())
    assert store.list(LEASE_RESOURCE).items == []
