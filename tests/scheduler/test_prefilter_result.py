"""PreFilterResult node narrowing (upstream nodeaffinity PreFilter, framework RunPreFilterPlugins and
schedule_one findNodesThatFitPod): which nodes NodeAffinity names, how several plugins' names merge,
the absent nodes' status in the FitError, where nextStartNodeIndex moves, and preemption leaving the
absent nodes alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from kubetaint.scheduler.explain import explain
from kubetaint.scheduler.extension_points import (
    CycleState,
    FilterPlugin,
    Plugin,
    PreFilterPlugin,
    PreFilterResultPlugin,
)
from kubetaint.scheduler.framework import Framework
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins.node_affinity import ERR_REASON_CONFLICT, ERR_REASON_POD, NodeAffinity
from kubetaint.scheduler.podinfo import PodInfo, make_pod_info
from kubetaint.scheduler.scheduler import Scheduler
from kubetaint.scheduler.status import SUCCESS, Code, Status
from scheduler.builders import node, pod, scheduler

NODE_AFFINITY_ABSENT = "node(s) didn't satisfy plugin(s) [NodeAffinity]"


def name_in(*values: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": list(values)}


def label_in(key: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}


def pinned(name: str, *targets: str, cpu: str = "100m", priority: int | None = None) -> dict[str, Any]:
    """A DaemonSet-like pod: one term per target node, each pinning metadata.name."""
    terms = [{"matchFields": [name_in(t)]} for t in targets]
    return pod(name, cpu=cpu, priority=priority, affinity=required(*terms))


# ---- NodeAffinity PreFilter (node_affinity_test.go TestNodeAffinity, the cases with NodeNames) -------


@pytest.mark.parametrize(
    ("terms", "node_name", "labels", "want_names", "want_pre", "want_filter"),
    [
        pytest.param(
            [{"matchFields": [name_in("node1")]}],
            "node1",
            {},
            {"node1"},
            SUCCESS,
            SUCCESS,
            id="matchFields In names the existing node",
        ),
        pytest.param(
            [{"matchFields": [name_in("node1")]}],
            "node2",
            {},
            {"node1"},
            SUCCESS,
            Status(Code.UnschedulableAndUnresolvable, ERR_REASON_POD),
            id="matchFields In names another node: the result still names it and the filter rejects",
        ),
        pytest.param(
            [{"matchFields": [name_in("node1")]}, {"matchExpressions": [label_in("foo", "bar")]}],
            "node2",
            {"foo": "bar"},
            None,
            SUCCESS,
            SUCCESS,
            id="two terms, one without a name requirement: all nodes",
        ),
        pytest.param(
            [{"matchFields": [name_in("node1")], "matchExpressions": [label_in("foo", "bar")]}],
            "node2",
            {"foo": "bar"},
            {"node1"},
            SUCCESS,
            Status(Code.UnschedulableAndUnresolvable, ERR_REASON_POD),
            id="one term, name does not match but labels do",
        ),
        pytest.param(
            [{"matchFields": [name_in("node1")], "matchExpressions": [label_in("foo", "bar")]}],
            "node1",
            {"foo": "bar"},
            {"node1"},
            SUCCESS,
            SUCCESS,
            id="one term, name and labels both match",
        ),
        pytest.param(
            [{"matchFields": [name_in("node1")]}, {"matchFields": [name_in("node2")]}],
            "node2",
            {},
            {"node1", "node2"},
            SUCCESS,
            SUCCESS,
            id="two terms naming nodes: their union",
        ),
        pytest.param(
            [{"matchFields": [name_in("node1"), name_in("node2")]}],
            "node2",
            {"foo": "bar"},
            None,
            Status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT),
            Status(Code.UnschedulableAndUnresolvable, ERR_REASON_POD),
            id="two conflicting name requirements in one term",
        ),
        pytest.param(
            [{"matchFields": [name_in("node2"), name_in("node2")]}],
            "node2",
            {},
            {"node2"},
            SUCCESS,
            SUCCESS,
            id="agreeing name requirements of one term intersect to that name",
        ),
        pytest.param(
            [{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node1"]}]}],
            "node2",
            {},
            None,
            SUCCESS,
            SUCCESS,
            id="NotIn names no node set",
        ),
    ],
)
def test_node_affinity_pre_filter(
    terms: list[dict[str, Any]],
    node_name: str,
    labels: dict[str, str],
    want_names: set[str] | None,
    want_pre: Status,
    want_filter: Status,
) -> None:
    plugin = NodeAffinity()
    pi = make_pod_info(pod("p", affinity=required(*terms)))
    state = CycleState()
    got = plugin.pre_filter(state, pi, [])
    assert got == want_pre
    names = plugin.pre_filter_result(state, pi) if got.is_success() else None
    assert names == (None if want_names is None else frozenset(want_names))
    assert plugin.filter(state, pi, NodeInfo(node(node_name, labels=labels))) == want_filter


def test_a_node_selector_alone_gives_no_node_names() -> None:
    plugin, state = NodeAffinity(), CycleState()
    pi = make_pod_info(pod("p", node_selector={"a": "b"}))
    assert plugin.pre_filter(state, pi, []).is_success()
    assert plugin.pre_filter_result(state, pi) is None


# ---- fake PreFilter/Filter plugins for the framework and schedule_one tables --------------------


class FakePreFilter(Plugin, PreFilterPlugin, PreFilterResultPlugin):
    """A PreFilter plugin returning fixed node names (None: all nodes)."""

    def __init__(self, name: str, names: set[str] | None) -> None:
        self.name = name  # type: ignore[misc]  # (one name per fake)
        self._names = None if names is None else frozenset(names)

    def pre_filter(self, state: CycleState, pi: PodInfo, nodes: Any) -> Status:
        return SUCCESS

    def pre_filter_result(self, state: CycleState, pi: PodInfo) -> frozenset[str] | None:
        return self._names


class FailOn(Plugin, FilterPlugin):
    """A Filter plugin rejecting the named nodes."""

    name = "FakeFilter"

    def __init__(self, *nodes: str) -> None:
        self.nodes = set(nodes)

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        if ni.name in self.nodes:
            return Status(Code.Unschedulable, f"injecting failure for pod {pi.name}")
        return SUCCESS


def with_fakes(s: Scheduler, pre: list[FakePreFilter], filters: Sequence[Any] = ()) -> Framework:
    fw = next(iter(s.profiles.values()))
    fw.pre_filter_plugins.extend(pre)
    if filters:
        fw.filter_plugins.extend(filters)
        fw.batch_filter = False
    return fw


# ---- schedule_one_test.go TestSchedulerSchedulePod, the PreFilterResult cases ---------------------


NO_SCORE = {"profiles": [{"plugins": {"score": {"disabled": [{"name": "*"}]}}}]}


@pytest.mark.parametrize(
    ("nodes", "pre", "fail_on", "scored", "want_nodes", "want_message", "want_plugins"),
    [
        pytest.param(
            ["node1", "node2", "node3"],
            [
                FakePreFilter("FakePreFilter1", None),
                FakePreFilter("FakePreFilter2", {"node2"}),
                FakePreFilter("FakePreFilter3", {"node1", "node2"}),
            ],
            [],
            True,
            {"node2"},
            None,
            None,
            id="test prefilter plugin returning node",
        ),
        pytest.param(
            ["node1", "node2", "node3"],
            [
                FakePreFilter("FakePreFilter1", None),
                FakePreFilter("FakePreFilter2", {"node2"}),
                FakePreFilter("FakePreFilter3", {"node1"}),
            ],
            [],
            True,
            None,
            "0/3 nodes are available: node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3]"
            " simultaneously.",
            {"FakePreFilter2", "FakePreFilter3"},
            id="test prefilter plugin returning non-intersecting nodes",
        ),
        pytest.param(
            ["node1"],
            [FakePreFilter("FakePreFilter1", None), FakePreFilter("FakePreFilter2", set())],
            [],
            True,
            None,
            "0/1 nodes are available: node(s) didn't satisfy plugin FakePreFilter2.",
            {"FakePreFilter2"},
            id="test prefilter plugin returning empty node set",
        ),
        pytest.param(
            ["node1", "node2"],
            [FakePreFilter("FakePreFilter", {"node2"})],
            ["node2"],
            True,
            None,
            "0/2 nodes are available: 1 injecting failure for pod test-prefilter,"
            " 1 node(s) didn't satisfy plugin(s) [FakePreFilter].",
            {"FakePreFilter", "FakeFilter"},
            id="test some nodes are filtered out by prefilter plugin and other are filtered out by filter plugin",
        ),
        pytest.param(
            ["node1", "node2", "node3"],
            [FakePreFilter("FakePreFilter", {"node1", "node2"})],
            [],
            False,
            {"node1", "node2"},
            None,
            None,
            id="test no score plugin, prefilter plugin returning 2 nodes",
        ),
        pytest.param(
            ["1", "2"],
            [FakePreFilter("FakePreFilter", {"invalid-node"})],
            [],
            True,
            None,
            "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [FakePreFilter].",
            {"FakePreFilter"},
            id="test prefilter plugin returned an invalid node",
        ),
    ],
)
def test_schedule_pod_with_pre_filter_results(
    nodes: list[str],
    pre: list[FakePreFilter],
    fail_on: list[str],
    scored: bool,
    want_nodes: set[str] | None,
    want_message: str | None,
    want_plugins: set[str] | None,
) -> None:
    s = scheduler([node(n) for n in nodes], config=None if scored else NO_SCORE)
    fw = with_fakes(s, pre, [FailOn(*fail_on)] if fail_on else [])
    chosen, evaluation, fit_error = s.schedule_pod(fw, CycleState(), make_pod_info(pod("test-prefilter")))
    if want_message is None:
        assert fit_error is None
        assert want_nodes is not None and chosen in want_nodes
        if not scored:  # without score plugins one feasible node is enough
            assert evaluation.processed == 1
    else:
        assert chosen is None and fit_error is not None
        assert fit_error.error() == want_message
        assert fit_error.diagnosis.unschedulable_plugins == want_plugins


# ---- a DaemonSet-like pod in a larger cluster -----------------------------------------------------


def cluster(n: int) -> Scheduler:
    return scheduler([node(f"n{i:03d}") for i in range(n)])


def test_fit_error_of_a_pinned_pod_counts_the_other_nodes_as_not_satisfying_node_affinity() -> None:
    s = cluster(150)
    s.add_pod(pinned("ds-x", "n007", cpu="8"))
    (result,) = s.run()
    assert result.message == (
        "0/150 nodes are available: 1 Insufficient cpu, 149 node(s) didn't satisfy plugin(s) [NodeAffinity]."
        " preemption: 0/150 nodes are available: 150 Preemption is not helpful for scheduling."
    ), "8 CPUs on a 4-CPU node: Unresolvable, as every other node"
    assert result.fit_error is not None
    diagnosis = result.fit_error.diagnosis
    assert set(diagnosis.node_to_status) == {"n007"}, "only the named node has a status of its own"
    assert diagnosis.absent_status == Status(Code.UnschedulableAndUnresolvable, NODE_AFFINITY_ABSENT)
    assert diagnosis.unschedulable_plugins == {"NodeAffinity", "NodeResourcesFit"}


def test_a_pinned_pod_naming_only_missing_nodes() -> None:
    s = cluster(3)
    s.add_pod(pinned("ds-x", "gone"))
    (result,) = s.run()
    assert result.message.startswith(
        "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    assert s.next_start_node_index == 0


def test_conflicting_name_requirements_reject_the_pod_at_pre_filter() -> None:
    s = cluster(4)
    s.add_pod(pod("p", affinity=required({"matchFields": [name_in("n001"), name_in("n002")]})))
    (result,) = s.run()
    assert result.message == (
        "0/4 nodes are available: pod affinity terms conflict."
        " preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    ), "every node has the UnschedulableAndUnresolvable PreFilter status: none may be preempted on"
    assert result.fit_error is not None
    assert result.fit_error.diagnosis.unschedulable_plugins == {"NodeAffinity"}


@pytest.mark.parametrize(
    ("start", "pods", "want"),
    [
        pytest.param(0, [pinned("ds", "n040")], [1], id="a pinned pod moves the index on by one node"),
        pytest.param(
            0,
            [pinned("ds", "n040"), pod("free")],
            [1, 101],
            id="a free pod then searches 100 of 150 nodes from where the pinned pod left the index",
        ),
        pytest.param(
            149, [pinned("ds", "n003", "n100")], [1], id="two pinned nodes (both fit) wrap around all nodes"
        ),
        pytest.param(
            10,
            [pinned("ds", "n001", "n002", "n003", cpu="8")],
            [13],
            id="a pinned pod that fits nowhere moves the index on by the nodes it tried",
        ),
    ],
)
def test_next_start_node_index(start: int, pods: list[dict[str, Any]], want: list[int]) -> None:
    s = cluster(150)
    s.next_start_node_index = start
    got = []
    for p in pods:
        s.add_pod(p)
        s.run()
        got.append(s.next_start_node_index)
    assert got == want


def test_preemption_only_considers_the_nodes_a_pinned_pod_names() -> None:
    """Every node is full of low-priority pods; the pinned pod may only evict on its own node."""
    s = scheduler([node(f"n{i}", cpu="1") for i in range(4)])
    for i in range(4):
        s.add_pod(pod(f"low-{i}", cpu="900m", priority=0, node_name=f"n{i}"))
    s.add_pod(pinned("ds-x", "n2", cpu="500m", priority=100))
    (result,) = s.run()
    assert result.nominated_node == "n2"
    assert [v["metadata"]["name"] for v in result.victims] == ["low-2"]


def test_preemption_of_a_pinned_pod_finds_no_victim_on_its_node() -> None:
    s = scheduler([node(f"n{i}", cpu="1") for i in range(4)])
    for i in range(4):
        s.add_pod(pod(f"high-{i}", cpu="900m", priority=1000, node_name=f"n{i}"))
    s.add_pod(pinned("ds-x", "n2", cpu="500m", priority=100))
    (result,) = s.run()
    assert result.nominated_node in (None, "")
    assert result.victims == []
    assert result.message.endswith(
        "preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod,"
        " 3 Preemption is not helpful for scheduling."
    )


def test_explain_reports_the_absent_nodes_status_for_the_nodes_a_pinned_pod_does_not_name() -> None:
    nodes = [node(f"n{i}", cpu="1") for i in range(3)]
    report = explain([*nodes, pinned("ds-x", "n1", cpu="2")])
    (entry,) = report["pods"]
    assert entry["message"] == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
        " preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    filters = {n["name"]: n["filter"] for n in entry["nodes"]}
    absent = {
        "plugin": "NodeAffinity",
        "code": "UnschedulableAndUnresolvable",
        "reason": NODE_AFFINITY_ABSENT,
    }
    assert filters == {
        "n0": absent,
        "n1": {
            "plugin": "NodeResourcesFit",
            "code": "UnschedulableAndUnresolvable",
            "reason": "Insufficient cpu",
        },
        "n2": absent,
    }


@pytest.mark.parametrize(
    ("nominated", "pinned_to", "want"),
    [
        pytest.param(
            "n120", None, 101, id="a failed nominated node the search does not reach counts as gone through"
        ),
        pytest.param("n050", None, 101, id="a failed nominated node the search reaches counts once"),
        pytest.param(
            "n120",
            ("n007",),
            2,
            id="a pinned pod's failed nominated node outside its names counts as gone through",
        ),
    ],
)
def test_next_start_node_index_after_a_failed_nominated_node(
    nominated: str, pinned_to: tuple[str, ...] | None, want: int
) -> None:
    s = scheduler([node(f"n{i:03d}", cpu="100m" if f"n{i:03d}" == nominated else "4") for i in range(150)])
    p = pod("p", cpu="1") if pinned_to is None else pinned("p", *pinned_to, cpu="1")
    p["status"] = {"nominatedNodeName": nominated}
    s.add_pod(p)
    (result,) = s.run()
    assert result.node is not None and result.node != nominated
    assert s.next_start_node_index == want


def test_fit_error_keeps_the_status_of_a_failed_nominated_node_outside_the_pinned_names() -> None:
    s = scheduler([node(f"n{i}", cpu="100m") for i in range(4)])
    p = pinned("p", "n1", cpu="1")
    p["status"] = {"nominatedNodeName": "n3"}
    s.add_pod(p)
    (result,) = s.run()
    assert result.fit_error is not None
    # the nominated node keeps its own status; the other unnamed nodes have the absent-nodes one
    assert result.fit_error.error().startswith(
        "0/4 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector,"
        " 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
