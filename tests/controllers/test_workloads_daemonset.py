"""DaemonSet controller: placement per taints with the default tolerations (semantics.md §8),
pods surviving NoSchedule taints, the node-name affinity, and status."""

from __future__ import annotations

import pytest

from controllers.workload_builders import daemonset, events, make_env, node, pods_of
from kubetaint.controllers.daemonset import DaemonSetController
from kubetaint.controllers.daemonset.placement import node_should_run_daemon_pod, target_node_name
from kubetaint.controllers.daemonset.tolerations import _daemon_pod_tolerations

NS = "kube-system"
DEFAULTS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]
NETWORK = {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}


def start():
    clock, store, rng = make_env()
    DaemonSetController(store, clock, rng).start()
    return clock, store


def placed(store) -> list[str]:
    return sorted(target_node_name(p) or "" for p in pods_of(store, NS))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({}, DEFAULTS, id="defaults in upstream order without hostNetwork"),
        pytest.param({"hostNetwork": True}, [*DEFAULTS, NETWORK], id="hostNetwork adds network-unavailable"),
        pytest.param(
            {
                "tolerations": [
                    {
                        "key": "node.kubernetes.io/not-ready",
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 300,
                    }
                ]
            },
            DEFAULTS,
            id="a matching user toleration with seconds is overwritten and becomes infinite",
        ),
        pytest.param(
            {"tolerations": [{"key": "gpu", "operator": "Exists"}]},
            [{"key": "gpu", "operator": "Exists"}, *DEFAULTS],
            id="unrelated user tolerations are kept first",
        ),
        pytest.param(
            {
                "tolerations": [
                    {
                        "key": "node.kubernetes.io/not-ready",
                        "operator": "Equal",
                        "value": "",
                        "effect": "NoExecute",
                        "tolerationSeconds": 5,
                    }
                ]
            },
            [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Equal",
                    "value": "",
                    "effect": "NoExecute",
                    "tolerationSeconds": 5,
                },
                *DEFAULTS,
            ],
            id="an Equal toleration does not match the Exists default and is kept",
        ),
    ],
)
def test_daemon_pod_tolerations_table(spec, expected) -> None:
    assert _daemon_pod_tolerations(spec) == expected


@pytest.mark.parametrize(
    ("taints", "host_network", "expected"),
    [
        pytest.param([], False, (True, True), id="clean node runs the pod"),
        pytest.param(
            [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
            False,
            (False, True),
            id="untolerated NoSchedule: no new pod but an existing one stays",
        ),
        pytest.param(
            [{"key": "dedicated", "value": "gpu", "effect": "NoExecute"}],
            False,
            (False, False),
            id="untolerated NoExecute: the pod must go",
        ),
        pytest.param(
            [{"key": "dedicated", "effect": "PreferNoSchedule"}],
            False,
            (True, True),
            id="PreferNoSchedule is ignored",
        ),
        pytest.param(
            [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}],
            False,
            (True, True),
            id="not-ready NoExecute is tolerated by default",
        ),
        pytest.param(
            [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}],
            False,
            (True, True),
            id="unreachable NoExecute is tolerated by default",
        ),
        pytest.param(
            [{"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"}],
            False,
            (True, True),
            id="memory-pressure NoSchedule is tolerated",
        ),
        pytest.param(
            [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
            False,
            (True, True),
            id="cordoned nodes still run daemon pods",
        ),
        pytest.param(
            [{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}],
            False,
            (False, True),
            id="network-unavailable blocks pods without hostNetwork",
        ),
        pytest.param(
            [{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}],
            True,
            (True, True),
            id="network-unavailable is tolerated by hostNetwork pods",
        ),
        pytest.param(
            [{"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}],
            False,
            (False, False),
            id="out-of-service is not tolerated",
        ),
    ],
)
def test_node_should_run_daemon_pod_table(taints, host_network, expected) -> None:
    ds = daemonset("agent", hostNetwork=True) if host_network else daemonset("agent")
    assert node_should_run_daemon_pod(node("n", taints=taints), ds) == expected


def test_node_selector_and_template_node_name_limit_placement() -> None:
    ds = daemonset("agent", nodeSelector={"role": "edge"})
    assert node_should_run_daemon_pod(node("n", labels={"role": "edge"}), ds) == (True, True)
    assert node_should_run_daemon_pod(node("n"), ds) == (False, False)
    pinned = daemonset("agent", nodeName="n1")
    assert node_should_run_daemon_pod(node("n2"), pinned) == (False, False)


def test_one_pod_per_eligible_node_with_node_name_affinity_and_tolerations() -> None:
    clock, store = start()
    store.create("nodes", node("n1"))
    store.create("nodes", node("n2", taints=[{"key": "dedicated", "effect": "NoSchedule"}]))
    store.create(
        "nodes", node("n3", taints=[{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}])
    )
    store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    assert placed(store) == ["n1", "n3"]
    pod = next(p for p in pods_of(store, NS) if target_node_name(p) == "n1")
    assert "nodeName" not in pod["spec"]
    assert pod["spec"]["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            }
        }
    }
    assert pod["spec"]["tolerations"] == DEFAULTS
    assert pod["metadata"]["labels"]["app"] == "agent"
    assert pod["metadata"]["labels"]["pod-template-generation"] == "1"
    assert pod["metadata"]["generateName"] == "agent-"
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    assert len(events(store, "SuccessfulCreate")) == 2


def test_new_node_gets_a_pod_and_duplicate_creation_does_not_happen() -> None:
    clock, store = start()
    store.create("daemonsets.apps", daemonset("agent"))
    store.create("nodes", node("n1"))
    clock.run_pending()
    clock.advance(60)
    store.create("nodes", node("n2"))
    clock.run_pending()
    assert placed(store) == ["n1", "n2"]


def bind(store, node_name: str) -> None:
    for pod in pods_of(store, NS):
        if target_node_name(pod) == node_name and not pod["spec"].get("nodeName"):
            status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
            store.update("pods", {**pod, "spec": {**pod["spec"], "nodeName": node_name}, "status": status})


def test_running_pod_survives_noschedule_taint_but_not_untolerated_noexecute() -> None:
    clock, store = start()
    store.create("nodes", node("n1"))
    store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    bind(store, "n1")
    clock.run_pending()
    n1 = store.get("nodes", "", "n1")
    store.update("nodes", {**n1, "spec": {"taints": [{"key": "dedicated", "effect": "NoSchedule"}]}})
    clock.run_pending()
    assert placed(store) == ["n1"]
    status = store.get("daemonsets.apps", NS, "agent")["status"]
    assert (status["desiredNumberScheduled"], status["numberMisscheduled"]) == (0, 1)
    n1 = store.get("nodes", "", "n1")
    store.update("nodes", {**n1, "spec": {"taints": [{"key": "dedicated", "effect": "NoExecute"}]}})
    clock.run_pending()
    assert placed(store) == []
    assert [e["reason"] for e in events(store)][-1] == "SuccessfulDelete"


def test_daemon_pods_stay_on_not_ready_and_unreachable_nodes() -> None:
    clock, store = start()
    store.create("nodes", node("n1"))
    store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    bind(store, "n1")
    n1 = store.get("nodes", "", "n1")
    taints = [
        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"},
    ]
    store.update("nodes", {**n1, "spec": {"taints": taints}})
    clock.advance(3600)
    assert placed(store) == ["n1"]


def test_failed_daemon_pod_is_deleted_with_an_event_and_replaced() -> None:
    clock, store = start()
    store.create("nodes", node("n1"))
    store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    [pod] = pods_of(store, NS)
    store.update("pods", {**pod, "spec": {**pod["spec"], "nodeName": "n1"}, "status": {"phase": "Failed"}})
    clock.run_pending()
    [event] = events(store, "FailedDaemonPod")
    assert (
        event["message"]
        == f"Found failed daemon pod {NS}/{pod['metadata']['name']} on node n1, will try to kill it"
    )
    [replacement] = pods_of(store, NS)
    assert replacement["metadata"]["name"] != pod["metadata"]["name"]


def test_status_counts() -> None:
    clock, store = start()
    for name in ("n1", "n2"):
        store.create("nodes", node(name))
    store.create("daemonsets.apps", daemonset("agent"))
    clock.run_pending()
    bind(store, "n1")
    clock.run_pending()
    status = store.get("daemonsets.apps", NS, "agent")["status"]
    assert {
        k: status[k]
        for k in (
            "desiredNumberScheduled",
            "currentNumberScheduled",
            "numberReady",
            "numberAvailable",
            "numberUnavailable",
            "updatedNumberScheduled",
        )
    } == {
        "desiredNumberScheduled": 2,
        "currentNumberScheduled": 1,
        "numberReady": 1,
        "numberAvailable": 1,
        "numberUnavailable": 1,
        "updatedNumberScheduled": 1,
    }
