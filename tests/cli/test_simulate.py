"""`kubetaint simulate`: outputs, overrides and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kubetaint.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["simulate", *args])
    return result.exit_code, result.stdout, result.stderr


def test_table_shows_the_eviction_an_hour_after_the_taint() -> None:
    code, out, _ = run(str(EXAMPLES / "toleration-seconds.yaml"))
    assert code == 0
    lines = [line for line in out.splitlines() if "tolerates-an-hour" in line and "Marking" in line]
    assert lines and lines[0].startswith("1h0m30s")
    assert "TaintAdded" in out and "30s" in out


def test_json_is_the_timeline_document() -> None:
    code, out, _ = run(str(EXAMPLES / "toleration-seconds.yaml"), "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["scenario"] == "toleration-seconds" and doc["end"] == 3720.0
    assert set(doc["summary"]) == {"scheduled", "failedScheduling", "evicted", "preempted", "pendingAtEnd"}


def test_yaml_is_the_json_document_as_pyyaml_writes_it() -> None:
    code, out, _ = run(str(EXAMPLES / "taint-based-eviction.yaml"), "-o", "yaml")
    _, json_out, _ = run(str(EXAMPLES / "taint-based-eviction.yaml"), "-o", "json")
    assert code == 0
    assert out == yaml.dump(
        json.loads(json_out), Dumper=yaml.CSafeDumper, sort_keys=False, allow_unicode=True
    )


def test_until_and_seed_override_the_scenario() -> None:
    code, out, _ = run(
        str(EXAMPLES / "toleration-seconds.yaml"), "-o", "json", "--until", "10m", "--seed", "7"
    )
    doc = json.loads(out)
    assert code == 0 and doc["end"] == 600.0 and doc["seed"] == 7
    assert not [r for r in doc["timeline"] if r["name"] == "tolerates-an-hour"]


def test_html_is_self_contained_with_svg() -> None:
    code, out, _ = run(str(EXAMPLES / "taint-based-eviction.yaml"), "-o", "html")
    assert code == 0
    assert out.startswith("<!DOCTYPE html>") and "<svg" in out and "node-0" in out
    assert "http://" not in out.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in out


def test_invalid_scenario_is_one_line_and_exit_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: kubetaint.dev/v1alpha1\nkind: Scenario\nspec:\n  until: soon\n", encoding="utf-8"
    )
    code, _, err = run(str(bad))
    assert code == 1
    assert err.strip().count("\n") == 0 and "spec.until" in err and "Traceback" not in err


def test_bad_until_is_a_usage_error() -> None:
    code, _, err = run(str(EXAMPLES / "toleration-seconds.yaml"), "--until", "later")
    assert code == 2 and "--until" in err


def _snapshot_file(tmp_path: Path, captured: str | None, form: str = "json") -> Path:
    """A snapshot (as `kubetaint snapshot` writes it) or, without a capture time, a saved v1 List:
    node n1 NoExecute-tainted 400 s before the capture, a pod there tolerating it for 600 s."""
    from kubetaint.sim.snapshot import SnapshotInfo, build_snapshot

    taint = {"key": "old", "value": "x", "effect": "NoExecute", "timeAdded": "2026-01-01T00:03:20Z"}
    objects: list[dict[str, object]] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "spec": {"taints": [taint]},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {
                "nodeName": "n1",
                "containers": [{"name": "c", "image": "i"}],
                "tolerations": [
                    {"key": "old", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600}
                ],
            },
            "status": {"phase": "Running"},
        },
    ]
    if captured is None:
        doc: dict[str, object] = {"apiVersion": "v1", "kind": "List", "items": objects}
    else:
        doc = build_snapshot(objects, SnapshotInfo(captured_at=captured))
    path = tmp_path / f"snap.{form}"
    if form == "json":
        path.write_text(json.dumps(doc))
    else:
        import yaml

        path.write_text(yaml.safe_dump(doc))
    return path


def _eviction_time(out: str) -> float:
    doc = json.loads(out)
    marks = [r["t"] for r in doc["timeline"] if r["reason"] == "TaintManagerEviction" and r["name"] == "p"]
    assert len(marks) == 1, doc["timeline"]
    return float(marks[0])


def test_a_snapshot_continues_its_in_flight_evictions(tmp_path: Path) -> None:
    """As whatif runs a snapshot: 400 s of the 600 s toleration had passed at the capture."""
    code, out, err = run(str(_snapshot_file(tmp_path, "2026-01-01T00:10:00Z")), "-o", "json", "--until", "1h")
    assert code == 0, err
    assert _eviction_time(out) == 200.0


def test_a_saved_v1_list_runs_as_a_snapshot_without_a_capture_time(tmp_path: Path) -> None:
    """A hand-saved List (yaml or json) has no capture time: timers start at zero."""
    for form in ("yaml", "json"):
        code, out, err = run(str(_snapshot_file(tmp_path, None, form)), "-o", "json", "--until", "1h")
        assert code == 0, err
        assert _eviction_time(out) == 600.0


def test_a_file_that_is_neither_is_refused_with_its_kind(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    code, _, err = run(str(path))
    assert code == 1
    assert (
        err.strip()
        == f'error: {path}: not a scenario or snapshot: kind "Pod", expected Scenario or a v1 List'
    )


def test_a_scenario_with_a_bad_kind_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text("apiVersion: kubetaint.dev/v1alpha1\nkind: Scenaro\nmetadata: {name: x}\nspec: {}\n")
    code, _, err = run(str(path))
    assert code == 1
    assert err.startswith(f"error: {path}:") and "kind" in err and "not a scenario or snapshot" not in err


def test_a_shipped_example_runs_by_name() -> None:
    code, out, _ = run("--example", "toleration-seconds")
    assert code == 0
    assert out.startswith("scenario toleration-seconds (seed 1), 1h2m0s")


def test_an_unknown_example_is_a_usage_error_listing_the_examples() -> None:
    code, _, err = run("--example", "no-such-example")
    assert code == 2
    assert "unknown example 'no-such-example'" in err and "taint-based-eviction" in err


def test_a_file_and_an_example_together_are_a_usage_error() -> None:
    code, _, err = run(str(EXAMPLES / "toleration-seconds.yaml"), "--example", "toleration-seconds")
    assert code == 2 and "give a SCENARIO file or --example NAME" in err


def test_neither_a_file_nor_an_example_is_a_usage_error() -> None:
    code, _, err = run()
    assert code == 2 and "give a SCENARIO file or --example NAME" in err


NOT_MODELLED_SCENARIO = """\
apiVersion: kubetaint.dev/v1alpha1
kind: Scenario
metadata: {name: volumes}
spec:
  until: 30s
  nodeGroups: [{name: n, count: 2}]
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: db}
    spec:
      containers: [{name: c, image: postgres}]
      volumes: [{name: data, awsElasticBlockStore: {volumeID: vol-1}}]
"""


def test_simulate_records_what_the_scheduler_does_not_model(tmp_path: Path) -> None:
    scenario = tmp_path / "volumes.yaml"
    scenario.write_text(NOT_MODELLED_SCENARIO)
    config = tmp_path / "scheduler.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "podMaxBackoffSeconds: 20\nprofiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: {bindTimeoutSeconds: 60}\n"
    )
    result = CliRunner().invoke(cli, ["simulate", str(scenario), "-o", "json", "--config", str(config)])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        "warning: podMaxBackoffSeconds: not modelled: kubetaint's scheduler does not apply this setting",
        "warning: profiles[0].pluginConfig[0].args.bindTimeoutSeconds: not modelled: VolumeBinding does not read "
        "this argument",
    ]
    records = json.loads(result.stdout)["timeline"]
    (warned,) = [r for r in records if r["reason"] == "NotModelled"]
    assert warned["name"] == "db"
    assert warned["message"].startswith("spec.volumes[0].awsElasticBlockStore: not modelled (CSI migration)")
    assert any(r["reason"] == "Scheduled" and r["name"] == "db" for r in records)


UNPLACEABLE = """apiVersion: kubetaint.dev/v1alpha1
kind: Scenario
metadata: {name: unplaceable}
spec:
  until: 1m
  nodeGroups:
  - {name: node, count: 2}
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: picky-pod-with-a-long-name}
    spec:
      nodeSelector: {disktype: ssd}
      containers: [{name: c, image: nginx}]
"""


def test_wide_writes_each_record_on_one_line_where_the_table_folds_long_messages(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(UNPLACEABLE)
    _, table, _ = run(str(scenario))
    code, wide, _ = run(str(scenario), "-o", "wide")
    _, doc, _ = run(str(scenario), "-o", "json")
    records = json.loads(doc)["timeline"]
    failed = [line for line in wide.splitlines() if "FailedScheduling" in line]
    assert code == 0 and len(wide.splitlines()) == len(records) + 3  # heading, header, summary
    assert len(failed) == 1 and failed[0].endswith("Preemption is not helpful for scheduling.")
    assert len(table.splitlines()) > len(wide.splitlines())  # the table folds the message
    assert [line.split() for line in table.splitlines()[:2]] == [
        line.split() for line in wide.splitlines()[:2]
    ]


def test_the_html_report_explains_the_pods_still_pending(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(UNPLACEABLE)
    code, page, _ = run(str(scenario), "-o", "html")
    why = page[page.index('<details class="why"') :]
    assert code == 0 and "Why <b>default/picky-pod-with-a-long-name</b> is pending" in why
    assert (
        "<td>NodeAffinity</td><td>2</td><td>node(s) didn&#x27;t match Pod&#x27;s node affinity/selector"
        in why
    )
