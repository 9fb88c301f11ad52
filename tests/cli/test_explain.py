"""`kubetaint explain`: the done-when scenario, JSON shape and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubetaint.cli.explain import explain_command

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
spec:
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: full-1}
status: {allocatable: {cpu: "1", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: hog, namespace: default}
spec:
  nodeName: full-1
  containers: [{name: c, image: x, resources: {requests: {cpu: 900m}}}]
---
apiVersion: v1
kind: Node
metadata: {name: free-1}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
"""


def _run(tmp_path: Path, text: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    result = CliRunner().invoke(explain_command, ["-f", str(path), *args])
    return result.exit_code, result.stdout, result.stderr


def test_table_names_taint_insufficient_cpu_and_picks_third(tmp_path: Path) -> None:
    code, out, _ = _run(tmp_path, CLUSTER)
    assert code == 0
    assert "Pod default/web: Scheduled on free-1" in out
    assert "dedicated=gpu:NoSchedule" in out
    header = next(line for line in out.splitlines() if line.strip().startswith("NODE"))
    row = next(line for line in out.splitlines() if "Insufficient cpu" in line)
    assert row.index("Insufficient cpu") == header.index("NodeResourcesFit"), (
        "the reason in its plugin's column"
    )
    assert "TaintToleration score" in header and header.rstrip().endswith("TOTAL")


def test_table_carries_the_pods_and_the_configurations_warnings(tmp_path: Path) -> None:
    config = tmp_path / "scheduler.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 4\n"
    )
    text = CLUSTER.replace(
        "  containers: [{name: c, image: nginx,",
        "  volumes: [{name: d, awsElasticBlockStore: {volumeID: vol-1}}]\n  containers: [{name: c, image: nginx,",
    )
    code, out, _ = _run(tmp_path, text, "--config", str(config))
    assert code == 0, out
    assert out.splitlines()[0] == (
        "warning: parallelism: not modelled: kubetaint's scheduler does not apply this setting"
    )
    assert "  warning: spec.volumes[0].awsElasticBlockStore: not modelled (CSI migration)" in out
    code, out, _ = _run(tmp_path, text, "--config", str(config), "-o", "json")
    doc = json.loads(out)
    assert doc["warnings"] == ["parallelism: not modelled: kubetaint's scheduler does not apply this setting"]
    assert doc["pods"][0]["warnings"][0].startswith("spec.volumes[0].awsElasticBlockStore: not modelled")


def test_config_applies_plugin_arguments(tmp_path: Path) -> None:
    config = tmp_path / "scheduler.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
        "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
        "          - matchFields: [{key: metadata.name, operator: NotIn, values: [free-1]}]\n"
    )
    code, out, _ = _run(tmp_path, CLUSTER, "--config", str(config))
    assert code == 0, out
    assert "Scheduled on free-1" not in out
    assert "node(s) didn't match scheduler-enforced node affinity" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "apiVersion: v1\nkind: PersistentVolumeClaim\n",
            'no kind "PersistentVolumeClaim" is registered for version "v1"',
            id="another kind",
        ),
        pytest.param(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "profiles: [{plugins: {filter: {enabled: [{name: Nope}]}}}]\n",
            'FilterPlugin "Nope" does not exist',
            id="an unknown plugin",
        ),
        pytest.param(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {ignoredResourcez: [x]}}]}]\n",
            "strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding"
            ' args for plugin NodeResourcesFit: strict decoding error: unknown field "ignoredResourcez"',
            id="a misspelled plugin argument",
        ),
        pytest.param(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "profiles: [{pluginConfig: [{name: NodeAffinity, args: [addedAffinity]}]}]\n",
            "decoding .profiles[0].pluginConfig[0]: decoding args for plugin NodeAffinity: couldn't get"
            " version/kind; json parse error: json: cannot unmarshal array into Go value of type struct {"
            ' APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }',
            id="plugin arguments that are not an object",
        ),
        pytest.param(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {ignoredResources: 5}}]}]\n",
            'initializing plugin "NodeResourcesFit"',
            id="a plugin argument of the wrong type",
        ),
    ],
)
def test_a_bad_config_file_is_one_line_and_exit_1(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "scheduler.yaml"
    config.write_text(text)
    code, _out, err = _run(tmp_path, CLUSTER, "--config", str(config))
    assert code == 1
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        pytest.param(
            "scheduler.yaml",
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "zeta: 1\nalpha: 2\n",
            'strict decoding error: unknown field "alpha", unknown field "zeta"',
            id="YAML: in key order, as YAMLToJSON gives the text to decode",
        ),
        pytest.param(
            "scheduler.json",
            '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
            ' "zeta": 1, "alpha": 2}',
            'strict decoding error: unknown field "zeta", unknown field "alpha"',
            id="JSON: in document order",
        ),
    ],
)
def test_unknown_config_fields_come_in_the_order_kube_scheduler_gives(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    config = tmp_path / name
    config.write_text(text)
    code, _out, err = _run(tmp_path, CLUSTER, "--config", str(config))
    assert (code, err) == (1, f"error: {config}: {message}\n")


def test_json_document(tmp_path: Path) -> None:
    code, out, _ = _run(tmp_path, CLUSTER, "-o", "json")
    assert code == 0
    doc = json.loads(out)
    (pod,) = doc["pods"]
    assert pod["node"] == "free-1" and pod["result"] == "Scheduled"
    nodes = {n["name"]: n for n in pod["nodes"]}
    assert nodes["gpu-1"]["untoleratedTaint"] == {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    assert nodes["gpu-1"]["suggestedToleration"] == {
        "key": "dedicated",
        "operator": "Equal",
        "value": "gpu",
        "effect": "NoSchedule",
    }
    assert nodes["full-1"]["filter"] == {
        "plugin": "NodeResourcesFit",
        "code": "Unschedulable",
        "reason": "Insufficient cpu",
    }
    assert nodes["free-1"]["totalScore"] == sum(
        s * w for s, w in zip(nodes["free-1"]["scores"].values(), [3, 1, 1, 1], strict=True)
    )


def test_earlier_pods_consume_resources(tmp_path: Path) -> None:
    text = (
        CLUSTER.replace("cpu: 500m, memory: 1Gi", "cpu: '3', memory: 1Gi")
        + """
---
apiVersion: v1
kind: Pod
metadata: {name: second, namespace: default}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: '3'}}}]
"""
    )
    code, out, _ = _run(tmp_path, text, "-o", "json")
    assert code == 0
    pods = {p["name"]: p for p in json.loads(out)["pods"]}
    assert pods["web"]["node"] == "free-1"
    assert pods["second"]["result"] == "Unschedulable"
    assert pods["second"]["message"].startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
    )


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n",
            "no nodes",
            id="no nodes is an error",
        ),
        pytest.param(
            CLUSTER.replace("cpu: 500m, memory: 1Gi", "cpu: lots"),
            "spec.containers[0].resources.requests[cpu]",
            id="an invalid quantity names the field",
        ),
        pytest.param(
            CLUSTER
            + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec: {priorityClassName: gold, containers: [{name: c, image: i}]}\n",
            "spec.priorityClassName",
            id="a missing PriorityClass names the field",
        ),
        pytest.param(
            CLUSTER.replace(
                "containers: [{name: c, image: nginx",
                "nodeSelector: {}\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Bad}]}]}}}\n  containers: [{name: c, image: nginx",
            ),
            "operator",
            id="an invalid selector names the field",
        ),
    ],
)
def test_bad_input_is_one_line_exit_1(tmp_path: Path, text: str, needle: str) -> None:
    code, _, err = _run(tmp_path, text)
    assert code == 1
    assert needle in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_several_files_after_one_dash_f_are_all_read(tmp_path: Path) -> None:
    nodes, pods = CLUSTER.split("---\napiVersion: v1\nkind: Pod", 1)
    first, second = tmp_path / "nodes.yaml", tmp_path / "pods.yaml"
    first.write_text(nodes)
    second.write_text("apiVersion: v1\nkind: Pod" + pods)
    result = CliRunner().invoke(explain_command, ["-f", str(first), str(second)])
    assert result.exit_code == 0, result.stderr
    assert "Pod default/web: Scheduled on free-1" in result.stdout
