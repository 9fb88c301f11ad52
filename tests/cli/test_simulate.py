"""`kubetaint simulate`: outputs, overrides and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

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
