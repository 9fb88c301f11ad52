"""Queueing hints of each plugin, as data after upstream's TestIsSchedulableAfter* tables
(tainttoleration, nodeunschedulable, nodeaffinity and noderesources/fit _test.go): True is Queue,
False is QueueSkip. And the scheduler's assigned-pod events that reach them."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.plugins.node_affinity import NodeAffinity
from kubetaint.scheduler.plugins.node_resources_fit import NodeResourcesFit
from kubetaint.scheduler.plugins.node_unschedulable import NodeUnschedulable
from kubetaint.scheduler.plugins.taint_toleration import TaintToleration
from kubetaint.scheduler.podinfo import PodInfo
from scheduler.builders import node, pod, scheduler, taint, toleration

JSON = dict[str, Any]
TOLERATES_FOO = [toleration("foo", "Equal", "bar", "NoSchedule")]


def _hint(plugin: Any, index: int) -> Any:
    return plugin.events_to_register()[index].hint


@pytest.mark.parametrize(
    ("old", "new", "queue"),
    [
        pytest.param(None, node("n"), True, id="queue when a node without taints is added"),
        pytest.param(
            None,
            node("n", taints=[taint("baz", "qux")]),
            False,
            id="skip when an added node has an untolerated taint",
        ),
        pytest.param(
            None,
            node("n", taints=[taint("foo", "bar")]),
            True,
            id="queue when an added node's taint is tolerated",
        ),
        pytest.param(
            node("n", taints=[taint("baz", "qux")]),
            node("n"),
            True,
            id="queue when the untolerated taint is removed",
        ),
        pytest.param(
            node("n", taints=[taint("baz", "qux")]),
            node("n", taints=[taint("foo", "bar")]),
            True,
            id="queue when the untolerated taint is replaced by a tolerated one",
        ),
        pytest.param(
            node("n", taints=[taint("foo", "bar")]),
            node("n"),
            False,
            id="skip when the node did not reject the pod before",
        ),
        pytest.param(
            node("n"),
            node("n", taints=[taint("baz", "qux")]),
            False,
            id="skip when the update adds an untolerated taint",
        ),
    ],
)
def test_taint_toleration_after_node_change(old: JSON | None, new: JSON, queue: bool) -> None:
    pi = PodInfo(pod("p", tolerations=TOLERATES_FOO))
    assert _hint(TaintToleration(), 0)(pi, old, new) is queue


@pytest.mark.parametrize(
    ("uid", "queue"),
    [
        pytest.param("uid-p", True, id="queue when the pending pod itself gets a toleration"),
        pytest.param("uid-other", False, id="skip when another pod gets a toleration"),
    ],
)
def test_taint_toleration_after_pod_toleration_change(uid: str, queue: bool) -> None:
    old = pod("x")
    new = pod("x", tolerations=TOLERATES_FOO)
    old["metadata"]["uid"] = new["metadata"]["uid"] = uid
    assert _hint(TaintToleration(), 1)(PodInfo(pod("p")), old, new) is queue


@pytest.mark.parametrize(
    ("old", "new", "queue"),
    [
        pytest.param(None, node("n"), True, id="queue when a schedulable node is added"),
        pytest.param(None, node("n", unschedulable=True), False, id="skip when a cordoned node is added"),
        pytest.param(node("n", unschedulable=True), node("n"), True, id="queue when a node is uncordoned"),
        pytest.param(node("n"), node("n", unschedulable=True), False, id="skip when a node is cordoned"),
        pytest.param(
            node("n"), node("n", labels={"a": "b"}), False, id="skip when a schedulable node stays so"
        ),
    ],
)
def test_node_unschedulable_after_node_change(old: JSON | None, new: JSON, queue: bool) -> None:
    assert _hint(NodeUnschedulable(), 0)(PodInfo(pod("p")), old, new) is queue


@pytest.mark.parametrize(
    ("uid", "tolerations", "queue"),
    [
        pytest.param(
            "uid-other",
            [toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")],
            False,
            id="skip when other pod gets the toleration",
        ),
        pytest.param(
            "uid-p",
            [toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")],
            True,
            id="queue when the unschedulable pod gets the toleration",
        ),
        pytest.param(
            "uid-p",
            [toleration("unrelated-key", "Exists", "", "NoSchedule")],
            False,
            id="skip when the unschedulable pod gets an unrelated toleration",
        ),
    ],
)
def test_node_unschedulable_after_pod_toleration_change(uid: str, tolerations: list, queue: bool) -> None:
    old, new = pod("x"), pod("x", tolerations=tolerations)
    old["metadata"]["uid"] = new["metadata"]["uid"] = uid
    assert _hint(NodeUnschedulable(), 1)(PodInfo(pod("p")), old, new) is queue


_WANTS_FOO = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}]
    }
}


@pytest.mark.parametrize(
    ("added", "old", "new", "queue"),
    [
        pytest.param(
            None, None, node("n", labels={"foo": "bar"}), True, id="queue when a matching node is added"
        ),
        pytest.param(None, None, node("n"), False, id="skip when a node that does not match is added"),
        pytest.param(
            None,
            node("n"),
            node("n", labels={"foo": "bar"}),
            True,
            id="queue when an update makes the node match",
        ),
        pytest.param(
            None,
            node("n", labels={"foo": "bar"}),
            node("n", labels={"foo": "bar", "x": "y"}),
            False,
            id="skip when the node matched before the update",
        ),
        pytest.param(
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                }
            },
            None,
            node("n", labels={"foo": "bar"}),
            False,
            id="skip when the added affinity does not match the node",
        ),
    ],
)
def test_node_affinity_after_node_change(
    added: JSON | None, old: JSON | None, new: JSON, queue: bool
) -> None:
    plugin = NodeAffinity({"addedAffinity": added} if added else {})
    assert _hint(plugin, 0)(PodInfo(pod("p", affinity=_WANTS_FOO)), old, new) is queue


def _bound(name: str, cpu: str, memory: str | None = None) -> JSON:
    return pod(name, cpu=cpu, memory=memory, node_name="n")


@pytest.mark.parametrize(
    ("old", "new", "queue"),
    [
        pytest.param(_bound("x", "2"), None, True, id="queue when a bound pod is deleted"),
        pytest.param(pod("x", cpu="2"), None, False, id="skip when an unscheduled pod is deleted"),
        pytest.param(
            _bound("x", "2"), _bound("x", "1"), True, id="queue when a requested resource is scaled down"
        ),
        pytest.param(
            _bound("x", "1", "2Gi"),
            _bound("x", "1", "1Gi"),
            False,
            id="skip when a resource the pod does not request is scaled down",
        ),
        pytest.param(_bound("x", "1"), _bound("x", "2"), False, id="skip when a resource is scaled up"),
        pytest.param(
            pod("p", cpu="3"), pod("p", cpu="2"), True, id="queue when the pending pod itself changes"
        ),
    ],
)
def test_node_resources_fit_after_pod_event(old: JSON, new: JSON | None, queue: bool) -> None:
    assert _hint(NodeResourcesFit(), 0)(PodInfo(pod("p", cpu="3")), old, new) is queue


@pytest.mark.parametrize(
    ("old", "new", "queue"),
    [
        pytest.param(None, node("n", cpu="4"), True, id="queue when a node that fits the pod is added"),
        pytest.param(None, node("n", cpu="2"), False, id="skip when an added node is too small"),
        pytest.param(node("n", cpu="2"), node("n", cpu="4"), True, id="queue when cpu grows enough"),
        pytest.param(
            node("n", cpu="1"), node("n", cpu="2"), False, id="skip when the grown node is still too small"
        ),
        pytest.param(
            node("n", cpu="4", memory="1Gi"),
            node("n", cpu="4", memory="2Gi"),
            False,
            id="skip when only an unrequested resource grows",
        ),
        pytest.param(node("n", pods="1"), node("n", pods="2"), True, id="queue when the pod count grows"),
    ],
)
def test_node_resources_fit_after_node_change(old: JSON | None, new: JSON, queue: bool) -> None:
    assert _hint(NodeResourcesFit(), 1)(PodInfo(pod("p", cpu="3")), old, new) is queue


def test_an_assigned_pod_scale_down_requeues_a_pending_pod() -> None:
    big = _bound("big", "3")
    s = scheduler([node("n", cpu="4")], [big, pod("p", cpu="2")])
    assert [r.node for r in s.run()] == [None]
    assert s.queue.pending()["unschedulablePods"] == ["uid-p"]
    s.update_pod(_bound("big", "1"), big)
    assert s.queue.pending()["backoffQ"] == ["uid-p"]


def test_an_assigned_pod_label_change_leaves_a_resource_rejection_waiting() -> None:
    big = _bound("big", "3")
    s = scheduler([node("n", cpu="4")], [big, pod("p", cpu="2")])
    assert [r.node for r in s.run()] == [None]
    relabelled = _bound("big", "3")
    relabelled["metadata"]["labels"] = {"a": "b"}
    s.update_pod(relabelled, big)
    assert s.queue.pending()["unschedulablePods"] == ["uid-p"]


def _with_port(p: JSON, port: int, host_ip: str = "") -> JSON:
    entry: JSON = {"containerPort": port, "hostPort": port, "protocol": "TCP"}
    if host_ip:
        entry["hostIP"] = host_ip
    p["spec"]["containers"][0]["ports"] = [entry]
    return p


@pytest.mark.parametrize(
    ("deleted", "queue"),
    [
        pytest.param(
            _with_port(pod("x", node_name="n"), 8080), True, id="queue when a pod using the port is deleted"
        ),
        pytest.param(
            _with_port(pod("x", node_name="n"), 8081), False, id="skip when the deleted pod used another port"
        ),
        pytest.param(pod("x", node_name="n"), False, id="skip when the deleted pod used no host port"),
        pytest.param(_with_port(pod("x"), 8080), False, id="skip when the deleted pod was not bound"),
    ],
)
def test_node_ports_after_pod_deleted(deleted: JSON, queue: bool) -> None:
    from kubetaint.scheduler.plugins.node_ports import NodePorts

    pi = PodInfo(_with_port(pod("p"), 8080))
    assert _hint(NodePorts(), 0)(pi, deleted, None) is queue


@pytest.mark.parametrize(
    ("node_name", "added", "queue"),
    [
        pytest.param("n1", "n1", True, id="queue when the named node is added"),
        pytest.param("n1", "n2", False, id="skip when another node is added"),
        pytest.param("", "n2", True, id="queue for a pod without a node name"),
    ],
)
def test_node_name_after_node_added(node_name: str, added: str, queue: bool) -> None:
    from kubetaint.scheduler.plugins.node_name import NodeName

    p = pod("p")
    if node_name:
        p["spec"]["nodeName"] = node_name
    assert _hint(NodeName(), 0)(PodInfo(p), None, node(added)) is queue
