"""NodeAffinity, NodeResourcesFit, NodeUnschedulable, NodeName and NodePorts filter tables."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.cache import Cache
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.plugins.node_affinity import ERR_REASON_POD, NodeAffinity
from kubetaint.scheduler.plugins.node_name import NodeName
from kubetaint.scheduler.plugins.node_resources_fit import NodeResourcesFit
from kubetaint.scheduler.plugins.node_unschedulable import NodeUnschedulable
from kubetaint.scheduler.podinfo import PodInfo
from scheduler.builders import node, pod, toleration


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}


def _expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]}


AFFINITY_CASES = [
    pytest.param({}, None, {"foo": "bar"}, True, id="no selector and no affinity fits any node"),
    pytest.param({"foo": "bar"}, None, {}, False, id="a nodeSelector needs the label"),
    pytest.param({"foo": "bar"}, None, {"foo": "bar"}, True, id="a nodeSelector matches an equal label"),
    pytest.param({"foo": "bar"}, None, {"foo": "baz"}, False, id="a nodeSelector rejects another value"),
    pytest.param(
        {},
        _required(_expr("foo", "In", "bar", "value2")),
        {"foo": "bar"},
        True,
        id="In matches a listed value",
    ),
    pytest.param(
        {},
        _required(_expr("kernel-version", "Gt", "0204")),
        {"kernel-version": "0206"},
        True,
        id="Gt parses leading zeros like Go's ParseInt",
    ),
    pytest.param(
        {},
        _required(_expr("kernel-version", "Gt", "204")),
        {"kernel-version": "206"},
        True,
        id="Gt compares numerically",
    ),
    pytest.param(
        {},
        _required(_expr("mem-type", "NotIn", "DDR", "DDR2")),
        {"mem-type": "DDR3"},
        True,
        id="NotIn accepts other values",
    ),
    pytest.param(
        {}, _required(_expr("mem-type", "NotIn", "DDR")), {}, True, id="NotIn accepts a missing label"
    ),
    pytest.param(
        {}, _required(_expr("GPU", "Exists")), {"GPU": "NVIDIA-GRID-K1"}, True, id="Exists needs only the key"
    ),
    pytest.param(
        {}, _required(_expr("GPU", "DoesNotExist")), {"GPU": "x"}, False, id="DoesNotExist rejects the key"
    ),
    pytest.param({}, _required(_expr("n", "Lt", "5")), {"n": "4"}, True, id="Lt accepts smaller numbers"),
    pytest.param({}, _required({}), {"foo": "bar"}, False, id="an empty term matches nothing"),
    pytest.param(
        {},
        _required(_expr("foo", "In", "x"), _expr("foo", "In", "bar")),
        {"foo": "bar"},
        True,
        id="terms are ORed",
    ),
    pytest.param(
        {"a": "1"},
        _required(_expr("foo", "In", "bar")),
        {"foo": "bar"},
        False,
        id="nodeSelector and affinity are ANDed",
    ),
    pytest.param(
        {},
        _required({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}),
        {},
        True,
        id="matchFields select by node name",
    ),
]


@pytest.mark.parametrize(("selector", "affinity", "labels", "fits"), AFFINITY_CASES)
def test_node_affinity_filter(selector: dict, affinity: dict | None, labels: dict, fits: bool) -> None:
    plugin = NodeAffinity()
    pi = PodInfo(pod("p", node_selector=selector, affinity=affinity))
    cache = Cache()
    ni = cache.add_node(node("n", labels=labels))
    status = plugin.filter(CycleState(), pi, ni)
    assert status.is_success() == fits
    if not fits:
        assert status.reasons == (ERR_REASON_POD,)
    mask = plugin.filter_batch(CycleState(), pi, cache)
    assert (True if mask is None else bool(mask[ni.slot])) == fits


FIT_CASES = [
    pytest.param(dict(cpu="1", memory="1Gi"), [], [], id="a small pod fits an empty node"),
    pytest.param(dict(cpu="5"), [], ["Insufficient cpu"], id="more cpu than allocatable"),
    pytest.param(
        dict(cpu="1", memory="40Gi"), [], ["Insufficient memory"], id="more memory than allocatable"
    ),
    pytest.param(
        dict(cpu="5", memory="40Gi"),
        [],
        ["Insufficient cpu", "Insufficient memory"],
        id="both short gives both reasons",
    ),
    pytest.param(dict(cpu="2"), [dict(cpu="3")], ["Insufficient cpu"], id="existing requests count"),
    pytest.param(dict(cpu="1"), [dict(cpu="3")], [], id="exactly filling the node fits"),
    pytest.param(
        dict(extra_requests={"example.com/gpu": "1"}),
        [],
        ["Insufficient example.com/gpu"],
        id="an extended resource the node lacks",
    ),
    pytest.param(dict(), [], [], id="a pod without requests fits"),
]


@pytest.mark.parametrize(("request_kw", "existing", "reasons"), FIT_CASES)
def test_node_resources_fit(request_kw: dict, existing: list[dict], reasons: list[str]) -> None:
    cache = Cache()
    ni = cache.add_node(node("n", cpu="4", memory="32Gi"))
    for i, kw in enumerate(existing):
        cache.add_pod(pod(f"e{i}", node_name="n", **kw))
    plugin = NodeResourcesFit()
    pi = PodInfo(pod("p", **request_kw))
    status = plugin.filter(CycleState(), pi, ni)
    assert list(status.reasons) == reasons
    mask = plugin.filter_batch(CycleState(), pi, cache)
    assert mask is not None and bool(mask[ni.slot]) == (not reasons)


def test_too_many_pods() -> None:
    cache = Cache()
    ni = cache.add_node(node("n", pods="1"))
    cache.add_pod(pod("e", node_name="n"))
    assert NodeResourcesFit().filter(CycleState(), PodInfo(pod("p", cpu="5")), ni).reasons == (
        "Too many pods",
        "Insufficient cpu",
    )


def test_init_containers_and_overhead_count() -> None:
    p = pod("p", cpu="1")
    p["spec"]["initContainers"] = [{"name": "i", "resources": {"requests": {"cpu": "3"}}}]
    p["spec"]["overhead"] = {"cpu": "500m"}
    assert PodInfo(p).requests["cpu"] == 3500


def test_sidecars_add_to_app_containers() -> None:
    p = pod("p", cpu="1")
    p["spec"]["initContainers"] = [
        {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}
    ]
    assert PodInfo(p).requests["cpu"] == 2000


@pytest.mark.parametrize(
    ("tolerations", "fits"),
    [
        pytest.param([], False, id="a cordoned node rejects pods"),
        pytest.param(
            [toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")],
            True,
            id="Exists toleration passes",
        ),
        pytest.param(
            [toleration("node.kubernetes.io/unschedulable", "Equal", "true", "NoSchedule")],
            False,
            id="the synthetic taint has an empty value",
        ),
    ],
)
def test_node_unschedulable(tolerations: list, fits: bool) -> None:
    ni = Cache().add_node(node("n", unschedulable=True))
    status = NodeUnschedulable().filter(CycleState(), PodInfo(pod("p", tolerations=tolerations)), ni)
    assert status.is_success() == fits
    if not fits:
        assert status.reasons == ("node(s) were unschedulable",)


def test_node_name() -> None:
    ni = Cache().add_node(node("a"))
    assert NodeName().filter(CycleState(), PodInfo(pod("p", node_name="b")), ni).reasons == (
        "node(s) didn't match the requested node name",
    )


@pytest.mark.parametrize(
    ("request_cpu", "used", "code"),
    [
        pytest.param("3", "2", "Unschedulable", id="short because of other pods: preemption may help"),
        pytest.param("5", None, "UnschedulableAndUnresolvable", id="more than the node's allocatable"),
    ],
)
def test_node_resources_fit_unresolvable_when_the_request_exceeds_allocatable(
    request_cpu: str, used: str | None, code: str
) -> None:
    cache = Cache()
    ni = cache.add_node(node("n", cpu="4"))
    if used:
        cache.add_pod(pod("e", cpu=used, node_name="n"))
    status = NodeResourcesFit().filter(CycleState(), PodInfo(pod("p", cpu=request_cpu)), ni)
    assert (status.code.name, status.reasons) == (code, ("Insufficient cpu",))
