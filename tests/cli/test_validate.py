"""`kubetaint validate` through a real subprocess, as users and CI run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EFFECTS = 'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
BAD_NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
spec:
  taints:
  - {key: dedicated, value: gpu, effect: Foo}
"""
GOOD = """\
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
spec:
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
  tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]
"""


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubetaint", "validate", *args],
        capture_output=True,
        text=True,
        input=stdin,
        check=False,
    )


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_valid_objects_print_an_ok_line_each(tmp_path: Path) -> None:
    out = run("-f", write(tmp_path, "good.yaml", GOOD))
    assert out.returncode == 0, out.stderr
    assert out.stdout == "node/gpu-1 valid\npod/trainer valid\n"
    assert out.stderr == ""


def test_invalid_taint_prints_kube_apiservers_message(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", BAD_NODE)
    out = run("-f", path)
    assert out.returncode == 1
    assert out.stdout == (
        f'{path}, document 1, line 6: The Node "n1" is invalid: metadata.taints[0].effect: '
        f'Unsupported value: "Foo": {EFFECTS}\n'
    )
    assert "Traceback" not in out.stderr


def test_several_errors_use_kubectls_list(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  tolerations: [{operator: Equal, value: x}]\n"
    path = write(tmp_path, "pod.yaml", text)
    out = run("-f", path)
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        f'{path}, document 1, line 1: The Pod "p" is invalid: ',
        "* spec.containers[0].image: Required value",
        '* spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, '
        'which means "match all values and all keys"',
    ]


def test_stdin_and_mixed_results(tmp_path: Path) -> None:
    out = run("-f", "-", "-f", write(tmp_path, "bad.yaml", BAD_NODE), stdin=GOOD)
    assert out.returncode == 1
    assert out.stdout.splitlines()[:2] == ["node/gpu-1 valid", "pod/trainer valid"]


def test_an_unknown_field_read_from_stdin_names_its_line() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n  toleration: []\n"
    out = run("-", stdin=text)
    assert out.returncode == 1
    assert out.stdout == (
        '<stdin>, document 1, line 6: Pod in version "v1" cannot be handled as a Pod: '
        'strict decoding error: unknown field "spec.toleration"\n'
    )


def test_json_output_is_a_stable_document(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", BAD_NODE)
    out = run("-f", path, "-o", "json")
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert doc["valid"] is False
    (obj,) = doc["objects"]
    assert {k: obj[k] for k in ("source", "document", "line", "apiVersion", "kind", "name", "valid")} == {
        "source": path,
        "document": 1,
        "line": 1,
        "apiVersion": "v1",
        "kind": "Node",
        "name": "n1",
        "valid": False,
    }
    assert obj["errors"] == [
        {
            "field": "metadata.taints[0].effect",
            "type": "Unsupported value",
            "reason": "FieldValueNotSupported",
            "message": f'Unsupported value: "Foo": {EFFECTS}',
            "detail": EFFECTS,
        }
    ]
    assert (
        obj["message"]
        == f'Node "n1" is invalid: metadata.taints[0].effect: Unsupported value: "Foo": {EFFECTS}'
    )
    assert run("-f", path, "-o", "json").stdout == out.stdout


def test_feature_gates_enable_comparison_operators(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n  tolerations: [{key: sla, operator: Gt, value: '900'}]\n"
    path = write(tmp_path, "pod.yaml", text)
    assert run("-f", path).returncode == 1
    on = run("-f", path, "--feature-gates", "TaintTolerationComparisonOperators=true")
    assert (on.returncode, on.stdout) == (0, "pod/p valid\n")


def test_wrong_types_are_reported_per_object(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bad.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec:\n  unschedulable: 'yes'\n",
    )
    out = run("-f", path)
    assert out.returncode == 1
    assert out.stdout == (
        f'{path}, document 1, line 5: spec.unschedulable: Node in version "v1" cannot be handled as a Node: '
        "json: cannot unmarshal string into Go struct field NodeSpec.spec.unschedulable of type bool\n"
    )


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("a: [b\n", "invalid YAML", id="malformed YAML"),
        pytest.param("apiVersion: v1\nkind: Widget\n", None, id="an unknown kind is an invalid object"),
    ],
)
def test_bad_input_is_one_line_without_traceback(tmp_path: Path, text: str, fragment: str | None) -> None:
    out = run("-f", write(tmp_path, "x.yaml", text))
    assert out.returncode == 1
    assert "Traceback" not in out.stderr + out.stdout
    if fragment:
        assert out.stdout == ""
        assert len(out.stderr.strip().splitlines()) == 1 and fragment in out.stderr
    else:
        assert 'no matches for kind "Widget" in version "v1"' in out.stdout


def test_missing_file() -> None:
    out = run("-f", "does-not-exist.yaml")
    assert (out.returncode, out.stderr) == (1, "error: does-not-exist.yaml: the path does not exist\n")


def test_bad_feature_gate_is_a_usage_error(tmp_path: Path) -> None:
    out = run("-f", write(tmp_path, "good.yaml", GOOD), "--feature-gates", "NoSuchGate=true")
    assert out.returncode == 2
    assert "unrecognized feature gate: NoSuchGate" in out.stderr


def test_import_and_tolerates_one_liner() -> None:
    code = "import kubetaint; print(kubetaint.tolerates({'operator':'Exists'}, {'key':'a','effect':'NoExecute'}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "True\n"


def test_lazy_exports() -> None:
    code = (
        "import kubetaint; e = kubetaint.validate({'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': 'n'},"
        " 'spec': {'taints': [{'key': 'a'}]}}); print(isinstance(e[0], kubetaint.FieldError), e[0]);"
        " print(kubetaint.parse_taint_spec(['a=b:NoSchedule', 'c-']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "True metadata.taints[0].effect: Required value",
        "([{'key': 'a', 'value': 'b', 'effect': 'NoSchedule'}], [{'key': 'c'}])",
    ]


@pytest.mark.parametrize(
    "form",
    [
        pytest.param("several", id="several files after one -f, as the CLI reference writes -f FILE..."),
        pytest.param("repeated", id="one -f per file, as kubectl users write it"),
    ],
)
def test_several_files_in_either_form(tmp_path: Path, form: str) -> None:
    bad, good = write(tmp_path, "bad.yaml", BAD_NODE), write(tmp_path, "good.yaml", GOOD)
    args = ("-f", bad, good) if form == "several" else ("-f", bad, "-f", good)
    out = run(*args)
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        f'{bad}, document 1, line 6: The Node "n1" is invalid: metadata.taints[0].effect: '
        f'Unsupported value: "Foo": {EFFECTS}',
        "node/gpu-1 valid",
        "pod/trainer valid",
    ]


KEY_IN_SELECTOR = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  containers: [{name: c, image: busybox}]
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
    matchLabelKeys: [app]
"""


def test_a_pod_is_validated_with_its_label_keys_merged_as_on_create(tmp_path: Path) -> None:
    """kube-apiserver merges the pod's value of `app` into the selector before it validates: the
    key is then in the selector twice."""
    path = write(tmp_path, "web.yaml", KEY_IN_SELECTOR)
    out = run("-f", path)
    assert out.returncode == 1
    assert out.stdout == (
        f'{path}, document 1, line 1: The Pod "web" is invalid: spec.topologySpreadConstraints[0][0]: Invalid value: "app": '
        "exists in both matchLabelKeys and labelSelector\n"
    )
    unlabelled = KEY_IN_SELECTOR.replace(", labels: {app: web}", "")
    out = run("-f", write(tmp_path, "unlabelled.yaml", unlabelled))
    assert (out.returncode, out.stdout) == (0, "pod/web valid\n")


def test_a_scenario_is_refused_with_the_command_that_checks_it(tmp_path: Path) -> None:
    path = tmp_path / "first.yaml"
    path.write_text("apiVersion: kubetaint.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\n")
    out = run(str(path))
    assert out.returncode == 1
    assert out.stdout == (
        f'{path}, document 1, line 1: no matches for kind "Scenario" in version "kubetaint.dev/v1alpha1"'
        " (a kubetaint scenario: `kubetaint simulate` checks and runs it)\n"
    )


LIST_JSON = """\
{
  "apiVersion": "v1",
  "kind": "List",
  "metadata": {"resourceVersion": ""},
  "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1"}},
    {
      "apiVersion": "v1",
      "kind": "Node",
      "metadata": {"name": "n1"},
      "spec": {"taints": [{"key": "k", "effect": "Foo"}]}
    },
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containerz": []}}
  ]
}
"""


def test_the_items_of_a_json_list_are_named_by_their_own_line(tmp_path: Path) -> None:
    path = write(tmp_path, "list.json", LIST_JSON)
    out = run(path)
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        "node/gpu-1 valid",
        f'{path}, document 1, line 11: The Node "n1" is invalid: metadata.taints[0].effect: '
        f'Unsupported value: "Foo": {EFFECTS}',
        f'{path}, document 1, line 13: Pod in version "v1" cannot be handled as a Pod: '
        'strict decoding error: unknown field "spec.containerz"',
    ]
    document = json.loads(run(path, "-o", "json").stdout)
    assert [o["line"] for o in document["objects"]] == [6, 7, 13]


def test_a_json_list_from_standard_input_names_its_lines_on_one_line(tmp_path: Path) -> None:
    compact = json.dumps(json.loads(LIST_JSON))
    out = run("-", stdin=compact)
    assert out.returncode == 1
    assert out.stdout.splitlines()[1].startswith('<stdin>, document 1, line 1: The Node "n1" is invalid: ')


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(LIST_JSON + "x", id="text after the object"),
        pytest.param(LIST_JSON.replace('"gpu-1"}},', '"gpu-1"}}'), id="a missing comma between items"),
        pytest.param(LIST_JSON.replace('"items": [', '"items": [NaN,'), id="a constant JSON does not have"),
    ],
)
def test_a_malformed_json_list_gets_the_json_parsers_own_message(tmp_path: Path, text: str) -> None:
    """The walk that finds the items' lines leaves every malformed text to the JSON parser."""
    path = write(tmp_path, "list.json", text)
    out = run(path)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"error: {path}, document 1") and "invalid JSON: " in out.stderr
