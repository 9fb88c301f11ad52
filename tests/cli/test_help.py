"""`--help` of every command shows examples, without loading what the command runs: the server, the control
plane, the scheduler, HTTP clients or the numeric libraries are imported when a command runs, so
help and shell completion answer at once (benchmarks/bench_help.py times them)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kubetaint.cli.main import COMMANDS

#: What no `--help` may import (each costs from tens to hundreds of milliseconds).
HEAVY = (
    "starlette",
    "uvicorn",
    "httpx",
    "numpy",
    "pydantic",
    "rich",
    "kubetaint.apiserver.app",
    "kubetaint.apiserver.authz",
    "kubetaint.controlplane",
    "kubetaint.registry",
    "kubetaint.scheduler",
    "kubetaint.controllers",
    "kubetaint.kubelet",
    "kubetaint.sim.simulation",
)

SHOW_HELP = """
import json, sys
from kubetaint.cli.main import cli
try:
    cli(sys.argv[1:], prog_name="kubetaint")
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""

HELPS = [pytest.param([], id="kubetaint --help")]
HELPS += [pytest.param([name], id=f"kubetaint {name} --help") for name, *_ in COMMANDS]
HELPS += [pytest.param(["clock", sub], id=f"kubetaint clock {sub} --help") for sub in ("now", "advance")]


@pytest.mark.parametrize("argv", HELPS)
def test_help_shows_examples_and_imports_nothing_the_command_runs(argv: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", SHOW_HELP, *argv, "--help"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    report = json.loads(result.stderr.splitlines()[-1])
    assert report["code"] == 0 and "Usage:" in result.stdout and "Examples:" in result.stdout
    loaded = [m for m in report["modules"] if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert loaded == []
