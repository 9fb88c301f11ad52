"""The wheel users install: built from this checkout, installed with its declared dependencies
only (no extras) into a fresh virtual environment, and run from outside the checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(path.name for path in (ROOT / "examples").glob("*.yaml"))
SCHEMA = ROOT / "src/kubetaint/sim/scenario.schema.json"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("kubetaint-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment holding the wheel and its required dependencies, nothing else."""
    home = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home)], check=True, timeout=120)
    python = home / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return home


def installed(venv: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a program of the environment as a user would: from elsewhere, without this checkout's src."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run(
        [str(venv / "bin" / argv[0]), *argv[1:]],
        check=False,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_wheel_carries_the_examples_the_license_and_the_project_metadata(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = Parser().parsestr(
            archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        )
        license_text = archive.read(next(n for n in names if n.endswith("/licenses/LICENSE"))).decode()
    assert {f"kubetaint/examples/{name}" for name in EXAMPLES} <= names
    assert "kubetaint/sim/scenario.schema.json" in names
    with zipfile.ZipFile(wheel) as archive:
        entry_points = archive.read(
            next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        ).decode()
    for program in ("kubetaint", "kubectl-kubetaint", "kubectl_complete-kubetaint"):
        assert f"\n{program} = " in entry_points
    assert "Apache License" in license_text and "Version 2.0" in license_text
    assert "License :: OSI Approved :: Apache Software License" in metadata.get_all("Classifier", [])
    assert metadata.get_all("Project-URL")
    required = [req for req in metadata.get_all("Requires-Dist", []) if "extra ==" not in req]
    assert not [req for req in required if req.split(">")[0].split("<")[0] in ("starlette", "uvicorn")]


def test_an_installed_wheel_simulates_a_shipped_example(venv: Path, tmp_path: Path) -> None:
    result = installed(
        venv, "kubetaint", "simulate", "--example", "taint-based-eviction", "-o", "json", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    evicted = [r["name"] for r in doc["timeline"] if r["reason"] == "TaintManagerEviction"]
    assert doc["scenario"] == "taint-based-eviction" and evicted == ["default-tolerations"]


def test_the_readme_one_liner_works_in_an_installed_wheel(venv: Path, tmp_path: Path) -> None:
    code = "import kubetaint; print(kubetaint.tolerates({'operator':'Exists'}, {'key':'a','effect':'NoExecute'}))"
    result = installed(venv, "python", "-c", code, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "True\n"), result.stderr


def test_the_server_commands_without_the_server_extra_say_what_to_install(venv: Path, tmp_path: Path) -> None:
    result = installed(venv, "kubetaint", "up", "--port", "0", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "error: kubetaint up needs the starlette package: pip install 'kubetaint[server]'"
    )


KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
"""


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["clock", "now"],
            "error: kubetaint clock needs the httpx package: pip install 'kubetaint[cluster]'",
            id="clock, which needs only the cluster extra",
        ),
        pytest.param(
            ["scheduler"],
            "error: kubetaint scheduler needs the httpx package: pip install 'kubetaint[server]'",
            id="scheduler",
        ),
        pytest.param(
            ["controllers"],
            "error: kubetaint controllers needs the httpx package: pip install 'kubetaint[server]'",
            id="controllers",
        ),
    ],
)
def test_the_cluster_commands_without_their_extra_say_what_to_install(
    venv: Path, tmp_path: Path, argv: list[str], message: str
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    result = installed(venv, "kubetaint", *argv, "--kubeconfig", str(kubeconfig), cwd=tmp_path)
    assert (result.returncode, result.stderr.strip()) == (1, message)


def test_the_server_commands_show_their_help_without_the_server_extra(venv: Path, tmp_path: Path) -> None:
    for command in ("up", "scheduler", "controllers", "clock"):
        result = installed(venv, "kubetaint", command, "--help", cwd=tmp_path)
        assert result.returncode == 0 and "Examples:" in result.stdout, result.stderr
