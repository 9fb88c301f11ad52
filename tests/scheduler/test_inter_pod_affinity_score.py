"""InterPodAffinity PreScore/Score/NormalizeScore, ported from upstream's
interpodaffinity/scoring_test.go (TestPreferredAffinity) as data."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.pod_affinity_builders import expr, make_node, make_pod, scheduler_with, scores, term, weighted

PLUGIN = "InterPodAffinity"
CHINA = {"region": "China"}
INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}

STAY_WITH_S1_IN_REGION = {"preferred_affinity": [weighted(5, term("region", expr("security", "In", "S1")))]}
STAY_WITH_S2_IN_REGION = {"preferred_affinity": [weighted(6, term("region", expr("security", "In", "S2")))]}
AFFINITY3 = {
    "preferred_affinity": [
        weighted(8, term("region", expr("security", "NotIn", "S1"), expr("security", "In", "S2"))),
        weighted(2, term("region", expr("security", "Exists"), expr("wrongkey", "DoesNotExist"))),
    ]
}
HARD_AFFINITY = {
    "affinity": [
        term("region", expr("security", "In", "S1", "value2")),
        term("region", expr("security", "Exists"), expr("wrongkey", "DoesNotExist")),
    ]
}
AWAY_FROM_S1_IN_AZ = {"preferred_anti_affinity": [weighted(5, term("az", expr("security", "In", "S1")))]}
AWAY_FROM_S2_IN_AZ = {"preferred_anti_affinity": [weighted(5, term("az", expr("security", "In", "S2")))]}
STAY_WITH_S1_AWAY_FROM_S2 = {
    "preferred_affinity": [weighted(8, term("region", expr("security", "In", "S1")))],
    "preferred_anti_affinity": [weighted(5, term("az", expr("security", "In", "S2")))],
}
TEAM1 = {"matchExpressions": [expr("team", "In", "team1")]}
AFFINITY_NAMESPACE_SELECTOR = {
    "preferred_affinity": [
        weighted(
            5,
            term(
                "region", expr("security", "In", "S1"), namespaces=["subteam2.team2"], namespaceSelector=TEAM1
            ),
        )
    ]
}
ANTI_AFFINITY_NAMESPACE_SELECTOR = {
    "preferred_anti_affinity": [
        weighted(
            5,
            term(
                "region", expr("security", "In", "S1"), namespaces=["subteam2.team2"], namespaceSelector=TEAM1
            ),
        )
    ]
}
NAMESPACES = [
    {"metadata": {"name": "subteam1.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam2.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam1.team2", "labels": {"team": "team2"}}},
    {"metadata": {"name": "subteam2.team2", "labels": {"team": "team2"}}},
]


def nodes(*labels: dict[str, str]) -> list[dict[str, Any]]:
    return [make_node(f"node{i + 1}", lab) for i, lab in enumerate(labels)]


def on(node: str, labels: dict[str, str] | None = None, **kw: Any) -> dict[str, Any]:
    return make_pod(node=node, labels=labels or {}, **kw)


CASES = [
    pytest.param(
        make_pod(labels=S1), [], nodes(CHINA, INDIA, AZ1), [0, 0, 0], id="no affinity anywhere: skipped"
    ),
    pytest.param(
        make_pod(labels=S1, **STAY_WITH_S1_IN_REGION),
        [on("node1", S1), on("node2", S2), on("node3", S1)],
        nodes(CHINA, INDIA, AZ1),
        [100, 0, 0],
        id="affinity: the node with the topology key and a matching pod scores highest",
    ),
    pytest.param(
        make_pod(**STAY_WITH_S1_IN_REGION),
        [on("node1", S1)],
        nodes(CHINA, CHINA_AZ1, INDIA),
        [100, 100, 0],
        id="affinity: every node of the matching pod's topology value scores alike",
    ),
    pytest.param(
        make_pod(labels=S1, **STAY_WITH_S2_IN_REGION),
        [
            on("node1", S2),
            on("node1", S2),
            on("node2", S2),
            on("node3", S2),
            on("node4", S2),
            on("node5", S2),
        ],
        nodes(CHINA, INDIA, CHINA, CHINA, INDIA),
        [100, 0, 100, 100, 0],
        id="affinity: the region with more matching pods scores highest",
    ),
    pytest.param(
        make_pod(labels=S1, **AFFINITY3),
        [on("node1", S1), on("node2", S2), on("node3", S1)],
        nodes(CHINA, INDIA, AZ1),
        [20, 100, 0],
        id="affinity: several operators and weights, some terms not matching",
    ),
    pytest.param(
        make_pod(labels=S2),
        [on("node1", S1, **STAY_WITH_S1_IN_REGION), on("node2", S2, **STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA, AZ1),
        [0, 100, 0],
        id="affinity symmetry: existing pods' preferred affinity",
    ),
    pytest.param(
        make_pod(namespace="subteam1.team1", labels=S1),
        [on("node1", S1, **AFFINITY_NAMESPACE_SELECTOR), on("node2", S2, **STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA, AZ1),
        [100, 0, 0],
        id="affinity symmetry with a namespace selector",
    ),
    pytest.param(
        make_pod(namespace="subteam1.team1", labels=S1),
        [on("node1", S1, **ANTI_AFFINITY_NAMESPACE_SELECTOR), on("node2", S2, **STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA, AZ1),
        [0, 100, 100],
        id="anti-affinity symmetry with a namespace selector",
    ),
    pytest.param(
        make_pod(labels=S1),
        [on("node1", S1, **HARD_AFFINITY), on("node2", S2, **HARD_AFFINITY)],
        nodes(CHINA, INDIA, AZ1),
        [100, 100, 0],
        id="affinity symmetry: existing pods' required affinity weighs hardPodAffinityWeight",
    ),
    pytest.param(
        make_pod(labels=S1, **AWAY_FROM_S1_IN_AZ),
        [on("node1", S1), on("node2", S2)],
        nodes(AZ1, CHINA),
        [0, 100],
        id="anti-affinity: the node without matching pods scores highest",
    ),
    pytest.param(
        make_pod(labels=S1, **AWAY_FROM_S1_IN_AZ),
        [on("node1", S1), on("node2", S1)],
        nodes(AZ1, CHINA),
        [0, 100],
        id="anti-affinity: the node without the topology key scores highest",
    ),
    pytest.param(
        make_pod(labels=S1, **AWAY_FROM_S1_IN_AZ),
        [on("node1", S1), on("node1", S1), on("node2", S2)],
        nodes(AZ1, INDIA),
        [0, 100],
        id="anti-affinity: the node with more matching pods scores lowest",
    ),
    pytest.param(
        make_pod(labels=S2),
        [on("node1", S1, **AWAY_FROM_S2_IN_AZ), on("node2", S2, **AWAY_FROM_S1_IN_AZ)],
        nodes(AZ1, AZ2),
        [0, 100],
        id="anti-affinity symmetry: existing pods' preferred anti-affinity",
    ),
    pytest.param(
        make_pod(labels=S1, **STAY_WITH_S1_AWAY_FROM_S2),
        [on("node1", S1), on("node2", S1)],
        nodes(CHINA, AZ1),
        [100, 0],
        id="affinity and anti-affinity together",
    ),
    pytest.param(
        make_pod(labels=S1, **STAY_WITH_S1_AWAY_FROM_S2),
        [
            on("node1", S1),
            on("node1", S1),
            on("node2", S1),
            on("node3", S1),
            on("node3", S1),
            on("node4", S1),
            on("node5", S1),
        ],
        nodes(CHINA_AZ1, INDIA, CHINA, CHINA, INDIA),
        [100, 0, 100, 100, 0],
        id="affinity and anti-affinity with pods of the same labels",
    ),
    pytest.param(
        make_pod(labels=S1, **STAY_WITH_S1_AWAY_FROM_S2),
        [
            on("node1", S1),
            on("node2", S2),
            on("node3", **STAY_WITH_S1_AWAY_FROM_S2),
            on("node4", **AWAY_FROM_S1_IN_AZ),
        ],
        nodes(CHINA, AZ1, INDIA, AZ2),
        [100, 0, 100, 0],
        id="affinity, anti-affinity and their symmetry together",
    ),
    pytest.param(
        make_pod(labels=S1),
        [on("node1", S1), on("node2", **STAY_WITH_S1_AWAY_FROM_S2)],
        nodes(CHINA, CHINA),
        [0, 0],
        id="some nodes of a topology without pods with affinity",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "node_list", "want"), CASES)
def test_preferred_affinity(pod: Any, existing: list[Any], node_list: list[Any], want: list[int]) -> None:
    sched = scheduler_with(node_list, existing)
    for ns in NAMESPACES:
        sched.add_namespace(ns)
    got = scores(sched, PLUGIN, pod)
    assert [got[n["metadata"]["name"]] for n in node_list] == want


def test_hard_pod_affinity_weight_zero_ignores_existing_required_terms() -> None:
    config = {"profiles": [{"pluginConfig": [{"name": PLUGIN, "args": {"hardPodAffinityWeight": 0}}]}]}
    sched = scheduler_with(nodes(CHINA, INDIA, AZ1), [on("node1", S1, **HARD_AFFINITY)], config)
    assert scores(sched, PLUGIN, make_pod(labels=S1)) == {"node1": 0, "node2": 0, "node3": 0}


def test_ignore_preferred_terms_of_existing_pods_skips_a_pod_without_preferences() -> None:
    config = {
        "profiles": [
            {"pluginConfig": [{"name": PLUGIN, "args": {"ignorePreferredTermsOfExistingPods": True}}]}
        ]
    }
    sched = scheduler_with(nodes(CHINA, INDIA), [on("node1", S1, **STAY_WITH_S2_IN_REGION)], config)
    assert scores(sched, PLUGIN, make_pod(labels=S2)) == {"node1": 0, "node2": 0}


def test_hard_pod_affinity_weight_out_of_range_is_a_config_error() -> None:
    from kubetaint.scheduler.config import ConfigError

    config = {"profiles": [{"pluginConfig": [{"name": PLUGIN, "args": {"hardPodAffinityWeight": 101}}]}]}
    with pytest.raises(
        ConfigError, match=r"hardPodAffinityWeight: Invalid value: 101: not in valid range \[0-100\]"
    ):
        scheduler_with([], [], config)
