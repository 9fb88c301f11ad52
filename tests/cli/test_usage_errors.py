"""A wrong command line is one `error:` line that names the help to read, and exit 2, on every
command (click's usage block is not shown); a group run without a command still shows its help."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubetaint.cli.main import cli


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--bogus"], "No such option '--bogus'. See 'kubetaint --help'.", id="an unknown option"
        ),
        pytest.param(
            ["nosuch"], "No such command 'nosuch'. See 'kubetaint --help'.", id="an unknown command"
        ),
        pytest.param(
            ["simulate", "--bogus"],
            "No such option '--bogus'. See 'kubetaint simulate --help'.",
            id="an unknown option of a command",
        ),
        pytest.param(
            ["snapshot", "-o", "-", "--output-format", "xml"],
            "Invalid value for '--output-format': 'xml' is not one of 'json', 'yaml'. "
            "See 'kubetaint snapshot --help'.",
            id="a value outside an option's choices",
        ),
        pytest.param(
            ["clock", "advance"],
            "Missing argument 'DURATION'. See 'kubetaint clock advance --help'.",
            id="a missing argument of a nested command",
        ),
    ],
)
def test_a_wrong_command_line_is_one_error_line(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, args, prog_name="kubetaint")
    assert result.exit_code == 2
    assert result.stderr == f"error: {message}\n"
    assert result.stdout == ""


def test_the_console_program_says_it_in_one_line_too() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kubetaint", "explain", "--output", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("error: Invalid value for '-o' / '--output': 'nope' is not one of")


def test_a_group_without_its_command_shows_its_help() -> None:
    result = CliRunner().invoke(cli, ["clock"], prog_name="kubetaint")
    assert "Usage: kubetaint clock [OPTIONS] COMMAND [ARGS]..." in result.output


SNAPSHOT = str(Path(__file__).resolve().parents[2] / "docs" / "tutorials" / "zone-snap.json")
EXAMPLE = ["simulate", "--example", "toleration-seconds"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param([*EXAMPLE, "--until", "-5m"], "--until: must not be negative", id="a negative --until"),
        pytest.param(
            [*EXAMPLE, "--until", "100000h"], "--until: must be at most 8784h", id="an --until beyond a year"
        ),
        pytest.param(
            [*EXAMPLE, "--until", "5x"],
            '--until: time: unknown unit "x" in duration "5x"',
            id="a unit Go lacks",
        ),
        pytest.param(
            ["whatif", "drain", "node-1", "-f", SNAPSHOT, "--for", "-5m"],
            "--for: must not be negative",
            id="a negative --for",
        ),
    ],
)
def test_a_wrong_duration_flag_is_a_wrong_command_line_naming_the_flag(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, args, prog_name="kubetaint")
    assert (result.exit_code, result.stderr, result.stdout) == (2, f"error: {message}\n", "")
