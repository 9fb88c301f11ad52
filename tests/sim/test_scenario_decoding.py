"""Objects of the wrong JSON shape are refused as kube-apiserver's decoder refuses a request body
(before admission and validation), with its message, the object and file:line — never a traceback
from deeper in the engine, never stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubetaint.sim.api import ScenarioError, Simulation, SimulationError, simulate

HEAD = """apiVersion: kubetaint.dev/v1alpha1
kind: Scenario
metadata: {name: bad}
spec:
  nodeGroups:
  - {name: n, count: 1}
  settings: {enableAdmissionPlugins: [PodTolerationRestriction]}
  objects:
"""
CONTAINERS = "containers: [{name: c, image: i}]"
PREFIX = 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal'

CASES = [
    pytest.param(
        f'{{{CONTAINERS}}}, status: "Running"',
        f"{PREFIX} string into Go struct field Pod.status of type v1.PodStatus",
        id="a string status",
    ),
    pytest.param(
        "7",
        f"{PREFIX} number into Go struct field Pod.spec of type v1.PodSpec",
        id="a number spec",
    ),
    pytest.param(
        f"{{{CONTAINERS}, tolerations: 5}}",
        f"{PREFIX} number into Go struct field PodSpec.spec.tolerations of type []v1.Toleration",
        id="a number for tolerations",
    ),
    pytest.param(
        f"{{{CONTAINERS}, nodeSelector: [1]}}",
        f"{PREFIX} array into Go struct field PodSpec.spec.nodeSelector of type map[string]string",
        id="a list for nodeSelector",
    ),
    pytest.param(
        f'{{{CONTAINERS}, tolerations: [{{key: k, tolerationSeconds: "300"}}]}}',
        f"{PREFIX} string into Go struct field Toleration.spec.tolerations.tolerationSeconds of type int64",
        id="a string tolerationSeconds",
    ),
]


@pytest.mark.parametrize(("spec", "message"), CASES)
def test_a_scenario_object_of_the_wrong_shape_is_refused_with_the_decoders_message(
    tmp_path: Path, spec: str, message: str
) -> None:
    line = f"  - {{apiVersion: v1, kind: Pod, metadata: {{name: p}}, spec: {spec}}}\n"
    path = tmp_path / "bad.yaml"
    path.write_text(HEAD + line, encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        simulate(path)
    assert str(err.value) == f"{path}:9: Pod p: {message}"


def _pod(**top: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, **top}


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(
            _pod(spec={"containers": [{"name": "c", "image": "i"}]}, status="x"),
            f"Pod p: {PREFIX} string into Go struct field Pod.status of type v1.PodStatus",
            id="applying a new pod with a string status",
        ),
        pytest.param(
            _pod(spec={"containers": [{"name": "c", "image": "i"}], "tolerations": {"key": "k"}}),
            f"Pod p: {PREFIX} object into Go struct field PodSpec.spec.tolerations of type []v1.Toleration",
            id="applying a new pod with an object for tolerations",
        ),
    ],
)
def test_applying_an_object_of_the_wrong_shape_is_a_simulation_error(
    obj: dict[str, Any], message: str
) -> None:
    sim = Simulation(HEAD.replace("  objects:\n", "  until: 1m\n"))
    with pytest.raises(SimulationError) as err:
        sim.apply(obj)
    assert str(err.value) == message
    assert sim.objects("pods") == []


def test_updating_an_object_into_the_wrong_shape_is_refused_and_leaves_it_as_it_was() -> None:
    sim = Simulation(HEAD.replace("  objects:\n", "  until: 1m\n"))
    pod = _pod(spec={"containers": [{"name": "c", "image": "i"}]})
    sim.apply(pod)
    sim.run_until("5s")
    before = sim.objects("pods")
    with pytest.raises(SimulationError) as err:
        sim.apply({**pod, "spec": {**pod["spec"], "tolerations": 5}})
    assert str(err.value) == (
        f"Pod p: {PREFIX} number into Go struct field PodSpec.spec.tolerations of type []v1.Toleration"
    )
    assert sim.objects("pods") == before


KEY_PREFIX = 'Pod in version "v1" cannot be handled as a Pod: json: object key'


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param(
            f"  - {{apiVersion: v1, kind: Pod, metadata: {{name: p}}, 1: x, spec: {{{CONTAINERS}}}}}\n",
            f"{KEY_PREFIX} 1 in Pod is not a string",
            id="a number key at the top of an object",
        ),
        pytest.param(
            f"  - {{apiVersion: v1, kind: Pod, metadata: {{name: p}}, spec: {{{CONTAINERS}, 2: y}}}}\n",
            f"{KEY_PREFIX} 2 in Pod.spec is not a string",
            id="a number key inside the spec",
        ),
        pytest.param(
            "  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i, 3: z}]}}\n",
            f"{KEY_PREFIX} 3 in Pod.spec.containers[0] is not a string",
            id="a number key inside a list item",
        ),
    ],
)
def test_a_key_that_is_not_a_string_is_refused_not_a_traceback(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(HEAD + line, encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        simulate(path)
    assert str(err.value) == f"{path}:9: Pod p: {message}"
