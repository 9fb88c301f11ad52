"""`kubetaint up` start-up failures: one line on stderr, exit 1, nothing left running."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ("--store", "etcd://127.0.0.1:1"),
            "error: cannot reach etcd at http://127.0.0.1:1",
            id="an unreachable etcd is named",
        ),
        pytest.param(
            ("--store", "bogus"),
            "error: unknown store 'bogus': expected memory, sqlite or etcd://HOST:PORT",
            id="an unknown store lists the kinds",
        ),
        pytest.param(
            ("--host", "256.1.1.1"),
            "error: cannot listen on 256.1.1.1:0",
            id="an address that cannot be bound",
        ),
    ],
)
def test_start_up_errors_are_one_line_and_exit_1(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kubetaint", "up", "--data-dir", str(tmp_path / "data"), "--port", "0", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.startswith(message)
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""
