"""The console program when the reader of its output goes away (`kubetaint simulate FILE | head`):
it ends as kubectl does, killed by SIGPIPE (status 141 in a shell), with nothing on standard
error: no traceback and no error line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "taint-based-eviction.yaml")
MANIFESTS = str(ROOT / "examples" / "manifests" / "nodes.yaml")

#: 1,000 pods on 200 nodes: output well beyond a pipe's buffer in each data format.
BIG = """apiVersion: kubetaint.dev/v1alpha1
kind: Scenario
metadata: {name: big}
spec:
  until: 10m
  nodeGroups:
  - {name: node, count: 200, zones: [zone-a]}
  objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 1000
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: nginx}]}
"""

COMMANDS = [
    pytest.param(["--help"], id="kubetaint --help"),
    pytest.param(["--version"], id="kubetaint --version"),
    pytest.param(["simulate", "--help"], id="a subcommand's --help"),
    pytest.param(["simulate", EXAMPLE], id="simulate's table"),
    pytest.param(["simulate", EXAMPLE, "-o", "json"], id="simulate -o json"),
    pytest.param(["simulate", EXAMPLE, "-o", "yaml"], id="simulate -o yaml"),
    pytest.param(["simulate", EXAMPLE, "-o", "html"], id="simulate -o html"),
    pytest.param(["validate", MANIFESTS], id="validate"),
    pytest.param(["explain", MANIFESTS], id="explain"),
    pytest.param(["whatif", "taint", "gpu-1", "x=y:NoExecute", "-f", MANIFESTS], id="whatif"),
    pytest.param(["validate", "missing.yaml"], id="an error line to a closed standard error"),
]


def kubetaint(*argv: str) -> list[str]:
    return [sys.executable, "-c", "from kubetaint.cli.main import main; main()", *argv]


@pytest.mark.parametrize("argv", COMMANDS)
def test_a_reader_gone_before_the_first_line_ends_the_program_by_sigpipe(argv: list[str]) -> None:
    with subprocess.Popen(kubetaint(*argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        if "missing.yaml" in argv:
            process.stderr.close()
            stderr = b""
        else:
            stderr = process.stderr.read()
        assert (process.wait(timeout=120), stderr) == (-signal.SIGPIPE, b"")


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "PYTHONUNBUFFERED"])
@pytest.mark.parametrize("output", ["table", "json", "yaml"])
def test_a_reader_gone_after_the_first_bytes_ends_the_program_by_sigpipe(
    tmp_path: Path, output: str, unbuffered: bool
) -> None:
    """Also under PYTHONUNBUFFERED, where a standard stream's write the kernel takes only part of
    would otherwise end without an error (`exiting.whole_writes`)."""
    scenario = tmp_path / "big.yaml"
    scenario.write_text(BIG)
    argv = kubetaint("simulate", str(scenario), "-o", output)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as process:
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.read(100)  # as `| head -c 100` reads, then goes away
        process.stdout.close()
        stderr = process.stderr.read()
        assert (process.wait(timeout=300), stderr) == (-signal.SIGPIPE, b"")


def test_an_unbuffered_stream_fails_a_write_its_reader_left_instead_of_cutting_it_short() -> None:
    """A text stream straight over a file descriptor (what PYTHONUNBUFFERED gives) may take a
    write the kernel accepts only part of as done; through `whole_writes` the rest is written, or
    the write raises."""
    import contextlib
    import io
    import threading

    from kubetaint.cli.exiting import whole_writes

    def reader_leaving_after(fd: int) -> None:
        os.read(fd, 100)
        os.close(fd)

    read_end, write_end = os.pipe()
    stream = io.TextIOWrapper(io.FileIO(write_end, "w"), encoding="utf-8", write_through=True)
    out = whole_writes(stream)
    assert out is not stream
    reader = threading.Thread(target=reader_leaving_after, args=(read_end,))
    reader.start()
    with pytest.raises(BrokenPipeError):
        out.write("x" * 2_000_000)
        out.flush()
    reader.join()
    with contextlib.suppress(BrokenPipeError):
        out.close()
