"""PodTopologySpread PreFilter/Filter, ported from upstream's podtopologyspread/filtering_test.go
(TestSingleConstraint, TestMultipleConstraints, minDomains and node inclusion policies) as data."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.status import Code
from scheduler.pod_affinity_builders import expr, filter_statuses, make_node, make_pod, scheduler_with

PLUGIN = "PodTopologySpread"
OK, NO, NEVER = Code.Success, Code.Unschedulable, Code.UnschedulableAndUnresolvable
FOO = {"foo": ""}


def spread(max_skew: int, key: str, *expressions: dict[str, Any], **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchExpressions": list(expressions)},
    }
    out.update(extra)
    return out


def zone_nodes() -> list[dict[str, Any]]:
    return [
        make_node("node-a", {"zone": "zone1", "node": "node-a"}),
        make_node("node-b", {"zone": "zone1", "node": "node-b"}),
        make_node("node-x", {"zone": "zone2", "node": "node-x"}),
        make_node("node-y", {"zone": "zone2", "node": "node-y"}),
    ]


def on(node: str, labels: dict[str, str] | None = None, **kw: Any) -> dict[str, Any]:
    return make_pod(node=node, labels=FOO if labels is None else labels, **kw)


SPREAD_2_1_0_3 = [on("node-a"), on("node-a"), on("node-b"), on("node-y"), on("node-y"), on("node-y")]

SINGLE = [
    pytest.param(
        make_pod(labels=FOO, spread=[spread(1, "zone", expr("foo", "Exists"))]),
        zone_nodes(),
        [],
        [OK, OK, OK, OK],
        id="no existing pods",
    ),
    pytest.param(
        make_pod(labels=FOO, spread=[spread(1, "zone", expr("bar", "Exists"))]),
        zone_nodes(),
        [],
        [OK, OK, OK, OK],
        id="no existing pods, the incoming pod does not match itself",
    ),
    pytest.param(
        make_pod(labels=FOO, spread=[spread(1, "zone", expr("foo", "Exists"))]),
        zone_nodes(),
        [on("node-a", namespace="ns1"), on("node-a", namespace="ns2"), on("node-x"), on("node-y")],
        [OK, OK, NO, NO],
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        make_pod(labels=FOO, spread=[spread(1, "zone", expr("foo", "Exists"))]),
        zone_nodes(),
        SPREAD_2_1_0_3,
        [OK, OK, OK, OK],
        id="pods spread across zones as 3/3: every node fits",
    ),
    pytest.param(
        make_pod(labels=FOO, spread=[spread(1, "zone", expr("foo", "Exists"))]),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zon": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [on("node-a"), on("node-b"), on("node-x"), on("node-y")],
        [OK, NEVER, NO, NO],
        id="pods spread across zones as 1/2 as node-b lacks the zone label",
    ),
    pytest.param(
        make_pod(labels=FOO, spread=[spread(1, "rack", expr("foo", "Exists"))]),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
        ],
        [],
        [NEVER, NEVER],
        id="no node has the rack label",
    ),
    pytest.param(
        make_pod(labels=FOO, spread=[spread(1, "node", expr("foo", "Exists"))]),
        zone_nodes(),
        SPREAD_2_1_0_3,
        [NO, NO, OK, NO],
        id="pods spread across nodes as 2/1/0/3: only node-x fits",
    ),
    pytest.param(
        make_pod(labels=FOO, spread=[spread(2, "node", expr("foo", "Exists"))]),
        zone_nodes(),
        SPREAD_2_1_0_3,
        [NO, OK, OK, NO],
        id="pods spread across nodes as 2/1/0/3 with maxSkew 2: node-b and node-x fit",
    ),
    pytest.param(
        make_pod(labels={"bar": ""}, spread=[spread(1, "node", expr("foo", "Exists"))]),
        zone_nodes(),
        SPREAD_2_1_0_3,
        [NO, OK, OK, NO],
        id="pods spread across nodes as 2/1/0/3, the pod not matching itself",
    ),
    pytest.param(
        make_pod(labels=FOO, spread=[spread(1, "node", expr("foo", "Exists"))]),
        [make_node("node-a", {"node": "node-a"}), make_node("node-b", {"node": "node-b"})],
        [on("node-a", terminating=True), on("node-b")],
        [OK, NO],
        id="terminating pods are not counted",
    ),
]


def _node_affinity_pod() -> dict[str, Any]:
    pod = make_pod(labels=FOO, spread=[spread(1, "node", expr("foo", "Exists"))])
    pod["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr("node", "In", "node-a", "node-y")]}]
            }
        }
    }
    return pod


SINGLE.append(
    pytest.param(
        _node_affinity_pod(),
        zone_nodes(),
        SPREAD_2_1_0_3,
        [OK, OK, OK, NO],
        id="with node affinity only node-a and node-y count (2/-/-/3): node-a fits",
    )
)


@pytest.mark.parametrize(("pod", "nodes", "existing", "want"), SINGLE)
def test_single_constraint(pod: Any, nodes: list[Any], existing: list[Any], want: list[Code]) -> None:
    sched = scheduler_with(nodes, existing)
    statuses = filter_statuses(sched, PLUGIN, pod)
    assert [statuses[n["metadata"]["name"]].code for n in nodes] == want


def test_missing_label_and_skew_reasons_are_upstreams() -> None:
    nodes = [
        make_node("node-a", {"zone": "z1"}),
        make_node("node-b", {}),
        make_node("node-c", {"zone": "z2"}),
    ]
    sched = scheduler_with(nodes, [on("node-a"), on("node-a")])
    statuses = filter_statuses(
        sched, PLUGIN, make_pod(labels=FOO, spread=[spread(1, "zone", expr("foo", "Exists"))])
    )
    assert statuses["node-a"].message() == "node(s) didn't match pod topology spread constraints"
    assert statuses["node-b"].message() == (
        "node(s) didn't match pod topology spread constraints (missing required label)"
    )
    assert statuses["node-c"].is_success()


MULTIPLE = [
    pytest.param(
        [spread(1, "zone", expr("foo", "Exists")), spread(1, "node", expr("foo", "Exists"))],
        SPREAD_2_1_0_3,
        [NO, NO, OK, NO],
        id="two constraints on zone and node, spreads 3/3 and 2/1/0/3",
    ),
    pytest.param(
        [spread(1, "zone", expr("foo", "Exists")), spread(1, "node", expr("foo", "Exists"))],
        [
            on("node-a"),
            on("node-b"),
            on("node-b"),
            on("node-x"),
            on("node-y"),
            on("node-y"),
            on("node-y"),
            on("node-y"),
        ],
        [OK, NO, NO, NO],
        id="two constraints on zone and node, spreads 3/5 and 1/2/1/4: only node-a fits both",
    ),
]


@pytest.mark.parametrize(("constraints", "existing", "want"), MULTIPLE)
def test_multiple_constraints(constraints: list[Any], existing: list[Any], want: list[Code]) -> None:
    nodes = zone_nodes()
    sched = scheduler_with(nodes, existing)
    statuses = filter_statuses(sched, PLUGIN, make_pod(labels=FOO, spread=constraints))
    assert [statuses[n["metadata"]["name"]].code for n in nodes] == want


def test_min_domains_treats_the_global_minimum_as_zero_below_that_many_domains() -> None:
    nodes = zone_nodes()
    sched = scheduler_with(nodes, [on("node-a"), on("node-x")])
    pod = make_pod(labels=FOO, spread=[spread(1, "zone", expr("foo", "Exists"), minDomains=3)])
    statuses = filter_statuses(sched, PLUGIN, pod)
    # two zones (fewer than 3): the global minimum is 0, so 1 + 1 - 0 > 1 everywhere
    assert {name: s.code for name, s in statuses.items()} == {
        n: NO for n in ("node-a", "node-b", "node-x", "node-y")
    }


def test_node_taints_policy_honor_leaves_out_nodes_with_untolerated_taints() -> None:
    taint = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    nodes = [
        make_node("node-a", {"zone": "zone1"}),
        make_node("node-x", {"zone": "zone2"}, taints=taint),
    ]
    existing = [on("node-a")]
    honor = make_pod(labels=FOO, spread=[spread(1, "zone", expr("foo", "Exists"), nodeTaintsPolicy="Honor")])
    ignore = make_pod(labels=FOO, spread=[spread(1, "zone", expr("foo", "Exists"))])
    sched = scheduler_with(nodes, existing)
    # Honor: zone2 is not a domain, so zone1 (1 pod) is the minimum and node-a fits
    assert filter_statuses(sched, PLUGIN, honor)["node-a"].code == OK
    # Ignore (the default): zone2 counts with 0 pods, so node-a would make a skew of 2
    assert filter_statuses(sched, PLUGIN, ignore)["node-a"].code == NO


def test_match_label_keys_narrow_the_selector_to_the_pods_own_values() -> None:
    nodes = zone_nodes()
    existing = [on("node-a", {"foo": "", "rev": "1"}), on("node-a", {"foo": "", "rev": "1"})]
    sched = scheduler_with(nodes, existing)
    pod = make_pod(
        labels={"foo": "", "rev": "2"},
        spread=[spread(1, "zone", expr("foo", "Exists"), matchLabelKeys=["rev"])],
    )
    statuses = filter_statuses(sched, PLUGIN, pod)
    assert all(s.is_success() for s in statuses.values())
