"""`kubetaint whatif` and `kubetaint snapshot` on the command line: outputs, --fail-on exit codes,
usage errors (exit 2) and bad input (exit 1), each one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubetaint.cli.main import cli
from kubetaint.sim.snapshot import SnapshotInfo, build_snapshot
from sim.browser import needs_chromium, rendered_dom


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def _pod(name: str, node: str, tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "nodeName": node,
            "tolerations": tolerations or [],
            "containers": [{"name": "c", "image": "i"}],
        },
        "status": {"phase": "Running"},
    }


@pytest.fixture
def snap(tmp_path: Path) -> Path:
    tolerating = [{"key": "maintenance", "operator": "Exists", "effect": "NoExecute"}]
    doc = build_snapshot(
        [_node("node-1"), _node("node-2"), _pod("bare", "node-2"), _pod("calm", "node-2", tolerating)],
        SnapshotInfo(captured_at="2026-01-01T00:00:00Z"),
    )
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(doc))
    return path


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def test_text_lists_the_evicted_pods(snap: Path) -> None:
    result = invoke("whatif", "taint", "node-2", "maintenance=true:NoExecute", "-f", str(snap))
    assert result.exit_code == 0, result.output
    assert "default/bare" in result.output and "at once" in result.output
    assert "not recreated" in result.output
    assert "a real controller restart would start every timer from zero" in result.output


def test_json_is_stable_and_complete(snap: Path) -> None:
    args = (
        "whatif",
        "taint",
        "node-2",
        "maintenance=true:NoExecute",
        "-f",
        str(snap),
        "-o",
        "json",
        "--for",
        "10m",
    )
    first, second = invoke(*args), invoke(*args)
    assert first.output == second.output
    doc = json.loads(first.output)
    assert doc["for"] == 600.0
    assert [e["name"] for e in doc["evictions"]] == ["bare"]
    assert [e["name"] for e in doc["notEvicted"]] == ["calm"]


def test_html_is_a_page(snap: Path) -> None:
    result = invoke("whatif", "cordon", "node-2", "-f", str(snap), "-o", "html")
    assert result.exit_code == 0
    assert result.output.startswith('<!DOCTYPE html><html lang="en">')
    assert "kubectl cordon node-2" in result.output


@needs_chromium
def test_html_shows_the_evictions_with_and_without_the_change(snap: Path, tmp_path: Path) -> None:
    result = invoke("whatif", "taint", "node-2", "maintenance=true:NoExecute", "-f", str(snap), "-o", "html")
    assert result.exit_code == 0
    page = tmp_path / "whatif.html"
    page.write_text(result.output, encoding="utf-8")
    dom = rendered_dom(page)
    assert "<h3>without the change: 0</h3>" in dom
    assert "<h3>with the change: 1</h3>" in dom
    with_change = dom[dom.index("<h3>with the change: 1</h3>") :]
    chart = with_change[with_change.index('<svg class="chart bars"') :]
    assert 'class="bar Eviction"' in chart[: chart.index("</svg>")]
    assert dom.count('class="chart lines"') == 2
    assert dom.count('class="chart pending"') == 2


@pytest.mark.parametrize(
    ("args", "code"),
    [
        pytest.param(
            ("taint", "node-2", "maintenance=true:NoExecute", "--fail-on", "evictions"),
            1,
            id="an eviction fails the guardrail",
        ),
        pytest.param(
            ("taint", "node-2", "maintenance=true:NoSchedule", "--fail-on", "evictions"),
            0,
            id="a NoSchedule taint evicts nothing",
        ),
        pytest.param(("cordon", "node-2", "--fail-on", "pending"), 0, id="a cordon leaves nothing pending"),
    ],
)
def test_fail_on_sets_the_exit_code(snap: Path, args: tuple[str, ...], code: int) -> None:
    result = invoke("whatif", *args, "-f", str(snap))
    assert result.exit_code == code, result.output


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        pytest.param(
            ("taint", "node-9", "k=v:NoExecute"),
            1,
            'nodes "node-9" not found',
            id="an unknown node is bad input",
        ),
        pytest.param(
            ("reboot", "node-2"), 2, 'unknown change "reboot"', id="an unknown change is a usage error"
        ),
        pytest.param(("taint", "node-2", "k=v:Never"), 2, "Never", id="a bad taint spec is a usage error"),
        pytest.param(("cordon", "node-2", "--for", "soon"), 2, "--for", id="a bad duration is a usage error"),
    ],
)
def test_errors_are_one_line_with_the_right_exit_code(
    snap: Path, args: tuple[str, ...], code: int, message: str
) -> None:
    result = invoke("whatif", *args, "-f", str(snap))
    assert result.exit_code == code
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_a_file_that_is_not_a_snapshot_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(_pod("p", "n")))
    result = invoke("whatif", "cordon", "n", "-f", str(path))
    assert result.exit_code == 1 and "not a scenario or snapshot" in result.output


def test_snapshot_with_an_unreachable_kubeconfig_is_one_line(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    result = invoke("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "s.json"))
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot connect to the cluster")


def test_a_server_that_never_answers_is_one_line_after_the_connect_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A port that accepts connections and says nothing (client-go gives a TLS handshake 10 s)."""
    import socket

    from kubetaint.sim import snapshot_capture

    monkeypatch.setattr(snapshot_capture, "CONNECT_TIMEOUT", 0.5)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:{silent.getsockname()[1]}'}}}}]\n"
            "users: [{name: u, user: {token: t}}]\n"
            "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
        )
        result = invoke("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "s.json"))
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot connect to the cluster")


def test_snapshot_with_a_missing_kubeconfig_is_one_line(tmp_path: Path) -> None:
    result = invoke("snapshot", "--kubeconfig", str(tmp_path / "none"), "-o", str(tmp_path / "s.json"))
    assert result.exit_code == 1 and result.output.startswith("error: ")
    assert "cannot read the kubeconfig" in result.output and result.output.count("\n") == 1
    assert result.output.count(str(tmp_path / "none")) == 1  # the file named once


def test_whatif_notes_what_the_scheduler_does_not_model(tmp_path: Path) -> None:
    pending = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "i"}],
            "volumes": [{"name": "d", "awsElasticBlockStore": {"volumeID": "vol-1"}}],
        },
    }
    doc = build_snapshot([_node("node-1"), _node("node-2"), pending], SnapshotInfo())
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(doc))
    result = invoke("whatif", "cordon", "node-2", "-f", str(path), "-o", "json")
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert [n for n in notes if n.startswith("not modelled for pod default/db: spec.volumes[0]")], notes


def test_the_text_report_folds_no_sentence_and_ends_no_line_in_spaces() -> None:
    snapshot = Path(__file__).resolve().parents[2] / "docs" / "tutorials" / "zone-snap.json"
    result = CliRunner().invoke(cli, ["whatif", "drain", "node-1", "node-4", "-f", str(snapshot)])
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and lines
    assert [line for line in lines if line != line.rstrip()] == []
    (note,) = [line for line in lines if line.startswith("note: ")]
    assert note.endswith("a real controller restart would start every timer from zero.")
