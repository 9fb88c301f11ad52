"""Loading a scenario creates its consecutive pods as runs (one Registry.commit each): everything
stored, every later step and every refusal's message must be those of one create per pod, the
namespaces a run's pods need created in their place, and a refusal of an earlier pod (by the
registry) reported before a later pod's decoding refusal."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubetaint.registry import podbatch
from kubetaint.sim import cluster
from kubetaint.sim.api import ScenarioError, Simulation

JSON = dict[str, Any]
TEMPLATE: JSON = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]}


def pod(i: int, namespace: str | None = None, **spec: Any) -> JSON:
    meta: JSON = {"name": f"app-{i}", "labels": {"app": "a"}}
    if namespace is not None:
        meta["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {**TEMPLATE, "nodeName": "n-0", **spec},
    }


def scenario(objects: list[JSON]) -> JSON:
    return {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "runs"},
        "spec": {
            "seed": 2,
            "until": "90s",
            "nodeGroups": [{"name": "n", "count": 2, "zones": ["zone-a"]}],
            "objects": objects,
            "events": [{"at": "30s", "node": "n-0", "fault": "stop"}],
        },
    }


def one_create_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference: a registry commit of pod creates as one Registry.create per pod."""
    monkeypatch.setattr(podbatch, "create_pods", podbatch.create_each)


def outcome(document: JSON) -> str:
    try:
        sim = Simulation(document)
    except ScenarioError as err:
        return f"refused: {err}"
    store = sim.cluster.store
    loaded = json.dumps([store.list(r).items for r in ("pods", "namespaces")])
    return json.dumps([loaded, sim.run()])


MIXES = [
    pytest.param([pod(i) for i in range(7)], id="pods of one template"),
    pytest.param(
        [pod(0), pod(1, namespace="team"), pod(2), pod(3, namespace="other"), pod(4, namespace="team")],
        id="pods naming namespaces not created yet",
    ),
    pytest.param(
        [
            pod(0),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
            pod(1, namespace="team"),
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "high"},
                "value": 9,
            },
            pod(2, priorityClassName="high"),
            pod(3),
        ],
        id="pods among other kinds",
    ),
    pytest.param([pod(0), pod(1, nodeName="Node_1"), pod(2)], id="a pod the registry refuses"),
    pytest.param([pod(0), pod(0), pod(2)], id="a pod whose name is taken"),
    pytest.param([pod(0), pod(1, activeDeadlineSeconds="x"), pod(2)], id="a pod that does not decode"),
    pytest.param(
        [pod(0), pod(1, nodeName="Node_1"), pod(2, activeDeadlineSeconds="x")],
        id="a refused pod before a pod that does not decode",
    ),
    pytest.param(
        [pod(0), pod(1, activeDeadlineSeconds="x"), pod(2, nodeName="Node_1")],
        id="a pod that does not decode before a refused pod",
    ),
    pytest.param(
        [pod(0), pod(1, nodeName="Node_1"), pod(2, namespace="team")],
        id="a refused pod before a pod naming a new namespace",
    ),
]


@pytest.mark.parametrize("run_limit", [pytest.param(4096, id="one run"), pytest.param(2, id="runs of two")])
@pytest.mark.parametrize("objects", MIXES)
def test_a_load_in_runs_is_a_load_of_one_create_per_pod(
    objects: list[JSON], run_limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster, "_RUN_LIMIT", run_limit)
    got = outcome(scenario(objects))
    with monkeypatch.context() as reference:
        one_create_each(reference)
        expected = outcome(scenario(objects))
    assert got == expected


@pytest.mark.parametrize(
    ("objects", "message"),
    [
        pytest.param(
            [pod(0), pod(1, nodeName="Node_1"), pod(2, activeDeadlineSeconds="x")],
            'Pod app-1: Pod "app-1" is invalid: spec.nodeName: Invalid value: "Node_1"',
            id="the refused pod is named, not the later pod that does not decode",
        ),
        pytest.param(
            [pod(0), pod(0)],
            'Pod app-0: pods "app-0" already exists',
            id="a second pod of one name is refused as it would be on its own",
        ),
    ],
)
def test_the_first_failing_pod_is_named(objects: list[JSON], message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        Simulation(scenario(objects))
    assert message in str(err.value)
