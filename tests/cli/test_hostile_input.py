"""Every command gets hostile input (the corpus of tests/cli/hostile.py) and answers with
`error:` lines and exit 1 or 2: never a traceback, a hang or unbounded memory."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest
from click.testing import CliRunner, Result

from kubetaint.cli.main import cli

from .hostile import hand_written, mutants

#: Wall seconds one in-process run may take.
RUN_SECONDS = 60
COMMANDS = {
    "validate": lambda path: ["validate", path],
    "explain": lambda path: ["explain", path],
    "simulate": lambda path: ["simulate", path, "--until", "1s"],
    "whatif": lambda path: ["whatif", "drain", "node-0", "-f", path, "--for", "1s"],
}


class _TimeoutError(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _TimeoutError


def _invoke(args: list[str]) -> Result:
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(RUN_SECONDS)
    try:
        return CliRunner().invoke(cli, args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _assert_clean_failure(result: Result, *, may_succeed: bool) -> None:
    output = result.stdout + result.stderr
    assert not isinstance(result.exception, _TimeoutError), "the command did not finish in time"
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in output
    if may_succeed and result.exit_code == 0:
        return
    assert result.exit_code in (1, 2), output
    errors = [line for line in result.stderr.splitlines() if line]
    assert errors or result.stdout, "a failure says why"
    for line in errors:
        assert line.startswith("error: "), line
        assert len(line) < 2000, line[:200]


def _cases(corpus: Iterator[tuple[str, bytes]]) -> list[pytest.ParameterSet]:
    return [pytest.param(content, id=name) for name, content in corpus]


@pytest.fixture(params=sorted(COMMANDS))
def command(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("content", _cases(hand_written()))
def test_hand_written_hostile_input_is_refused_in_one_line_each(
    tmp_path: Path, command: str, content: bytes
) -> None:
    path = tmp_path / "input.yaml"
    path.write_bytes(content)
    _assert_clean_failure(_invoke(COMMANDS[command](str(path))), may_succeed=False)


@pytest.mark.parametrize("content", _cases(mutants(seed=26, count=100)))
def test_mutated_examples_never_crash(tmp_path: Path, command: str, content: bytes) -> None:
    path = tmp_path / "input.yaml"
    path.write_bytes(content)
    _assert_clean_failure(_invoke(COMMANDS[command](str(path))), may_succeed=True)


def test_the_alias_bomb_stays_small_through_the_real_program(tmp_path: Path) -> None:
    """The console program under a 1 GiB address-space limit: refused within seconds."""
    content = dict(hand_written())["a YAML alias bomb"]
    path = tmp_path / "bomb.yaml"
    path.write_bytes(content)

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    for command in ("validate", "explain", "simulate"):
        out = subprocess.run(
            [sys.executable, "-m", "kubetaint", command, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=limit,
            check=False,
        )
        assert out.returncode == 1, out.stderr
        assert out.stderr.startswith("error: ") and "excessive aliasing" in out.stderr
        assert "Traceback" not in out.stderr


def _paths(tmp_path: Path) -> dict[str, Path]:
    """Paths that are not a readable file of manifests."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "x.yaml").write_text("a: [\n")
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop1.yaml").symlink_to(tmp_path / "loop2.yaml")
    (tmp_path / "loop2.yaml").symlink_to(tmp_path / "loop1.yaml")
    names = ["empty", "junk", "missing.yaml", "dangling.yaml", "loop1.yaml"]
    return {name: tmp_path / name for name in names}


@pytest.mark.parametrize("which", ["empty", "junk", "missing.yaml", "dangling.yaml", "loop1.yaml"])
def test_a_path_that_is_not_a_readable_file_is_one_line(tmp_path: Path, command: str, which: str) -> None:
    result = _invoke(COMMANDS[command](str(_paths(tmp_path)[which])))
    _assert_clean_failure(result, may_succeed=False)
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1, result.stderr


def test_a_yaml_file_of_millions_of_nodes_is_refused_small_through_the_real_program(tmp_path: Path) -> None:
    """8 MB of `[1,1,…]` would take gigabytes to compose: refused under a 1 GiB address-space limit."""
    path = tmp_path / "many.yaml"
    path.write_text("items: [" + ",".join(["1"] * 4_000_000) + "]\n")

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    for command in ("validate", "explain", "simulate", "whatif"):
        args = ["whatif", "-f", str(path), "drain", "n1"] if command == "whatif" else [command, str(path)]
        out = subprocess.run(
            [sys.executable, "-m", "kubetaint", *args],
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=limit,
            check=False,
        )
        assert out.returncode == 1, (command, out.stderr)
        assert out.stderr.startswith(f"error: {path}"), command
        assert out.stderr.endswith(
            ": YAML of more than 3,000,000 nodes (values, mappings and sequences): "
            "give a file this large as JSON\n"
        ), (command, out.stderr)
        assert out.stderr.count("\n") == 1, command
