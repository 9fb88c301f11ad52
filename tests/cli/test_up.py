"""`kubetaint up --help` in a real process: its examples are commands the help's own flags accept."""

from __future__ import annotations

import subprocess
import sys


def test_up_help_in_a_real_process_shows_examples_that_use_its_own_flags() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kubetaint", "up", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0 and result.stderr == ""
    usage, _, examples = result.stdout.partition("  Examples:\n")
    lines = [line.strip() for line in examples.splitlines() if line.strip()]
    assert lines[0] == "kubetaint up"
    assert "kubetaint up --nodes 5 --clock virtual --data-dir ./data" in lines
    flags = {word for line in lines for word in line.split() if word.startswith("--")}
    assert flags and all(flag in usage for flag in flags), flags - {f for f in flags if f in usage}
