"""A scenario in JSON is read by the JSON parser and still has positions: an invalid object, event
or setting of a JSON file is named by file:line exactly as in YAML. Positions are worked out only
when a message needs one, so a scenario that loads cleanly never builds its node tree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubetaint.sim.api import ScenarioError, simulate
from kubetaint.sim.scenario import load_scenario
from kubetaint.sim.source import Source, load_text

BAD_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {
        "containers": [{"name": "c", "image": "i"}],
        "tolerations": [{"key": "k", "operator": "Exists", "value": "v"}],
    },
}


def scenario(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "j"},
        "spec": {"nodeGroups": [{"name": "n", "count": 2, "zones": ["zone-a"]}], **spec},
    }


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    ("spec", "needle", "message"),
    [
        pytest.param(
            {"objects": [BAD_POD]},
            '"apiVersion": "v1"',
            'Pod p: Pod "p" is invalid: spec.tolerations[0].operator: Invalid value: "v"',
            id="an invalid object is named by the line its manifest starts on",
        ),
        pytest.param(
            {"events": [{"at": "10s", "reboot": "n-0"}]},
            '"reboot"',
            "spec.events[0].reboot: unknown field (supported: at, kubectl, apply, delete, fault, node, nodes, zone)",
            id="an unknown event verb is named by its line",
        ),
        pytest.param(
            {"settings": {"nodeEvictionRate": "fast"}},
            '"nodeEvictionRate"',
            "spec.settings.nodeEvictionRate: expected a number, got 'fast'",
            id="a setting of the wrong type is named by its line",
        ),
    ],
)
def test_a_json_scenario_names_the_line_of_what_is_wrong(
    tmp_path: Path, spec: dict[str, Any], needle: str, message: str
) -> None:
    text = json.dumps(scenario(spec), indent=2)
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    line = line_of(text, needle)
    if needle.startswith('"apiVersion"'):
        line -= 1  # a manifest starts at its opening brace, the line above
    with pytest.raises(ScenarioError) as err:
        simulate(path)
    assert str(err.value).startswith(f"{path}:{line}: {message}"), str(err.value)


def test_json_and_yaml_of_one_scenario_run_alike(tmp_path: Path) -> None:
    doc = scenario({"until": "30s", "events": [{"at": "10s", "kubectl": "cordon n-0"}]})
    as_json, as_yaml = tmp_path / "s.json", tmp_path / "s.yaml"
    as_json.write_text(json.dumps(doc), encoding="utf-8")
    import yaml

    as_yaml.write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert simulate(as_json) == simulate(as_yaml)


def test_a_clean_load_never_parses_positions(tmp_path: Path) -> None:
    pods = [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"}, "spec": {"containers": []}}
        for i in range(50)
    ]
    text = json.dumps(scenario({"objects": pods}))
    loaded = load_scenario(text)
    assert loaded.source is not None and loaded.source.text is not None
    assert loaded.source._root is None  # no message asked for a position


@pytest.mark.parametrize(
    ("text", "data"),
    [
        pytest.param('{"a": 1e3}', {"a": 1000.0}, id="a JSON exponent is a number, as JSON parsers read it"),
        pytest.param("{a: 1, b: [x, y]}", {"a": 1, "b": ["x", "y"]}, id="YAML in flow style is still YAML"),
        pytest.param('{"a": NaN}', {"a": "NaN"}, id="NaN is not JSON: YAML reads the text"),
        pytest.param("a: 1\n", {"a": 1}, id="block YAML"),
    ],
)
def test_documents_are_read_by_the_right_parser(text: str, data: Any) -> None:
    assert load_text(text, "<t>").data == data


def test_a_document_given_as_data_has_no_positions() -> None:
    source = Source("<scenario>", {"a": 1})
    assert source.root is None and source.where(["a"]) == "<scenario>: "


def test_the_console_program_prints_the_whole_timeline_and_exits_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario({"until": "20s"})), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from kubetaint.cli.main import main; main()",
            "simulate",
            str(path),
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["end"] == 20.0  # flushed before the process ended
