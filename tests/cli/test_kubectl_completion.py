"""`kubectl kubetaint <TAB>`: kubectl's shell completion asks `kubectl_complete-kubetaint` for the
words after the plugin's name and reads Cobra's answer (candidates, then `:DIRECTIVE`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kubetaint.cli.kubectl_completion import answer
from kubetaint.cli.main import COMMANDS

KUBECTL = shutil.which("kubectl")


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        pytest.param(
            ["w"],
            "whatif\tCompare a cluster with and without a change.\n:4\n",
            id="a subcommand with its help",
        ),
        pytest.param(["explain", "-o", ""], "table\nwide\njson\nyaml\n:4\n", id="a choice's values"),
        pytest.param(["simulate", ""], ":0\n", id="a file argument leaves the file names to the shell"),
    ],
)
def test_the_answer_is_cobras_candidates_then_the_directive(words: list[str], expected: str) -> None:
    assert answer(words) == expected


def test_a_new_word_after_the_plugins_name_is_any_subcommand() -> None:
    lines = answer([""]).splitlines()
    assert [line.split("\t")[0] for line in lines] == [name for name, *_ in COMMANDS] + [":4"]


def _program(folder: Path, name: str, call: str) -> None:
    path = folder / name
    path.write_text(f'#!/bin/sh\nexec {sys.executable} -c "{call}" "$@"\n')
    path.chmod(0o755)


@pytest.mark.skipif(KUBECTL is None, reason="no kubectl")
def test_kubectl_completes_the_plugins_words(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _program(bin_dir, "kubectl-kubetaint", "from kubetaint.cli.main import kubectl_main; kubectl_main()")
    _program(
        bin_dir, "kubectl_complete-kubetaint", "from kubetaint.cli.kubectl_completion import main; main()"
    )
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "KUBECONFIG": str(tmp_path / "no-kubeconfig"),
        "KUBECACHEDIR": str(tmp_path / "cache"),
    }
    assert KUBECTL is not None
    result = subprocess.run(
        [KUBECTL, "__complete", "kubetaint", "simulate", "--example", "toleration"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert result.stdout.splitlines() == ["toleration-seconds", ":4"]
