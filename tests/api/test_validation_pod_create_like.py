"""validate_pod_create_like: for a pod whose spec is a clean pod's but for nodeName's value (pods
stamped from one template), it reports exactly what validate reports, metadata and nodeName errors
included."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.api.validation import validate, validate_pod_create_like

JSON = dict[str, Any]
CLEAN: JSON = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "app-0", "namespace": "default", "labels": {"app": "a"}},
    "spec": {
        "containers": [{"name": "app", "image": "app", "resources": {"requests": {"cpu": "100m"}}}],
        "nodeName": "node-0",
        "tolerations": [{"key": "k", "operator": "Lt", "value": "5", "effect": "NoSchedule"}],
        "schedulingGates": [{"name": "wait"}],
    },
}


def like(node: Any = "node-1", **meta: Any) -> JSON:
    pod = copy.deepcopy(CLEAN)
    pod["metadata"].update(meta)
    if node is None:
        del pod["spec"]["nodeName"]
    else:
        pod["spec"]["nodeName"] = node
    return pod


@pytest.mark.parametrize(
    ("gates", "operator"),
    [({}, "Equal"), ({"TaintTolerationComparisonOperators": True}, "Lt")],
    ids=["comparison gate off", "comparison gate on with an Lt toleration"],
)
@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(like(""), id="an empty node name like the clean pod"),
        pytest.param(like(None), id="no node name at all"),
        pytest.param(like("node-7"), id="a node name where scheduling gates forbid one"),
        pytest.param(like("Node_7"), id="an invalid node name"),
        pytest.param(like("", name="App-1"), id="an invalid pod name"),
        pytest.param(like("", namespace="Bad_NS"), id="an invalid namespace"),
        pytest.param(like("", labels={"a/b/c": "x"}), id="an invalid label"),
        pytest.param(like("", name=""), id="no name"),
        pytest.param(like("", generateName="app-"), id="a generated name"),
    ],
)
def test_a_pod_like_a_clean_one_gets_what_validate_gives(
    pod: JSON, gates: dict[str, bool], operator: str
) -> None:
    first = like("")
    for p in (first, pod):
        p["spec"]["tolerations"][0]["operator"] = operator
    assert validate(first, feature_gates=gates) == []  # the precondition: the first pod is clean
    assert validate_pod_create_like(pod, feature_gates=gates) == validate(pod, feature_gates=gates)
