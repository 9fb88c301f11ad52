"""The console program with standard streams it cannot use: an output that cannot be written (a
full disk) is one `error:` line and exit 1; a standard output or input it was started without
(`>&-`, `<&-`) is no traceback either."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "taint-based-eviction.yaml")
MANIFESTS = str(ROOT / "examples" / "manifests" / "nodes.yaml")

COMMANDS = [
    pytest.param(["--help"], id="kubetaint --help"),
    pytest.param(["--version"], id="kubetaint --version"),
    pytest.param(["simulate", "--help"], id="a subcommand's --help"),
    pytest.param(["simulate", EXAMPLE], id="simulate's table"),
    pytest.param(["simulate", EXAMPLE, "-o", "json"], id="simulate -o json"),
    pytest.param(["simulate", EXAMPLE, "-o", "html"], id="simulate -o html"),
    pytest.param(["validate", MANIFESTS], id="validate"),
    pytest.param(["explain", MANIFESTS], id="explain"),
    pytest.param(["whatif", "taint", "gpu-1", "x=y:NoExecute", "-f", MANIFESTS], id="whatif"),
]


def kubetaint(*argv: str) -> list[str]:
    return [sys.executable, "-c", "from kubetaint.cli.main import main; main()", *argv]


@pytest.mark.parametrize("argv", COMMANDS)
def test_an_output_that_cannot_be_written_is_one_error_line(argv: list[str]) -> None:
    with open("/dev/full", "w") as full:
        out = subprocess.run(
            kubetaint(*argv), stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, check=False
        )
    assert (out.returncode, out.stderr) == (1, "error: No space left on device\n")


@pytest.mark.parametrize("argv", COMMANDS)
def test_a_closed_standard_output_is_no_traceback(argv: list[str]) -> None:
    out = subprocess.run(
        kubetaint(*argv),
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.close(1),
        check=False,
    )
    assert (out.returncode, out.stderr) == (0, "")


@pytest.mark.parametrize("command", [["validate", "-"], ["explain", "-"], ["simulate", "-"]])
def test_a_closed_standard_input_is_one_error_line(command: list[str]) -> None:
    out = subprocess.run(
        kubetaint(*command),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.close(0),
        check=False,
    )
    assert (out.returncode, out.stderr) == (1, "error: <stdin>: standard input is closed\n")
