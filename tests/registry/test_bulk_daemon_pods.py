"""DaemonSet pods share their admission result although each carries its own node-name affinity
(registry.bulk masks that one value in keys, as it masks nodeName). Whatever the affinity's
shape and value, everything stored (objects, key order, uids, resourceVersions) and every
rejection must be what admitting each pod afresh gives, one by one and in bulk."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_bulk_creates import (
    ALL_POD_PLUGINS,
    SETUP,
    RecordingLookup,
    admit,
    create_all,
    make_registry,
    one_by_one_and_in_bulk,
    pod,
)

from kubetaint.controllers.daemonset.placement import node_name_affinity
from kubetaint.registry import StoreLookup
from kubetaint.registry.bulk import affinity_node, pod_key

JSON = dict[str, Any]
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
]


def daemon_pod(name: str, node: Any, base: JSON | None = None, **spec: Any) -> JSON:
    """A pod as the DaemonSet controller creates it for `node` (no nodeName: the scheduler binds
    it), from a template affinity `base`."""
    obj = pod(name, node=None, tolerations=copy.deepcopy(DAEMON_TOLERATIONS), **spec)
    obj["spec"]["affinity"] = node_name_affinity(copy.deepcopy(base), node)
    obj["metadata"]["labels"] = {"app": "ds"}
    return obj


def field_term(**requirement: Any) -> JSON:
    return {"matchFields": [requirement]}


def with_terms(obj: JSON, *terms: JSON) -> JSON:
    """`obj` with its required node affinity terms replaced."""
    result = copy.deepcopy(obj)
    result["spec"]["affinity"]["nodeAffinity"][REQUIRED]["nodeSelectorTerms"] = list(terms)
    return result


PREFERRED = {
    "nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "z", "operator": "Exists"}]}}
        ]
    },
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "ds"}}}
        ]
    },
}

VARIANTS = [
    pytest.param(daemon_pod("v", "node-9"), id="another node"),
    pytest.param(daemon_pod("v", "Node_9"), id="a node value that is no DNS subdomain"),
    pytest.param(daemon_pod("v", ""), id="an empty node value"),
    pytest.param(daemon_pod("v", "n" * 254), id="a node value too long for a DNS subdomain"),
    pytest.param(daemon_pod("v", 7), id="a node value that is a number"),
    pytest.param(daemon_pod("v", "node-9", base=PREFERRED), id="preferred terms and pod anti-affinity"),
    pytest.param(
        with_terms(daemon_pod("v", "x"), field_term(key="metadata.name", operator="In", values=["a", "b"])),
        id="two node values",
    ),
    pytest.param(
        with_terms(daemon_pod("v", "x"), field_term(key="metadata.name", operator="NotIn", values=["a"])),
        id="the NotIn operator",
    ),
    pytest.param(
        with_terms(daemon_pod("v", "x"), field_term(key="metadata.uid", operator="In", values=["a"])),
        id="another field key",
    ),
    pytest.param(
        with_terms(daemon_pod("v", "x"), field_term(operator="In", key="metadata.name", values=["a"])),
        id="the requirement's keys in another order",
    ),
    pytest.param(
        with_terms(
            daemon_pod("v", "x"),
            {
                "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}],
                "matchExpressions": [{"key": "z", "operator": "Exists"}],
            },
        ),
        id="a term with label expressions too",
    ),
    pytest.param(
        with_terms(
            daemon_pod("v", "x"),
            field_term(key="metadata.name", operator="In", values=["a"]),
            field_term(key="metadata.name", operator="In", values=["b"]),
        ),
        id="two terms",
    ),
    pytest.param(
        daemon_pod(
            "v", "node-9", base={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{}]}}
        ),
        id="an invalid preferred term beside the node-name term",
    ),
    pytest.param(daemon_pod("v", "node-9", priorityClassName="high"), id="a priority class"),
    pytest.param(daemon_pod("v", "node-9", namespace="strict"), id="a namespace refusing every toleration"),
    pytest.param(daemon_pod("v", "node-9", activeDeadlineSeconds=0), id="an invalid spec field"),
    pytest.param(
        {**daemon_pod("v", "node-9"), "spec": {"nodeName": "node-9", **daemon_pod("v", "n")["spec"]}},
        id="a node name too",
    ),
]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_variant_among_daemon_pods_is_admitted_as_on_its_own(variant: JSON) -> None:
    steps = [("pods", daemon_pod(f"d{i}", f"node-{i}")) for i in range(3)]
    steps += [
        ("pods", variant),
        ("pods", copy.deepcopy({**variant, "metadata": {**variant["metadata"], "name": "v2"}})),
    ]
    steps += [("pods", daemon_pod(f"e{i}", f"node-{i}")) for i in range(3, 6)]
    expected, got = one_by_one_and_in_bulk(steps)
    assert got == expected


@pytest.mark.usefixtures("default_mode")
def test_daemon_pods_of_one_template_hit_one_entry_each_with_its_own_affinity() -> None:
    registry = make_registry()
    create_all(registry, SETUP)
    created = [registry.create("pods", daemon_pod(f"d{i}", f"node-{i}")) for i in range(20)]
    assert len(registry._pod_memo) == 1
    for i, stored in enumerate(created):
        assert affinity_node(stored["spec"]) == f"node-{i}"
        assert stored["spec"]["tolerations"] == created[0]["spec"]["tolerations"]


@pytest.mark.parametrize(
    ("obj", "node"),
    [
        pytest.param(daemon_pod("d", "node-1"), "node-1", id="a DaemonSet pod"),
        pytest.param(daemon_pod("d", "node-1", base=PREFERRED), "node-1", id="with preferred terms"),
        pytest.param(pod("p"), None, id="a pod without affinity"),
        pytest.param(daemon_pod("d", 1), None, id="a value that is not a string"),
        pytest.param(
            with_terms(daemon_pod("d", "x"), field_term(key="metadata.name", operator="In", values=[])),
            None,
            id="no value",
        ),
        pytest.param(
            with_terms(
                daemon_pod("d", "x"),
                field_term(key="metadata.name", operator="In", values=["a"], extra="y"),
            ),
            None,
            id="a requirement with another key",
        ),
    ],
)
def test_the_node_name_affinity_is_read_only_in_its_exact_shape(obj: JSON, node: str | None) -> None:
    assert affinity_node(obj["spec"]) == node


def test_keys_mask_the_affinity_node_and_nothing_else() -> None:
    assert pod_key(daemon_pod("a", "n1")) == pod_key(daemon_pod("b", "n2"))
    assert pod_key(daemon_pod("a", "n1")) != pod_key(daemon_pod("a", "n1", base=PREFERRED))
    assert pod_key(daemon_pod("a", "n1")) != pod_key(daemon_pod("a", 1))
    two = with_terms(
        daemon_pod("a", "x"), field_term(key="metadata.name", operator="In", values=["n1", "n2"])
    )
    assert pod_key(two) != pod_key(
        with_terms(daemon_pod("a", "x"), field_term(key="metadata.name", operator="In", values=["n1", "n3"]))
    )


AFFINITIES = st.one_of(st.none(), st.just(PREFERRED))


@settings(max_examples=40, deadline=None)
@given(
    base=AFFINITIES,
    priority_class=st.sampled_from([None, "high"]),
    runtime_class=st.sampled_from([None, "gvisor"]),
    nodes=st.tuples(st.sampled_from(["n1", "n2.example"]), st.sampled_from(["n3", "n-4"])),
)
def test_pod_admission_never_reads_the_affinity_node(
    base: JSON | None,
    priority_class: str | None,
    runtime_class: str | None,
    nodes: tuple[str, str],
) -> None:
    """The premise of masking: admitted specs differ only by the affinity, which admission
    passes on as given (the very object)."""
    assert set(ALL_POD_PLUGINS) >= {"Priority", "RuntimeClass"}
    registry = make_registry()
    create_all(registry, SETUP)
    lookup = RecordingLookup(StoreLookup(registry.store))
    spec: JSON = {}
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    if runtime_class is not None:
        spec["runtimeClassName"] = runtime_class
    results = []
    for node in nodes:
        obj = daemon_pod("p", node, base=base, **spec)
        try:
            admitted = admit(registry, obj, lookup)
        except Exception as err:  # both must fail alike
            results.append(repr(err))
            continue
        assert admitted is not None
        assert admitted["spec"]["affinity"] is obj["spec"]["affinity"]
        masked = dict(admitted["spec"])
        masked["affinity"] = "?"
        results.append(json.dumps({**admitted, "spec": masked}))
    assert results[0] == results[1]
