"""Invalid scenarios are rejected before anything runs, naming file:line, the object and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubetaint.sim.api import ScenarioError, Simulation, SimulationError, simulate

HEAD = """apiVersion: kubetaint.dev/v1alpha1
kind: Scenario
metadata: {name: bad}
spec:
  nodeGroups:
  - {name: n, count: 2, zones: [zone-a]}
"""


@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        pytest.param(
            "  events:\n  - {at: 10s, reboot: n-0}\n",
            "bad.yaml:8: spec.events[0].reboot: unknown field (supported: at, kubectl, apply, delete, fault, node, nodes, zone)",
            id="an unknown event verb",
        ),
        pytest.param(
            "  events:\n  - {at: 10x, kubectl: cordon n-0}\n",
            'bad.yaml:8: spec.events[0].at: time: unknown unit "x" in duration "10x"',
            id="a bad duration",
        ),
        pytest.param(
            "  events:\n  - {at: 1m, node: n-9, fault: stop}\n",
            "bad.yaml:8: spec.events[0].node: unknown node 'n-9'",
            id="an unknown node in a fault",
        ),
        pytest.param(
            "  events:\n  - {at: 1m, zone: zone-z, fault: stop}\n",
            "bad.yaml:8: spec.events[0].zone: unknown zone 'zone-z' (known: zone-a)",
            id="an unknown zone in a fault",
        ),
        pytest.param(
            "  events:\n  - {at: 1m, node: n-0, fault: explode}\n",
            'bad.yaml:8: spec.events[0].fault: Unsupported value: "explode"',
            id="an unknown fault",
        ),
        pytest.param(
            "  events:\n  - {at: 1m, kubectl: taint nodes n-0 key=value:Sometimes}\n",
            "bad.yaml:8: spec.events[0].kubectl: invalid taint effect: Sometimes, unsupported taint effect",
            id="a kubectl taint spec kubectl rejects",
        ),
        pytest.param(
            "  events:\n  - {at: 1m, kubectl: cordon n-7}\n",
            'bad.yaml:8: spec.events[0].kubectl: nodes "n-7" not found',
            id="kubectl on an unknown node",
        ),
        pytest.param(
            "  settings: {nodeEvictionRate: fast}\n",
            "bad.yaml:7: spec.settings.nodeEvictionRate: expected a number, got 'fast'",
            id="a setting of the wrong type",
        ),
        pytest.param(
            "  settings: {evictionSpeed: 1}\n",
            "bad.yaml:7: spec.settings.evictionSpeed: unknown field (supported: nodeMonitorPeriod",
            id="an unknown setting",
        ),
        pytest.param(
            "  objects:\n  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}],"
            " tolerations: [{key: k, operator: Exists, value: v}]}}\n",
            'bad.yaml:8: Pod p: Pod "p" is invalid: spec.tolerations[0].operator: Invalid value: "v"',
            id="an invalid object names the object and the field",
        ),
    ],
)
def test_invalid_scenarios_are_rejected_before_running(tmp_path: Path, tail: str, expected: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(HEAD + tail, encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        simulate(path)
    assert str(err.value).replace(str(tmp_path) + "/", "").startswith(expected), str(err.value)


def test_every_problem_of_the_seed_until_gates_and_settings_is_reported_in_one_run(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        HEAD
        + "  until: 10x\n"
        + "  featureGates:\n    NoSuchGate: true\n    OtherMissingGate: false\n"
        + "  settings:\n    nodeMonitorPeriod: 5q\n    percentageOfNodesToScore: 50\n"
        + "    nodeStartupGracePeriod: 1m5\n"
        + "  events:\n  - {at: 1m, kubectl: cordon n-7}\n",
        encoding="utf-8",
    )
    with pytest.raises(ScenarioError) as err:
        simulate(path)
    assert str(err.value).replace(str(tmp_path) + "/", "").splitlines() == [
        'bad.yaml:7: spec.until: time: unknown unit "x" in duration "10x"',
        "bad.yaml:9: spec.featureGates.NoSuchGate: unrecognized feature gate: NoSuchGate",
        "bad.yaml:10: spec.featureGates.OtherMissingGate: unrecognized feature gate: OtherMissingGate",
        'bad.yaml:12: spec.settings.nodeMonitorPeriod: time: unknown unit "q" in duration "5q"',
        'bad.yaml:14: spec.settings.nodeStartupGracePeriod: time: missing unit in duration "1m5"',
        'bad.yaml:16: spec.events[0].kubectl: nodes "n-7" not found',
    ]


def test_yaml_syntax_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + "  events: [\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"s\.yaml:\d+: invalid YAML"):
        simulate(path)


def test_a_missing_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="No such file"):
        simulate(tmp_path / "nope.yaml")


def test_scenarios_may_be_yaml_text_or_dicts() -> None:
    doc = simulate(HEAD + "  until: 10s\n")
    assert doc["scenario"] == "bad" and doc["end"] == 10.0
    as_dict = {"apiVersion": "kubetaint.dev/v1alpha1", "kind": "Scenario", "spec": {"until": 5}}
    assert simulate(as_dict)["end"] == 5.0


def test_steppable_simulation_runs_kubectl_and_faults() -> None:
    sim = Simulation(HEAD + "  until: 10m\n")
    sim.advance("10s")
    assert sim.now == 10.0
    assert sim.kubectl("taint nodes n-0 dedicated=x:NoSchedule") == ["node/n-0 tainted"]
    assert sim.objects("nodes")[0]["spec"]["taints"][-1] == {
        "key": "dedicated",
        "value": "x",
        "effect": "NoSchedule",
    }
    sim.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        }
    )
    sim.run_until("20s")
    assert [r["node"] for r in sim.timeline if r["reason"] == "Scheduled"] == ["n-1"]
    assert sim.fault("stop", zone="zone-a") == ["n-0", "n-1"]
    with pytest.raises(SimulationError, match="unknown zone"):
        sim.fault("stop", zone="zone-q")
    assert sim.kubectl("uncordon n-0") == ["node/n-0 already uncordoned"]


def test_a_failing_event_is_recorded_and_the_run_goes_on() -> None:
    doc = simulate(
        HEAD + "  until: 1m\n  events:\n  - {at: 5s, kubectl: taint nodes n-0 a=b:NoSchedule}\n"
        "  - {at: 6s, kubectl: taint nodes n-0 a=c:NoSchedule}\n"
    )
    failed = [r for r in doc["timeline"] if r["reason"] == "EventFailed"]
    assert failed == [
        {
            "t": 6.0,
            "reason": "EventFailed",
            "kind": "Scenario",
            "name": "events[1]",
            "message": "node n-0 already has a taint(s) with same effect(s) and --overwrite is false",
        }
    ]
