"""Upstream's NodeRestriction node-label cases as data (plugin/pkg/admission/noderestriction/
admission_test.go: setAllowedCreateLabels, setAllowedUpdateLabels, setForbiddenCreateLabels,
setForbiddenUpdateLabels and the node create/update cases using them)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.admission.noderestriction import Operation, Write, check

JSON = dict[str, Any]
NODE = "mynode"

#: setAllowedUpdateLabels (also the allowed create labels).
ALLOWED = [
    "foo",
    "example.com/foo",
    "kubernetes.io/hostname",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "kubelet.kubernetes.io/foo",
    "foo.kubelet.kubernetes.io/foo",
    "node.kubernetes.io/foo",
    "foo.node.kubernetes.io/foo",
]
#: setForbiddenCreateLabels and setForbiddenUpdateLabels (the same four).
FORBIDDEN = [
    "node-restriction.kubernetes.io/foo",
    "foo.node-restriction.kubernetes.io/foo",
    "other.kubernetes.io/foo",
    "other.k8s.io/foo",
]
FORBIDDEN_SORTED = ", ".join(sorted(FORBIDDEN))


def node(labels: list[str], value: str = "value") -> JSON:
    return {
        "metadata": {"name": NODE, "uid": "mynode-uid", "labels": dict.fromkeys(labels, value)},
        "spec": {},
    }


BARE = node([])


@pytest.mark.parametrize(
    ("operation", "obj", "old", "err"),
    [
        pytest.param("CREATE", node(ALLOWED), None, "", id="allow create with allowed labels"),
        pytest.param(
            "CREATE",
            node(ALLOWED + FORBIDDEN),
            None,
            f'node "mynode" is not allowed to set the following labels: {FORBIDDEN_SORTED}',
            id="forbid create with forbidden labels",
        ),
        pytest.param("UPDATE", node(ALLOWED), BARE, "", id="allow update adding allowed labels"),
        pytest.param("UPDATE", BARE, node(ALLOWED), "", id="allow update removing allowed labels"),
        pytest.param(
            "UPDATE", node(ALLOWED, "value2"), node(ALLOWED), "", id="allow update changing allowed labels"
        ),
        pytest.param(
            "UPDATE",
            node(FORBIDDEN),
            BARE,
            f"is not allowed to modify labels: {FORBIDDEN_SORTED}",
            id="forbid update adding forbidden labels",
        ),
        pytest.param(
            "UPDATE",
            BARE,
            node(FORBIDDEN),
            f"is not allowed to modify labels: {FORBIDDEN_SORTED}",
            id="forbid update removing forbidden labels",
        ),
        pytest.param(
            "UPDATE",
            node(FORBIDDEN, "value2"),
            node(FORBIDDEN),
            f"is not allowed to modify labels: {FORBIDDEN_SORTED}",
            id="forbid update changing forbidden labels",
        ),
        pytest.param(
            "UPDATE",
            node(ALLOWED + FORBIDDEN),
            node(ALLOWED + FORBIDDEN),
            "",
            id="allow update keeping forbidden labels",
        ),
    ],
)
def test_node_labels(operation: Operation, obj: JSON, old: JSON | None, err: str) -> None:
    assert (
        check(NODE, Write(f"system:node:{NODE}", operation, "nodes", "", obj, old), lambda _: "mynode-uid")
        == err
    )
