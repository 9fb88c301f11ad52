"""Loading a scenario creates its pods in bulk (registry.bulk_creates): the objects stored are
those of admitting each afresh, and a bad pod among thousands of good ones of the same
template is still reported with its file:line, its name and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubetaint.registry.bulk import PodAdmissionMemo
from kubetaint.sim.api import ScenarioError, Simulation

HEAD = """apiVersion: kubetaint.dev/v1alpha1
kind: Scenario
metadata: {name: bulk}
spec:
  nodeGroups:
  - {name: n, count: 3, zones: [zone-a]}
  objects:
  - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 100}
"""
LINE_OF_FIRST_POD = HEAD.count("\n") + 1


def pod_line(i: int, *, name: str | None = None, node: str | None = None, extra: str = "") -> str:
    node = node if node is not None else f"n-{i % 3}"
    return (
        f"  - {{apiVersion: v1, kind: Pod, metadata: {{name: {name or f'app-{i}'}, labels: {{app: a}}}}, "
        f"spec: {{containers: [{{name: c, image: i, resources: {{requests: {{cpu: 100m}}}}}}], "
        f"nodeName: {node}{extra}}}}}\n"
    )


def scenario(count: int, odd: dict[int, str] | None = None) -> str:
    return HEAD + "".join((odd or {}).get(i) or pod_line(i) for i in range(count))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        pytest.param(
            pod_line(1000, node="Node_1"),
            'Pod app-1000: Pod "app-1000" is invalid: spec.nodeName: Invalid value: "Node_1"',
            id="an invalid node name",
        ),
        pytest.param(
            pod_line(1000, name="App-1000"),
            'Pod App-1000: Pod "App-1000" is invalid: metadata.name: Invalid value: "App-1000"',
            id="an invalid pod name",
        ),
        pytest.param(
            pod_line(1000, extra=", priorityClassName: nope"),
            'Pod app-1000: pods "app-1000" is forbidden: no PriorityClass with name nope was found',
            id="an unknown priority class",
        ),
        pytest.param(
            pod_line(1000, extra=", priority: 3"),
            'Pod app-1000: pods "app-1000" is forbidden: the integer value of priority (3) must not be provided',
            id="a priority of its own",
        ),
        pytest.param(
            pod_line(1000, extra=", activeDeadlineSeconds: 0"),
            'Pod app-1000: Pod "app-1000" is invalid: spec.activeDeadlineSeconds: Invalid value: 0',
            id="an invalid spec field",
        ),
    ],
)
def test_a_bad_pod_among_thousands_is_named_with_its_line_and_field(
    tmp_path: Path, line: str, expected: str
) -> None:
    path = tmp_path / "bulk.yaml"
    path.write_text(scenario(1500, {1000: line}), encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        Simulation(path)
    assert (
        str(err.value)
        .replace(str(tmp_path) + "/", "")
        .startswith(f"bulk.yaml:{LINE_OF_FIRST_POD + 1000}: {expected}")
    ), str(err.value)


def afresh(self: PodAdmissionMemo, obj: Any, validator: object) -> None:
    """The reference: every pod admitted afresh."""
    return None


def stored(sim: Simulation) -> str:
    resources = (
        "namespaces",
        "priorityclasses.scheduling.k8s.io",
        "nodes",
        "pods",
        "leases.coordination.k8s.io",
    )
    store = sim.cluster.store
    return json.dumps({r: store.list(r).items for r in resources} | {"rv": store.current_resource_version()})


def mixed_scenario() -> str:
    odd: dict[int, str] = {
        5: pod_line(5, extra=", priorityClassName: high"),
        6: pod_line(6, extra=", tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists}]"),
        7: pod_line(7, extra=", runtimeClassName: null"),
        8: pod_line(8, node="n-2", extra=", nodeSelector: {a: b}"),
    }
    text = scenario(60, odd)
    text += "  - {apiVersion: v1, kind: Namespace, metadata: {name: other}}\n"
    text += "".join(
        f"  - {{apiVersion: v1, kind: Pod, metadata: {{name: o-{i}, namespace: other}}, "
        f"spec: {{containers: [{{name: c, image: i}}], nodeName: n-{i % 3}}}}}\n"
        for i in range(10)
    )
    return text


def test_bulk_loading_stores_what_loading_one_by_one_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    text = mixed_scenario()
    in_bulk = Simulation(text)
    monkeypatch.setattr(PodAdmissionMemo, "admitted", afresh)
    plain = Simulation(text)
    assert stored(in_bulk) == stored(plain)
    assert len(in_bulk.objects("Pod")) == 70


def test_bulk_loaded_pods_run_like_pods_loaded_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    text = mixed_scenario().replace(
        "spec:\n", "spec:\n  until: 10m\n  events:\n  - {at: 1m, node: n-1, fault: stop}\n", 1
    )
    in_bulk: Any = Simulation(text).run()
    monkeypatch.setattr(PodAdmissionMemo, "admitted", afresh)
    plain: Any = Simulation(text).run()
    assert json.dumps(in_bulk) == json.dumps(plain)
    assert in_bulk["summary"] != {}
