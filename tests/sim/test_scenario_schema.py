"""The Scenario JSON Schema: every example follows it, it uses only the keywords the loader's
checker knows, and the loader reports what it finds with file:line, all problems in one run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubetaint.sim.api import ScenarioError, simulate
from kubetaint.sim.scenario_schema import ANNOTATIONS, KEYWORDS, check, scenario_schema

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name) for p in EXAMPLES])
def test_every_example_follows_the_schema(path: Path) -> None:
    assert check(yaml.safe_load(path.read_text(encoding="utf-8"))) == []


def _schemas(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for child in value.values():
                    yield from _schemas(child)
            elif key in ("items", "additionalProperties") and isinstance(value, dict):
                yield from _schemas(value)
            elif key == "anyOf":
                for child in value:
                    yield from _schemas(child)


def test_the_schema_uses_only_keywords_the_checker_knows() -> None:
    for schema in _schemas(scenario_schema()):
        assert set(schema) <= KEYWORDS | ANNOTATIONS, sorted(set(schema) - KEYWORDS - ANNOTATIONS)


def test_the_schema_is_draft_2020_12_json_schema() -> None:
    schema = scenario_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["apiVersion"] == {"const": "kubetaint.dev/v1alpha1"}


HEAD = "apiVersion: kubetaint.dev/v1alpha1\nkind: Scenario\n"


def test_every_structural_problem_is_reported_with_its_line_in_one_run(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        HEAD
        + "metadata:\n  name: x\n  events: []\n"
        + "spec:\n  nodeGroups:\n  - name: a\n    taints: []\n    zone: z\n  seed: 1\n  seed: 2\n  settings: 5\n"
    )
    with pytest.raises(ScenarioError) as err:
        simulate(path)
    assert str(err.value).splitlines() == [
        f'{path}:12: duplicate field "seed"',
        f"{path}:5: metadata.events: unknown field (supported: name, labels, annotations)",
        f"{path}:9: spec.nodeGroups[0].taints: unknown field (supported: name, count, zones, template)",
        f"{path}:10: spec.nodeGroups[0].zone: unknown field (supported: name, count, zones, template)",
        f"{path}:13: spec.settings: expected an object, got 5",
    ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            "  nodeGroups: [{name: a, template: {spec: {taint: []}}}]\n",
            ':5: spec.nodeGroups[0].template: Node in version "v1" cannot be handled as a Node: '
            'strict decoding error: unknown field "spec.taint"',
            id="a node template decodes strictly as a Node",
        ),
        pytest.param(
            "  nodeGroups: [{name: a}]\n  events:\n  - at: 1s\n    apply: {apiVersion: v1, kind: Pod, metadata: {name: p},"
            " spec: {containers: [{name: c, image: i}], tolerationz: []}}\n",
            ':8: spec.events[0].apply: Pod: Pod in version "v1" cannot be handled as a Pod: '
            'strict decoding error: unknown field "spec.tolerationz"',
            id="an applied manifest decodes strictly",
        ),
        pytest.param(
            "  nodeGroups: [{name: a}]\n  objects:\n  - {apiVersion: v1, kind: Pod, metadata: {name: p},"
            " spec: {containers: [{name: c, image: i}], toleration: []}}\n",
            ':7: Pod p: Pod in version "v1" cannot be handled as a Pod: '
            'strict decoding error: unknown field "spec.toleration"',
            id="an object decodes strictly",
        ),
        pytest.param(
            "  nodeGroups: [{name: a, count: 100000000}]\n",
            ":5: spec.nodeGroups[0].count: must be at most 50000, got 100000000",
            id="a node count over the bound",
        ),
        pytest.param(
            "  nodeGroups: [{name: a, count: 15000}, {name: b, count: 15000}]\n",
            ":5: spec.nodeGroups: the scenario has 30000 nodes; at most 20000 are simulated",
            id="node groups over the bound together",
        ),
        pytest.param(
            "  nodeGroups: [{name: a, count: 1000}]\n  until: 1000h\n",
            ":6: spec.until: 1000 nodes for 1000h is 1e+06 node-hours; at most 100000 are simulated",
            id="a run too long for its nodes",
        ),
        pytest.param(
            "  until: .inf\n",
            ":5: spec.until: must be at most 8784h, got inf",
            id="an infinite run",
        ),
    ],
)
def test_strict_and_bounded_scenarios(tmp_path: Path, spec: str, message: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + "metadata: {name: x}\nspec:\n" + spec)
    with pytest.raises(ScenarioError) as err:
        simulate(path)
    assert str(err.value) == f"{path}{message}"


def test_duplicate_keys_in_a_json_scenario_name_their_path(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        '{"apiVersion": "kubetaint.dev/v1alpha1", "kind": "Scenario",\n'
        ' "spec": {"nodeGroups": [{"name": "a", "count": 1, "count": 2}]}}\n'
    )
    with pytest.raises(ScenarioError) as err:
        simulate(path)
    assert str(err.value) == f"{path}:2: spec.nodeGroups[0].count: duplicate field"


def test_a_multi_document_scenario_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + "spec: {}\n---\n" + HEAD + "spec: {}\n")
    with pytest.raises(ScenarioError, match=r"s\.yaml:5: expected one document, got 2"):
        simulate(path)


def test_every_refused_object_is_reported_in_one_run(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        HEAD
        + "metadata: {name: x}\nspec:\n  nodeGroups: [{name: a}]\n  objects:\n"
        + "  - {apiVersion: v1, kind: Pod, metadata: {name: p1}, spec: {containers: [{name: c, image: i}], toleration: []}}\n"
        + "  - {apiVersion: v1, kind: Pod, metadata: {name: p2}, spec: {containers: []}}\n"
        + "  - {apiVersion: v1, kind: Pod, metadata: {name: p3}, spec: {containers: [{name: c, image: i}]}}\n"
        + "  - {apiVersion: v1, kind: Node, metadata: {name: n}, spec: {taints: [{key: k, effect: NoSchedul}]}}\n"
    )
    with pytest.raises(ScenarioError) as err:
        simulate(path)
    lines = str(err.value).splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"{path}:10: Node n: ") and 'Unsupported value: "NoSchedul"' in lines[0]
    assert lines[1].startswith(f"{path}:7: Pod p1: ") and 'unknown field "spec.toleration"' in lines[1]
    assert lines[2].startswith(f"{path}:8: Pod p2: ") and "spec.containers: Required value" in lines[2]


def test_every_bad_event_and_node_group_is_reported_in_one_run(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        HEAD
        + "metadata: {name: x}\nspec:\n  nodeGroups: [{name: a}, {name: a}]\n  events:\n"
        + "  - {at: 1s, fault: stop, node: ghost}\n"
        + "  - {at: 2s, kubectl: cordon nobody}\n"
        + "  - {at: 3s, kubectl: cordon a-0}\n"
    )
    with pytest.raises(ScenarioError) as err:
        simulate(path)
    assert str(err.value).splitlines() == [
        f"{path}:5: spec.nodeGroups[1].name: Duplicate value: 'a'",
        f"{path}:7: spec.events[0].node: unknown node 'ghost'",
        f'{path}:8: spec.events[1].kubectl: nodes "nobody" not found',
    ]


def test_a_monitor_period_too_small_for_the_run_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + "metadata: {name: x}\nspec:\n  until: 1h\n  settings: {nodeMonitorPeriod: 1ms}\n")
    with pytest.raises(ScenarioError, match=r"3\.6e\+06 node monitor passes; at most 1000000 are simulated"):
        simulate(path)
