"""Strict input on the command line: kube-apiserver's strict decoding messages, every object
validated before use, files given as arguments, with -f or on standard input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubetaint.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n"
NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 16Gi, pods: '110'}}\n"


def _run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        pytest.param(
            POD + "  tolerationz: []\n",
            "pod.yaml",
            'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.tolerationz"',
            id="a misspelt field is kube-apiserver's unknown field",
        ),
        pytest.param(
            POD + "  toleration: []\n  nodeName: a\n  nodeName: b\n",
            "pod.yaml",
            'strict decoding error: line 8: key "nodeName" already set in map, unknown field "spec.toleration"',
            id="a YAML key given twice is goyaml's message, listed before the unknown fields",
        ),
        pytest.param(
            '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers":'
            ' [{"name": "c", "image": "i", "imagePullPolicy": "Always", "imagePullPolicy": "Never", "x": 1}]}}',
            "pod.json",
            'strict decoding error: duplicate field "spec.containers[0].imagePullPolicy",'
            ' unknown field "spec.containers[0].x"',
            id="a JSON field given twice is sigs.k8s.io/json's duplicate field, in body order",
        ),
    ],
)
def test_validate_decodes_strictly(tmp_path: Path, text: str, name: str, expected: str) -> None:
    code, out, _ = _run("validate", _write(tmp_path, name, text))
    assert code == 1
    assert expected in out and out.count("\n") == 1


@pytest.mark.parametrize(
    ("text", "line"),
    [
        pytest.param(
            POD + "  tolerationz:\n  - {key: a}\n", 6, id="the key's line when the value is a block below it"
        ),
        pytest.param(POD + "  tolerationz: [{key: a}]\n", 6, id="the key's line when the value is on it"),
        pytest.param(
            POD.replace("[{name: c, image: i}]", "\n  - name: c\n    image: i\n    imagePullPolic: Always"),
            8,
            id="the line of a misspelt field inside a list item",
        ),
    ],
)
def test_validate_names_the_line_of_the_unknown_field(tmp_path: Path, text: str, line: int) -> None:
    path = _write(tmp_path, "pod.yaml", text)
    code, out, _ = _run("validate", path)
    assert code == 1 and out.startswith(f"{path}, document 1, line {line}: "), out


@pytest.mark.parametrize(
    "form",
    [
        pytest.param(["b.yaml", "a.yaml"], id="arguments are read in the order given"),
        pytest.param(["-f", "b.yaml", "-f", "a.yaml"], id="-f files are read in the order given"),
        pytest.param(["a.yaml", "-f", "b.yaml"], id="-f files are read before the arguments"),
    ],
)
def test_validate_reads_its_inputs_in_the_documented_order(tmp_path: Path, form: list[str]) -> None:
    _write(tmp_path, "a.yaml", POD)
    _write(tmp_path, "b.yaml", POD.replace("name: p", "name: q"))
    args = [str(tmp_path / word) if word.endswith(".yaml") else word for word in form]
    code, out, _ = _run("validate", *args)
    assert (code, out) == (0, "pod/q valid\npod/p valid\n")


def test_validate_takes_files_as_arguments_with_f_and_on_stdin(tmp_path: Path) -> None:
    first = _write(tmp_path, "a.yaml", POD)
    second = _write(tmp_path, "b.yaml", POD.replace("name: p", "name: q") + "---\n" + NODE)
    code, out, _ = _run("validate", first, "-f", second)
    assert (code, out) == (0, "pod/q valid\nnode/n1 valid\npod/p valid\n")  # -f files, then arguments
    code, out, _ = _run("validate", "-", stdin=POD)
    assert (code, out) == (0, "pod/p valid\n")


def test_validate_without_input_is_a_usage_error() -> None:
    code, _, err = _run("validate")
    assert code == 2 and err.startswith("error: no input")


def test_validate_yaml_output(tmp_path: Path) -> None:
    code, out, _ = _run("validate", _write(tmp_path, "a.yaml", POD), "-o", "yaml")
    assert code == 0 and out.startswith("valid: true\nobjects:\n")


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        pytest.param(
            NODE.replace(
                "metadata: {name: n1}", "metadata: {name: n2}\nspec: {taints: [{key: k, effect: NoSchedul}]}"
            ),
            'The Node "n2" is invalid: metadata.taints[0].effect: Unsupported value: "NoSchedul"',
            id="a misspelt taint effect is an invalid node, not an absent taint",
        ),
        pytest.param(
            POD.replace("name: p", "name: q") + "  tolerations: [{key: k, operator: Exist}]\n",
            'The Pod "q" is invalid: spec.tolerations[0].operator: Unsupported value: "Exist"',
            id="a misspelt toleration operator is an invalid pod, not a dropped toleration",
        ),
    ],
)
def test_explain_validates_every_object_before_using_it(tmp_path: Path, extra: str, expected: str) -> None:
    path = _write(tmp_path, "c.yaml", NODE + "---\n" + POD + "---\n" + extra)
    code, out, err = _run("explain", path)
    assert code == 1 and out == ""
    assert err.startswith(f"error: {path}, document 3, line ") and expected in err


def test_explain_reports_every_invalid_object_in_one_run(tmp_path: Path) -> None:
    bad_pod = POD.replace("name: p", "name: q") + "  tolerations: [{key: k, operator: Exist}]\n"
    bad_node = NODE.replace("n1", "n2").replace(
        "status:", "spec: {taints: [{key: k, effect: NoSchedul}]}\nstatus:"
    )
    code, _, err = _run("explain", _write(tmp_path, "c.yaml", NODE + "---\n" + bad_pod + "---\n" + bad_node))
    assert code == 1
    assert err.count("error: ") == 2 and '"q"' in err and '"n2"' in err


def test_explain_fail_on_unschedulable_exits_1_after_its_report(tmp_path: Path) -> None:
    taint = "spec: {taints: [{key: k, effect: NoSchedule}]}\nstatus:"
    path = _write(tmp_path, "c.yaml", NODE.replace("status:", taint) + "---\n" + POD)
    code, out, _ = _run("explain", path)
    assert code == 0 and "Unschedulable" in out
    code, out, _ = _run("explain", path, "--fail-on", "unschedulable", "-o", "json")
    assert code == 1 and json.loads(out)["pods"][0]["result"] == "Unschedulable"


def test_explain_takes_a_scenario_with_its_node_groups(tmp_path: Path) -> None:
    scenario = (
        "apiVersion: kubetaint.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n"
        "  nodeGroups: [{name: w, count: 2}]\n  objects:\n"
        "  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}\n"
    )
    code, out, _ = _run("explain", _write(tmp_path, "s.yaml", scenario), "-o", "json")
    assert code == 0, out
    (pod,) = json.loads(out)["pods"]
    assert pod["result"] == "Scheduled" and pod["node"] in ("w-0", "w-1")


SCENARIO_WITH_A_BAD_POD = (
    "apiVersion: kubetaint.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n"
    "  nodeGroups: [{name: node, count: 2}]\n  objects:\n"
    "  - apiVersion: v1\n    kind: Pod\n    metadata: {name: p}\n"
    "    spec: {containers: [{name: c, image: i, imag: i}]}\n"
)
LIST_WITH_A_BAD_POD = (
    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: node-0}}\n"
    "- {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}], x: 1}}\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            SCENARIO_WITH_A_BAD_POD,
            'error: {path}:7: Pod p: Pod in version "v1" cannot be handled as a Pod:'
            ' strict decoding error: unknown field "spec.containers[0].imag"\n',
            id="a scenario's object: the file and the object's line",
        ),
        pytest.param(
            LIST_WITH_A_BAD_POD,
            'error: {path}: Pod p: Pod in version "v1" cannot be handled as a Pod:'
            ' strict decoding error: unknown field "spec.x"\n',
            id="a saved List's object: the file",
        ),
    ],
)
@pytest.mark.parametrize(
    "command",
    [["simulate", "{path}"], ["whatif", "drain", "node-0", "-f", "{path}"]],
    ids=["simulate", "whatif"],
)
def test_simulate_and_whatif_name_the_file_of_a_refused_object(
    tmp_path: Path, text: str, expected: str, command: list[str]
) -> None:
    path = _write(tmp_path, "in.yaml", text)
    code, out, err = _run(*(arg.format(path=path) for arg in command))
    assert (code, out, err) == (1, "", expected.format(path=path))


def test_explain_names_the_line_of_a_scenario_mistake(tmp_path: Path) -> None:
    text = SCENARIO_WITH_A_BAD_POD.replace("count: 2", "count: 2, zone: a")
    path = _write(tmp_path, "s.yaml", text)
    code, _, err = _run("explain", path)
    assert code == 1
    assert (
        err
        == f"error: {path}:5: spec.nodeGroups[0].zone: unknown field (supported: name, count, zones, template)\n"
    )


def test_explain_says_when_there_is_no_pod_to_place(tmp_path: Path) -> None:
    scenario = (
        "apiVersion: kubetaint.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\n"
        "spec: {nodeGroups: [{name: node, count: 2}]}\n"
    )
    code, out, _ = _run("explain", _write(tmp_path, "s.yaml", scenario))
    assert (code, out) == (0, "no unbound pods to explain\n")


def test_simulate_reads_standard_input_and_fails_on_evictions() -> None:
    text = (EXAMPLES / "taint-based-eviction.yaml").read_text()
    code, out, _ = _run("simulate", "-", stdin=text)
    assert code == 0 and "summary:" in out
    code, out, _ = _run("simulate", "-f", "-", "--fail-on", "evictions", stdin=text)
    assert code == 1 and "summary:" in out
    code, out, _ = _run("simulate", "-", "--fail-on", "pending", "-o", "yaml", stdin=text)
    assert code == 0 and "summary:" in out


def test_simulate_takes_one_scenario(tmp_path: Path) -> None:
    code, _, err = _run(
        "simulate", str(EXAMPLES / "memory-pressure.yaml"), str(EXAMPLES / "special-cases.yaml")
    )
    assert code == 2 and "one scenario" in err


def test_the_command_group_imports_a_subcommand_only_when_it_runs() -> None:
    code = (
        "import sys\nfrom click.testing import CliRunner\nfrom kubetaint.cli.main import cli\n"
        "CliRunner().invoke(cli, ['--help'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('kubetaint.cli.') or m.startswith('kubetaint.sim')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (
        "['kubetaint.cli.exiting', 'kubetaint.cli.extras', 'kubetaint.cli.failure', 'kubetaint.cli.main']"
    )


@pytest.mark.parametrize("name", ["validate", "explain", "simulate", "whatif", "clock"])
def test_a_command_help_imports_no_engine(name: str) -> None:
    code = (
        "import sys\nfrom click.testing import CliRunner\nfrom kubetaint.cli.main import cli\n"
        f"result = CliRunner().invoke(cli, [{name!r}, '--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "engines = ('kubetaint.scheduler', 'kubetaint.controlplane', 'kubetaint.sim.simulation',"
        " 'kubetaint.api.models', 'kubetaint.apiserver')\n"
        "print(sorted(m for m in sys.modules if m.startswith(engines)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "name",
    ["validate", "explain", "simulate", "whatif", "snapshot", "up", "clock", "scheduler", "controllers"],
)
def test_every_data_command_help_has_examples(name: str) -> None:
    code, out, _ = _run(name, "--help")
    assert code == 0 and "Examples:" in out


def test_a_strict_decoding_error_names_the_line_of_its_first_field(tmp_path: Path) -> None:
    path = _write(tmp_path, "pod.yaml", POD + "  tolerationz: []\n")
    code, out, _ = _run("validate", path)
    assert code == 1
    assert out == (
        f'{path}, document 1, line 6: Pod in version "v1" cannot be handled as a Pod: '
        'strict decoding error: unknown field "spec.tolerationz"\n'
    )


def test_snapshot_output_format_is_json_or_yaml_and_anything_else_is_a_usage_error() -> None:
    code, _, err = _run("snapshot", "-o", "-", "--output-format", "xml")
    assert code == 2
    assert "Invalid value for '--output-format': 'xml' is not one of 'json', 'yaml'." in err
