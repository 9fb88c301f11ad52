"""InterPodAffinity Filter, ported from upstream's interpodaffinity/filtering_test.go
(TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes) as data. Upstream's
defaultNamespace "" reads as kubetaint's "default"."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.status import Code
from scheduler.pod_affinity_builders import expr, filter_statuses, make_node, make_pod, scheduler_with, term

PLUGIN = "InterPodAffinity"
AFFINITY = (Code.UnschedulableAndUnresolvable, "node(s) didn't match pod affinity rules")
ANTI = (Code.Unschedulable, "node(s) didn't match pod anti-affinity rules")
EXISTING = (Code.Unschedulable, "node(s) didn't satisfy existing pods anti-affinity rules")

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = make_node("machine1", {"region": "r1", "zone": "z11"})
IN_SEC = expr("service", "In", "securityscan", "value2")
IN_ANTI = expr("service", "In", "antivirusscan", "value2")


def on(node: str, labels: dict[str, str], **kw: Any) -> dict[str, Any]:
    return make_pod(node=node, labels=labels, **kw)


SINGLE_NODE = [
    pytest.param(make_pod(), [], None, id="a pod without required pod affinity fits a node without pods"),
    pytest.param(
        make_pod(labels=POD_LABEL2, affinity=[term("region", IN_SEC)]),
        [on("machine1", POD_LABEL)],
        None,
        id="required pod affinity with In matching the existing pod is satisfied",
    ),
    pytest.param(
        make_pod(
            labels=POD_LABEL2, affinity=[term("region", expr("service", "NotIn", "securityscan3", "value3"))]
        ),
        [on("machine1", POD_LABEL)],
        None,
        id="required pod affinity with NotIn matching the existing pod is satisfied",
    ),
    pytest.param(
        make_pod(labels=POD_LABEL2, affinity=[term("", IN_SEC, namespaces=["DiffNameSpace"])]),
        [on("machine1", POD_LABEL, namespace="ns")],
        AFFINITY,
        id="pod affinity is not satisfied by a pod of another namespace",
    ),
    pytest.param(
        make_pod(labels=POD_LABEL, affinity=[term("", IN_ANTI)]),
        [on("machine1", POD_LABEL)],
        AFFINITY,
        id="pod affinity is not satisfied when the selector does not match the existing pod",
    ),
    pytest.param(
        make_pod(
            labels=POD_LABEL2,
            affinity=[
                term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                term("region", expr("service", "In", "securityscan"), expr("service", "NotIn", "WrongValue")),
            ],
        ),
        [on("machine1", POD_LABEL)],
        None,
        id="pod affinity with several operators in several terms is satisfied",
    ),
    pytest.param(
        make_pod(
            labels=POD_LABEL2,
            affinity=[
                term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                term(
                    "region", expr("service", "In", "securityscan2"), expr("service", "NotIn", "WrongValue")
                ),
            ],
        ),
        [on("machine1", POD_LABEL)],
        AFFINITY,
        id="the requirements of a selector are ANDed: one that does not match fails the term",
    ),
    pytest.param(
        make_pod(labels=POD_LABEL2, affinity=[term("region", IN_SEC)], anti_affinity=[term("node", IN_ANTI)]),
        [on("machine1", POD_LABEL)],
        None,
        id="pod affinity and pod anti-affinity are both satisfied",
    ),
    pytest.param(
        make_pod(labels=POD_LABEL2, affinity=[term("region", IN_SEC)], anti_affinity=[term("node", IN_ANTI)]),
        [on("machine1", POD_LABEL, anti_affinity=[term("node", IN_ANTI)])],
        None,
        id="pod affinity, anti-affinity and the existing pod's anti-affinity are satisfied",
    ),
    pytest.param(
        make_pod(labels=POD_LABEL2, affinity=[term("region", IN_SEC)], anti_affinity=[term("zone", IN_SEC)]),
        [on("machine1", POD_LABEL)],
        ANTI,
        id="pod affinity is satisfied but pod anti-affinity is not",
    ),
    pytest.param(
        make_pod(labels=POD_LABEL, affinity=[term("region", IN_SEC)], anti_affinity=[term("node", IN_ANTI)]),
        [on("machine1", POD_LABEL, anti_affinity=[term("zone", IN_SEC)])],
        EXISTING,
        id="the existing pod's anti-affinity is not satisfied",
    ),
    pytest.param(
        make_pod(
            labels=POD_LABEL, affinity=[term("region", expr("service", "NotIn", "securityscan", "value2"))]
        ),
        [on("machine2", POD_LABEL)],
        AFFINITY,
        id="a pod that does not match its own affinity term is not let in as the first of its kind",
    ),
    pytest.param(
        make_pod(labels=POD_LABEL),
        [on("machine1", POD_LABEL, anti_affinity=[term("zone", IN_SEC)])],
        EXISTING,
        id="an existing pod's anti-affinity is honoured for a pod without anti-affinity",
    ),
    pytest.param(
        make_pod(labels=POD_LABEL),
        [
            on(
                "machine1",
                POD_LABEL,
                anti_affinity=[term("zone", expr("service", "NotIn", "securityscan", "value2"))],
            )
        ],
        None,
        id="an existing pod's anti-affinity that does not match the pod lets it in",
    ),
    pytest.param(
        make_pod(
            labels=POD_LABEL,
            anti_affinity=[
                term("region", expr("service", "Exists")),
                term("region", expr("security", "Exists")),
            ],
        ),
        [on("machine1", POD_LABEL2, anti_affinity=[term("zone", expr("security", "Exists"))])],
        ANTI,
        id="the pod's anti-affinity rejects the node before the existing pod's anti-affinity",
    ),
    pytest.param(
        make_pod(
            labels=POD_LABEL,
            anti_affinity=[term("zone", expr("service", "Exists")), term("zone", expr("security", "Exists"))],
        ),
        [on("machine1", POD_LABEL2, anti_affinity=[term("zone", expr("security", "Exists"))])],
        ANTI,
        id="anti-affinity symmetry a1: the incoming pod's term matches the existing pod",
    ),
    pytest.param(
        make_pod(labels=POD_LABEL2, anti_affinity=[term("zone", expr("security", "Exists"))]),
        [
            on(
                "machine1",
                POD_LABEL,
                anti_affinity=[
                    term("zone", expr("service", "Exists")),
                    term("zone", expr("security", "Exists")),
                ],
            )
        ],
        EXISTING,
        id="anti-affinity symmetry a2: the existing pod's term matches the incoming pod",
    ),
    pytest.param(
        make_pod(
            labels={"abc": "", "xyz": ""},
            anti_affinity=[term("zone", expr("abc", "Exists")), term("zone", expr("def", "Exists"))],
        ),
        [
            on(
                "machine1",
                {"def": "", "xyz": ""},
                anti_affinity=[term("zone", expr("abc", "Exists")), term("zone", expr("def", "Exists"))],
            )
        ],
        ANTI,
        id="anti-affinity symmetry b1: the pod's own anti-affinity is judged first",
    ),
    pytest.param(
        make_pod(
            labels={"def": "", "xyz": ""},
            anti_affinity=[term("zone", expr("abc", "Exists")), term("zone", expr("def", "Exists"))],
        ),
        [
            on(
                "machine1",
                {"abc": "", "xyz": ""},
                anti_affinity=[term("zone", expr("abc", "Exists")), term("zone", expr("def", "Exists"))],
            )
        ],
        ANTI,
        id="anti-affinity symmetry b2: the pod's own anti-affinity is judged first",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "want"), SINGLE_NODE)
def test_required_affinity_single_node(pod: Any, existing: list[Any], want: Any) -> None:
    sched = scheduler_with([NODE1], existing)
    status = filter_statuses(sched, PLUGIN, pod)["machine1"]
    got = None if status.is_success() else (status.code, status.message())
    assert got == want


CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}

MULTIPLE_NODES = [
    pytest.param(
        make_pod(affinity=[term("region", expr("foo", "In", "bar"))]),
        [on("machine1", {"foo": "bar"})],
        [make_node("machine1", CHINA), make_node("machine2", CHINA_AZ1), make_node("machine3", INDIA)],
        [None, None, AFFINITY],
        id="every node of the matching pod's topology value fits",
    ),
    pytest.param(
        make_pod(
            labels={"foo": "bar", "service": "securityscan"},
            affinity=[
                term("zone", expr("foo", "In", "bar")),
                term("zone", expr("service", "In", "securityscan")),
            ],
        ),
        [on("nodeA", {"foo": "bar"})],
        [
            make_node("nodeA", {"zone": "az1", "hostname": "h1"}),
            make_node("nodeB", {"zone": "az2", "hostname": "h2"}),
        ],
        [None, None],
        id="the first pod of a collection with affinity to itself is not blocked",
    ),
    pytest.param(
        make_pod(anti_affinity=[term("region", expr("foo", "In", "abc"))]),
        [on("nodeA", {"foo": "abc"})],
        [
            make_node("nodeA", {"region": "r1", "hostname": "nodeA"}),
            make_node("nodeB", {"region": "r1", "hostname": "nodeB"}),
        ],
        [ANTI, ANTI],
        id="anti-affinity rejects every node of the matching pod's topology value",
    ),
    pytest.param(
        make_pod(
            anti_affinity=[
                term("region", expr("foo", "In", "abc")),
                term("zone", expr("service", "In", "securityscan")),
            ]
        ),
        [on("nodeA", {"foo": "abc", "service": "securityscan"})],
        [
            make_node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
            make_node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"}),
        ],
        [ANTI, ANTI],
        id="anti-affinity matches a pod when any of its terms matches",
    ),
    pytest.param(
        make_pod(anti_affinity=[term("region", expr("foo", "In", "abc"))]),
        [on("nodeA", {"foo": "abc"})],
        [make_node("nodeA", CHINA), make_node("nodeB", CHINA_AZ1), make_node("nodeC", INDIA)],
        [ANTI, ANTI, None],
        id="anti-affinity leaves the nodes of other topology values",
    ),
    pytest.param(
        make_pod(
            namespace="NS1", labels={"foo": "123"}, anti_affinity=[term("region", expr("foo", "In", "bar"))]
        ),
        [
            on("nodeA", {"foo": "bar"}, namespace="NS1"),
            on("nodeC", {}, namespace="NS2", anti_affinity=[term("region", expr("foo", "In", "123"))]),
        ],
        [make_node("nodeA", CHINA), make_node("nodeB", CHINA_AZ1), make_node("nodeC", INDIA)],
        [ANTI, ANTI, None],
        id="an existing pod's anti-affinity term covers its own namespace only",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "nodes", "want"), MULTIPLE_NODES)
def test_required_affinity_multiple_nodes(
    pod: Any, existing: list[Any], nodes: list[Any], want: list[Any]
) -> None:
    sched = scheduler_with(nodes, existing)
    statuses = filter_statuses(sched, PLUGIN, pod)
    got = [
        None
        if statuses[n["metadata"]["name"]].is_success()
        else (statuses[n["metadata"]["name"]].code, statuses[n["metadata"]["name"]].message())
        for n in nodes
    ]
    assert got == want


NAMESPACES = [
    {"metadata": {"name": "subteam1.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam2.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam1.team2", "labels": {"team": "team2"}}},
]
TEAM1 = {"matchExpressions": [expr("team", "In", "team1")]}

NAMESPACE_SELECTOR = [
    pytest.param(
        make_pod(labels=POD_LABEL2, affinity=[term("region", IN_SEC, namespaceSelector=TEAM1)]),
        [on("machine1", POD_LABEL, namespace="subteam1.team1")],
        None,
        id="affinity with a namespaceSelector selecting the existing pod's namespace",
    ),
    pytest.param(
        make_pod(labels=POD_LABEL2, affinity=[term("region", IN_SEC, namespaceSelector=TEAM1)]),
        [on("machine1", POD_LABEL, namespace="subteam1.team2")],
        AFFINITY,
        id="affinity with a namespaceSelector not selecting the existing pod's namespace",
    ),
    pytest.param(
        make_pod(
            namespace="subteam1.team1",
            labels=POD_LABEL2,
            anti_affinity=[term("zone", IN_SEC, namespaceSelector=TEAM1)],
        ),
        [on("machine1", POD_LABEL, namespace="subteam2.team1")],
        ANTI,
        id="anti-affinity with a namespaceSelector selecting the existing pod's namespace",
    ),
    pytest.param(
        make_pod(
            namespace="subteam1.team1",
            labels=POD_LABEL2,
            anti_affinity=[term("zone", IN_SEC, namespaceSelector={})],
        ),
        [on("machine1", POD_LABEL, namespace="subteam2.team1")],
        ANTI,
        id="anti-affinity with an empty namespaceSelector selecting every namespace",
    ),
    pytest.param(
        make_pod(
            namespace="subteam1.team1",
            labels=POD_LABEL2,
            anti_affinity=[term("zone", IN_SEC, namespaceSelector=TEAM1)],
        ),
        [on("machine1", POD_LABEL, namespace="subteam1.team2")],
        None,
        id="anti-affinity with a namespaceSelector not selecting the existing pod's namespace",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "want"), NAMESPACE_SELECTOR)
def test_required_affinity_namespace_selector(pod: Any, existing: list[Any], want: Any) -> None:
    sched = scheduler_with([make_node("machine1", {"region": "r1", "zone": "z11"})], existing)
    for ns in NAMESPACES:
        sched.add_namespace(ns)
    status = filter_statuses(sched, PLUGIN, pod)["machine1"]
    got = None if status.is_success() else (status.code, status.message())
    assert got == want


ZONE_LABEL_NODES = [
    make_node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
    make_node("nodeB", {"zoneLabel": "az2", "hostname": "h2"}),
]
R1Z1 = [
    make_node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
    make_node("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"}),
]

MORE_MULTIPLE_NODES = [
    pytest.param(
        make_pod(
            labels={"foo": "bar", "service": "securityscan"},
            affinity=[
                term("zone", expr("foo", "In", "bar")),
                term("zone", expr("service", "In", "securityscan")),
            ],
        ),
        [on("nodeA", {"foo": "bar"})],
        ZONE_LABEL_NODES,
        [AFFINITY, AFFINITY],
        id="the first pod of a collection fits only nodes with the requested topology keys",
    ),
    pytest.param(
        make_pod(labels={"foo": ""}),
        [on("nodeA", {}, anti_affinity=[term("invalid-node-label", expr("foo", "Exists"))])],
        R1Z1,
        [None, None],
        id="an existing pod's anti-affinity term with a topology key no node has leaves every node",
    ),
    pytest.param(
        make_pod(anti_affinity=[term("invalid-node-label", expr("foo", "Exists"))]),
        [on("nodeA", {"foo": ""})],
        R1Z1,
        [None, None],
        id="the pod's anti-affinity term matching a pod still needs the topology key on the node",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "nodes", "want"), MORE_MULTIPLE_NODES)
def test_required_affinity_more_multiple_nodes(
    pod: Any, existing: list[Any], nodes: list[Any], want: list[Any]
) -> None:
    test_required_affinity_multiple_nodes(pod, existing, nodes, want)


BAD_VALUE_MESSAGE = (
    'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": a valid label '
    "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


@pytest.mark.parametrize(
    ("requirement", "message"),
    [
        pytest.param(
            {"key": "service", "operator": "In", "values": []},
            "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
            id="In without values",
        ),
        pytest.param(
            {"key": "service", "operator": "NotIn"},
            "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
            id="NotIn without values",
        ),
        pytest.param(
            {"key": "service", "operator": "Exists", "values": ["a", "b"]},
            'values: Invalid value: []string{"a", "b"}: values set must be empty for exists and does not exist',
            id="Exists with values",
        ),
        pytest.param(
            {"key": "bad key", "operator": "In", "values": []},
            "[key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or "
            "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), values: "
            "Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty]",
            id="a bad key and no values, aggregated",
        ),
    ],
)
def test_a_requirement_whose_values_do_not_fit_its_operator_fails_pre_filter(
    requirement: dict[str, Any], message: str
) -> None:
    """labels.NewRequirement's checks, met through LabelSelectorAsSelector when NewPodInfo parses
    the terms (the pod is unschedulable and unresolvable with the parse error)."""
    from kubetaint.scheduler.extension_points import CycleState
    from kubetaint.scheduler.podinfo import make_pod_info

    sched = scheduler_with([NODE1], [])
    pi = make_pod_info(make_pod(labels=POD_LABEL, affinity=[term("region", requirement)]))
    status = sched.framework_for(pi).plugins[PLUGIN].pre_filter(CycleState(), pi, sched.cache.node_list())
    assert (status.code, status.message()) == (
        Code.UnschedulableAndUnresolvable,
        f"parsing pod: requiredAffinityTerms: {message}",
    )


@pytest.mark.parametrize(
    "affinity",
    [
        pytest.param(
            [term("region", expr("service", "In", "{{.bad-value.}}")), term("node", IN_ANTI)],
            id="pod affinity with an invalid label value fails PreFilter",
        ),
        pytest.param(
            [
                term("region", expr("service", "In", "foo")),
                term("node", expr("service", "In", "{{.bad-value.}}")),
            ],
            id="pod affinity with an invalid label value in its second term fails PreFilter",
        ),
    ],
)
def test_an_invalid_label_value_fails_pre_filter_with_upstreams_message(affinity: list[Any]) -> None:
    from kubetaint.scheduler.extension_points import CycleState
    from kubetaint.scheduler.podinfo import make_pod_info

    sched = scheduler_with([NODE1], [])
    pi = make_pod_info(make_pod(labels=POD_LABEL, affinity=affinity))
    status = sched.framework_for(pi).plugins[PLUGIN].pre_filter(CycleState(), pi, sched.cache.node_list())
    assert (status.code, status.message()) == (Code.UnschedulableAndUnresolvable, BAD_VALUE_MESSAGE)
