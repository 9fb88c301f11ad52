"""TaintNodesByCondition (nodetaint): new nodes get node.kubernetes.io/not-ready:NoSchedule."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.admission import CONNECT, CREATE, DELETE, UPDATE, Attributes
from kubetaint.admission.nodetaint import TaintNodesByCondition

from .builders import lookup, node

NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("taints", "expected"),
    [
        pytest.param(None, [NOT_READY], id="a node without taints gets the not-ready NoSchedule taint"),
        pytest.param([], [NOT_READY], id="a node with an empty taint list gets it too"),
        pytest.param([NOT_READY], [NOT_READY], id="a node that already has it is unchanged"),
        pytest.param([{**NOT_READY, "value": "x"}], [{**NOT_READY, "value": "x"}],
                     id="the value is ignored when looking for the taint"),
        pytest.param([{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}],
                     [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}, NOT_READY],
                     id="the same key with another effect does not count"),
        pytest.param([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
                     [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}, NOT_READY],
                     id="other taints are kept and the not-ready taint appended"),
    ],
)  # fmt: skip
def test_node_create(taints: list[dict[str, Any]] | None, expected: list[dict[str, Any]]) -> None:
    requested = node(taints=taints)
    before = copy.deepcopy(requested)
    admitted = TaintNodesByCondition().admit(Attributes(CREATE, "nodes", requested, name="n1"), lookup())
    assert admitted is not None
    assert admitted["spec"]["taints"] == expected
    assert requested == before


def test_subresources_and_pods_are_ignored() -> None:
    plugin = TaintNodesByCondition()
    n = node()
    assert plugin.admit(Attributes(CREATE, "nodes", n, subresource="status"), lookup()) is n
    p = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
    assert plugin.admit(Attributes(CREATE, "pods", p), lookup()) is p


@pytest.mark.parametrize(
    ("operation", "handled"),
    [
        pytest.param(CREATE, True, id="create is handled"),
        pytest.param(UPDATE, False, id="update is not handled: existing nodes keep their taints"),
        pytest.param(DELETE, False, id="delete is not handled"),
        pytest.param(CONNECT, False, id="connect is not handled"),
    ],
)
def test_handles(operation: str, handled: bool) -> None:
    assert TaintNodesByCondition().handles(operation) is handled
