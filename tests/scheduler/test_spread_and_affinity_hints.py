"""InterPodAffinity's and PodTopologySpread's queueing hints, as data after upstream's
Test_isSchedulableAfterPodChange and Test_isSchedulableAfterNodeChange tables
(interpodaffinity/plugin_test.go, podtopologyspread/plugin_test.go): True is Queue, False is
QueueSkip. And a pending pod those plugins rejected stays put for an event its hint skips."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.plugins.inter_pod_affinity import (
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
)
from kubetaint.scheduler.plugins.pod_topology_spread import PodTopologySpread
from kubetaint.scheduler.podinfo import PodInfo

JSON = dict[str, Any]


def make_pod(
    name: str = "",
    *,
    uid: str = "",
    node: str = "",
    namespace: str = "default",
    labels: dict[str, str] | None = None,
    affinity: list[JSON] | None = None,
    anti: list[JSON] | None = None,
    spread: list[JSON] | None = None,
    tolerations: list[JSON] | None = None,
) -> JSON:
    spec: JSON = {"containers": [{"name": "c", "image": "x"}]}
    if node:
        spec["nodeName"] = node
    if affinity or anti:
        spec["affinity"] = {}
        if affinity:
            spec["affinity"]["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": affinity}
        if anti:
            spec["affinity"]["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    if spread:
        spec["topologySpreadConstraints"] = spread
    if tolerations:
        spec["tolerations"] = tolerations
    meta: JSON = {"name": name, "namespace": namespace, "labels": labels or {}}
    if uid:
        meta["uid"] = uid
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def make_node(labels: dict[str, str] | None = None, taints: list[JSON] | None = None) -> JSON:
    spec: JSON = {"taints": taints} if taints else {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-a", "labels": labels or {}},
        "spec": spec,
    }


def term_in(key: str, topology: str, *values: str) -> JSON:
    """st.PodAffinityIn / PodAntiAffinityIn."""
    return {
        "topologyKey": topology,
        "labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]},
    }


def term_exists(key: str, topology: str) -> JSON:
    return {
        "topologyKey": topology,
        "labelSelector": {"matchExpressions": [{"key": key, "operator": "Exists"}]},
    }


def term_labels(topology: str, **labels: str) -> JSON:
    return {"topologyKey": topology, "labelSelector": {"matchLabels": labels}}


AFFINE = make_pod("p", affinity=[term_in("service", "region", "securityscan", "value2")])
ANTI = make_pod("p", anti=[term_in("service", "region", "securityscan", "value2")])
TWO_TERMS = make_pod("p", affinity=[term_exists("aaa", "hostname"), term_exists("bbb", "hostname")])


def bound(**labels: str) -> JSON:
    return make_pod(node="fake-node", labels=labels)


@pytest.mark.parametrize(
    ("pod", "old", "new", "queue"),
    [
        pytest.param(
            AFFINE, None, bound(service="securityscan"), True, id="add a pod which matches the pod affinity"
        ),
        pytest.param(
            AFFINE, None, make_pod(labels={"service": "securityscan"}), False, id="add an un-scheduled pod"
        ),
        pytest.param(
            AFFINE, None, bound(aaa="a"), False, id="add a pod which doesn't match the pod affinity"
        ),
        pytest.param(
            AFFINE,
            bound(aaa="a"),
            bound(service="securityscan"),
            True,
            id="update a pod from non-match to match pod affinity",
        ),
        pytest.param(
            AFFINE,
            bound(service="value2"),
            bound(service="securityscan"),
            False,
            id="the updating pod matches target pod's affinity both before and after label changes",
        ),
        pytest.param(
            AFFINE,
            make_pod(labels={"service": "securityscan"}),
            make_pod(labels={"service": "securityscan"}),
            False,
            id="update an un-scheduled pod",
        ),
        pytest.param(
            AFFINE,
            bound(service="securityscan"),
            bound(aaa="a"),
            False,
            id="update a pod from match to non-match the pod affinity",
        ),
        pytest.param(
            TWO_TERMS,
            bound(aaa="a"),
            bound(service="securityscan"),
            False,
            id="update a pod from match to non-match pod's affinity - multiple terms case",
        ),
        pytest.param(
            TWO_TERMS,
            bound(aaa="a"),
            bound(aaa="", bbb=""),
            True,
            id="update a pod from non-match to match pod's affinity - multiple terms case",
        ),
        pytest.param(
            ANTI,
            bound(service="securityscan"),
            bound(service="aaaa"),
            True,
            id="modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity",
        ),
        pytest.param(
            ANTI,
            bound(service="bbb"),
            bound(service="securityscan"),
            False,
            id="modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity",
        ),
        pytest.param(
            ANTI, bound(aaa="a"), None, False, id="delete a pod which doesn't match pod's anti-affinity"
        ),
        pytest.param(
            ANTI,
            bound(service="securityscan"),
            None,
            True,
            id="delete a pod which matches pod's anti-affinity",
        ),
    ],
)
def test_inter_pod_affinity_after_pod_change(
    pod: JSON, old: JSON | None, new: JSON | None, queue: bool
) -> None:
    assert is_schedulable_after_pod_change(PodInfo(pod), old, new) is queue


AFFINE_ZONE = make_pod("p", affinity=[term_in("service", "zone", "securityscan", "value2")])
AFFINE_REGION = make_pod("p", affinity=[term_in("service", "region", "securityscan", "value2")])
ANTI_ZONE = make_pod("p", anti=[term_labels("zone", another="label")])


@pytest.mark.parametrize(
    ("pod", "old", "new", "queue"),
    [
        pytest.param(
            AFFINE_ZONE,
            None,
            make_node({"zone": "zone1"}),
            True,
            id="add a new node with matched pod affinity topologyKey",
        ),
        pytest.param(
            AFFINE_REGION,
            None,
            make_node({"zone": "zone1"}),
            False,
            id="add a new node without matched topologyKey",
        ),
        pytest.param(
            AFFINE_ZONE,
            make_node({"aaa": "a"}),
            make_node({"aaa": "b"}),
            False,
            id="update node label but not topologyKey",
        ),
        pytest.param(
            AFFINE_ZONE,
            make_node({"zone": "zone1"}),
            make_node({"zone": "zone1", "unrelated-label": "unrelated"}),
            False,
            id="update node label that isn't related to the pod affinity",
        ),
        pytest.param(
            AFFINE_ZONE,
            make_node({"zone": "zone1"}),
            make_node({"zone": "zone2"}),
            True,
            id="update node with different affinity topologyKey value",
        ),
        pytest.param(
            AFFINE_ZONE,
            make_node({"aaa": "a"}),
            make_node({"zone": "zone1"}),
            True,
            id="update node to have the affinity topology label",
        ),
        pytest.param(
            ANTI_ZONE,
            None,
            make_node({"zone": "zone1"}),
            True,
            id="add a new node with matched pod anti-affinity topologyKey",
        ),
        pytest.param(
            ANTI_ZONE,
            None,
            make_node(),
            True,
            id="add a new node without matched pod anti-affinity topologyKey",
        ),
        pytest.param(
            ANTI_ZONE,
            make_node({"zone": "zone1"}),
            make_node({"zone": "zone1", "unrelated-label": "unrelated"}),
            False,
            id="update node label that isn't related to the pod anti-affinity",
        ),
        pytest.param(
            ANTI_ZONE,
            make_node({"zone": "zone1"}),
            make_node({"zone": "zone2"}),
            True,
            id="update node with different anti-affinity topologyKey value",
        ),
        pytest.param(
            ANTI_ZONE,
            make_node({"aaa": "a"}),
            make_node({"zone": "zone1"}),
            False,
            id="update node to have the anti-affinity topology label",
        ),
        pytest.param(
            ANTI_ZONE,
            make_node({"zone": "zone1"}),
            make_node({"aaa": "a"}),
            True,
            id="update node label not to have anti-affinity topology label",
        ),
    ],
)
def test_inter_pod_affinity_after_node_change(pod: JSON, old: JSON | None, new: JSON, queue: bool) -> None:
    assert is_schedulable_after_node_change(PodInfo(pod), old, new) is queue


def spread(key: str, selector_key: str, *, taints_policy: str | None = None) -> JSON:
    """st.SpreadConstraint(1, key, DoNotSchedule, Exists(selector_key), ...)."""
    c: JSON = {
        "maxSkew": 1,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchExpressions": [{"key": selector_key, "operator": "Exists"}]},
    }
    if taints_policy:
        c["nodeTaintsPolicy"] = taints_policy
    return c


LIST_DEFAULTING = {"defaultingType": "List"}
ZONE = make_pod("p", spread=[spread("zone", "foo")])
ZONE_NODE = make_pod("p", spread=[spread("zone", "foo"), spread("node", "foo")])


def taint(key: str) -> JSON:
    return {"key": key, "value": "bbb", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("pod", "old", "new", "queue"),
    [
        pytest.param(
            ZONE,
            make_node({"zone": "zone1"}),
            make_node({"zone": "zone2"}),
            True,
            id="node updates label which matches topologyKey",
        ),
        pytest.param(
            ZONE,
            make_node({"foo": "bar1"}),
            make_node({"foo": "bar2"}),
            False,
            id="node that doesn't match topologySpreadConstraints updates non-related label",
        ),
        pytest.param(
            ZONE_NODE,
            make_node({"zone": "zone1", "node": "node1", "foo": "bar"}),
            make_node({"zone": "zone1", "node": "node1"}),
            False,
            id="node that match topologySpreadConstraints adds non-related label",
        ),
        pytest.param(ZONE, None, make_node({"foo": "bar"}), False, id="create node with non-related labels"),
        pytest.param(ZONE, None, make_node({"zone": "zone1"}), True, id="create node with related labels"),
        pytest.param(ZONE, make_node({"foo": "bar"}), None, False, id="delete node with non-related labels"),
        pytest.param(ZONE, make_node({"zone": "zone1"}), None, True, id="delete node with related labels"),
        pytest.param(
            ZONE_NODE,
            None,
            make_node({"zone": "zone1"}),
            False,
            id="add node with related labels that only match one of topologySpreadConstraints",
        ),
        pytest.param(
            ZONE_NODE,
            None,
            make_node({"zone": "zone1", "node": "node1"}),
            True,
            id="add node with related labels that match all topologySpreadConstraints",
        ),
        pytest.param(
            ZONE_NODE,
            make_node({"zone": "zone1"}),
            make_node({"zone": "zone1"}),
            False,
            id="update node with related labels that only match one of topologySpreadConstraints",
        ),
        pytest.param(
            ZONE_NODE,
            make_node({"zone": "zone1", "node": "node1"}),
            make_node({"zone": "zone1", "node": "node2"}),
            True,
            id="update node with related labels that match all topologySpreadConstraints",
        ),
        pytest.param(
            ZONE_NODE,
            make_node({"zone": "zone1", "node": "node1"}, [taint("aaa")]),
            make_node({"zone": "zone1", "node": "node1"}, [taint("ccc")]),
            True,
            id="update node with different taints that match all topologySpreadConstraints",
        ),
        pytest.param(
            ZONE_NODE,
            make_node({"node": "node1"}, [taint("aaa")]),
            make_node({"node": "node1"}, [taint("ccc")]),
            False,
            id="update node with different taints that only match one of topologySpreadConstraints",
        ),
    ],
)
def test_pod_topology_spread_after_node_change(
    pod: JSON, old: JSON | None, new: JSON | None, queue: bool
) -> None:
    plugin = PodTopologySpread(LIST_DEFAULTING)
    assert plugin.is_schedulable_after_node_change(PodInfo(pod), old, new) is queue


SPREAD_FOO = make_pod("p", uid="p", labels={"foo": ""}, spread=[spread("zone", "foo")])
SPREAD_FOO_BAR = make_pod(
    "p", uid="p", labels={"foo": ""}, spread=[spread("zone", "foo"), spread("node", "bar")]
)
HONOR = make_pod(
    "p",
    uid="p",
    labels={"foo": ""},
    spread=[spread("zone", "foo", taints_policy="Honor"), spread("node", "bar")],
)
IGNORE = make_pod(
    "p",
    uid="p",
    labels={"foo": ""},
    spread=[spread("zone", "foo", taints_policy="Ignore"), spread("node", "bar")],
)
UNSCHEDULABLE_TOLERATION = [
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
]


def other(node: str = "fake-node", namespace: str = "default", **labels: str) -> JSON:
    return make_pod(uid="p2", node=node, namespace=namespace, labels=labels)


@pytest.mark.parametrize(
    ("pod", "old", "new", "queue"),
    [
        pytest.param(
            SPREAD_FOO,
            None,
            other(foo=""),
            True,
            id="add pod with labels match topologySpreadConstraints selector",
        ),
        pytest.param(SPREAD_FOO, None, other("", foo=""), False, id="add un-scheduled pod"),
        pytest.param(SPREAD_FOO, other("", bar=""), other("", foo=""), False, id="update un-scheduled pod"),
        pytest.param(SPREAD_FOO, other("", foo=""), None, False, id="delete un-scheduled pod"),
        pytest.param(
            SPREAD_FOO,
            None,
            other(namespace="fake-namespace", foo=""),
            False,
            id="add pod with different namespace",
        ),
        pytest.param(
            SPREAD_FOO,
            None,
            other(bar=""),
            False,
            id="add pod with labels don't match topologySpreadConstraints selector",
        ),
        pytest.param(
            SPREAD_FOO,
            other(foo=""),
            None,
            True,
            id="delete pod with labels that match topologySpreadConstraints selector",
        ),
        pytest.param(
            SPREAD_FOO,
            other(bar=""),
            None,
            False,
            id="delete pod with labels that don't match topologySpreadConstraints selector",
        ),
        pytest.param(
            SPREAD_FOO,
            other(foo="", bar="bar1"),
            other(foo="", bar="bar2"),
            False,
            id="update pod's non-related label",
        ),
        pytest.param(
            SPREAD_FOO,
            other(),
            other(foo=""),
            True,
            id="add pod's label that matches topologySpreadConstraints selector",
        ),
        pytest.param(
            SPREAD_FOO,
            other(foo=""),
            other(),
            True,
            id="delete pod label that matches topologySpreadConstraints selector",
        ),
        pytest.param(
            SPREAD_FOO,
            other(foo="foo1"),
            other(foo="foo2"),
            False,
            id="change pod's label that matches topologySpreadConstraints selector",
        ),
        pytest.param(
            SPREAD_FOO,
            other(foo="", bar="bar1"),
            other(foo="", bar="bar2"),
            False,
            id="change pod's label that doesn't match topologySpreadConstraints selector",
        ),
        pytest.param(
            SPREAD_FOO_BAR,
            other(foo=""),
            other(foo="", bar="bar2"),
            True,
            id="add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints",
        ),
        pytest.param(
            SPREAD_FOO_BAR,
            other(foo=""),
            other(foo="", baz=""),
            False,
            id="change pod's label that doesn't match topologySpreadConstraints selector with multi topologySpreadConstraints",
        ),
        pytest.param(
            SPREAD_FOO_BAR,
            other(foo="", bar=""),
            other(foo="", bar="bar2"),
            False,
            id="change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints",
        ),
        pytest.param(
            HONOR,
            make_pod("p", uid="p", labels={"foo": ""}),
            make_pod("p", uid="p", labels={"foo": ""}, tolerations=UNSCHEDULABLE_TOLERATION),
            True,
            id="the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has got a new toleration",
        ),
        pytest.param(
            IGNORE,
            make_pod("p", uid="p", labels={"foo": ""}),
            make_pod("p", uid="p", labels={"foo": ""}, tolerations=UNSCHEDULABLE_TOLERATION),
            False,
            id="the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and has got a new toleration",
        ),
        pytest.param(
            IGNORE,
            make_pod("p", uid="p"),
            make_pod("p", uid="p", labels={"foo": ""}),
            True,
            id="the unschedulable Pod has topologySpreadConstraint and has got a new label matching the selector of the constraint",
        ),
        pytest.param(
            IGNORE,
            make_pod("p", uid="p"),
            make_pod("p", uid="p", labels={"unrelated": ""}),
            False,
            id="the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label",
        ),
    ],
)
def test_pod_topology_spread_after_pod_change(
    pod: JSON, old: JSON | None, new: JSON | None, queue: bool
) -> None:
    plugin = PodTopologySpread(LIST_DEFAULTING)
    assert plugin.is_schedulable_after_pod_change(PodInfo(pod), old, new) is queue


def test_a_pod_anti_affinity_rejected_stays_put_for_an_unrelated_node_change() -> None:
    """A pod that anti-affinity kept off the only zone waits through a node relabel that leaves
    its topology key alone, and is requeued when a node of another zone appears."""
    from kubetaint.scheduler.queue import UNSCHEDULABLE
    from scheduler.builders import node, scheduler

    zone = "topology.kubernetes.io/zone"
    s = scheduler([node("a1", labels={zone: "a"})])
    s.add_pod(make_pod("web-1", uid="w1", node="a1", labels={"app": "web"}))
    s.add_pod(make_pod("web-2", uid="w2", labels={"app": "web"}, anti=[term_labels(zone, app="web")]))
    (result,) = s.run()
    assert result.node is None
    assert s.queue.where["w2"] == UNSCHEDULABLE
    s.update_node(node("a1", labels={zone: "a", "disk": "ssd"}), node("a1", labels={zone: "a"}))
    assert s.queue.where["w2"] == UNSCHEDULABLE
    s.add_node(node("b1", labels={zone: "b"}))
    assert s.queue.where["w2"] != UNSCHEDULABLE
    s.clock.advance(10.0)  # type: ignore[attr-defined]  # (past the backoff)
    (result,) = s.run()
    assert result.node == "b1"
