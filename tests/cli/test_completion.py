"""Shell completion as docs/cli.md sets it up: the shell calls the program with
`_KUBETAINT_COMPLETE` set and the words typed so far, and gets the candidates back."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kubetaint.sim.examples import example_names

MAIN = "from kubetaint.cli.main import main; main()"


def complete(words: str) -> list[str]:
    """bash's candidates for the last word of `words` (click's `bash_complete` protocol)."""
    env = {
        **os.environ,
        "_KUBETAINT_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split(" ")) - 1),
    }
    result = subprocess.run(
        [sys.executable, "-c", MAIN], env=env, capture_output=True, text=True, check=True, timeout=60
    )
    return [line.split(",", 1)[1] for line in result.stdout.splitlines()]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        pytest.param("kubetaint s", ["simulate", "snapshot", "scheduler"], id="subcommands by prefix"),
        pytest.param(
            "kubetaint simulate -o ", ["table", "wide", "json", "yaml", "html"], id="output formats"
        ),
        pytest.param(
            "kubetaint simulate --example t",
            [n for n in example_names() if n.startswith("t")],
            id="the shipped examples' names",
        ),
        pytest.param("kubetaint up --sto", ["--store"], id="a server command's options"),
        pytest.param("kubetaint clock a", ["advance"], id="a nested group's subcommands"),
    ],
)
def test_completion_offers_the_candidates(words: str, expected: list[str]) -> None:
    assert complete(words) == expected


def test_the_bash_script_to_source_names_the_program() -> None:
    env = {**os.environ, "_KUBETAINT_COMPLETE": "bash_source"}
    result = subprocess.run(
        [sys.executable, "-c", MAIN], env=env, capture_output=True, text=True, check=True, timeout=60
    )
    assert "_kubetaint_completion()" in result.stdout and "complete -o nosort -F" in result.stdout
