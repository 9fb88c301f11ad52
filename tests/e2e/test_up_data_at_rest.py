"""Data at rest of the real `kubetaint up`: the data dir 0700, the database, keys, token file and
kubeconfig 0600 (also when they were looser before the start), and a database that is empty,
truncated, garbage or holds a row of broken JSON refused at start with one line naming the file
and the damage (and the object's key), exit 1, nothing served."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from .harness import KUBECTL, UpServer

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]

PRIVATE = {
    "kubeconfig": 0o600,
    "kubetaint.db": 0o600,
    "kubetaint.lock": 0o600,
    "pki/ca.key": 0o600,
    "pki/apiserver.key": 0o600,
    "pki/admin.key": 0o600,
    "pki/tokens.csv": 0o600,
}


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def _modes(data: Path) -> dict[str, int]:
    return {name: _mode(data / name) for name in PRIVATE}


def test_the_data_dir_and_every_secret_are_private(tmp_path: Path) -> None:
    server = UpServer(tmp_path, "--nodes", "1").start()
    try:
        assert _mode(server.data_dir) == 0o700
        assert _mode(server.data_dir / "pki") == 0o700
        assert _modes(server.data_dir) == PRIVATE
        for companion in ("kubetaint.db-wal", "kubetaint.db-shm"):
            assert _mode(server.data_dir / companion) == 0o600
    finally:
        server.kill()


def test_looser_modes_left_from_before_are_made_private_at_start(tmp_path: Path) -> None:
    first = UpServer(tmp_path, "--nodes", "0").start()
    first.stop()
    data = first.data_dir
    data.chmod(0o755)
    (data / "pki").chmod(0o755)
    for name in PRIVATE:
        (data / name).chmod(0o644)
    again = UpServer(tmp_path, "--nodes", "0").start()
    try:
        assert [_mode(data), _mode(data / "pki")] == [0o700, 0o700]
        assert _modes(data) == PRIVATE
    finally:
        again.kill()


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _truncated(path: Path) -> None:
    content = path.read_bytes()
    path.write_bytes(content[: len(content) // 2])


def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00this is not a database\n" * 500)


def _bad_json_row(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE objects SET json = '{\"metadata\": ' WHERE key = '/registry/nodes/node-1'")
        assert conn.total_changes == 1


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        pytest.param(_empty, "the file is empty (0 bytes), not a kubetaint database", id="an empty file"),
        pytest.param(_truncated, "the file is damaged (", id="a truncated file"),
        pytest.param(_garbage, "the file is damaged (file is not a database)", id="garbage"),
        pytest.param(
            _bad_json_row,
            "the object /registry/nodes/node-1 is not a JSON object",
            id="one row of broken JSON",
        ),
    ],
)
def test_a_damaged_database_is_refused_at_start_with_one_line(
    tmp_path: Path, damage: Callable[[Path], None], message: str
) -> None:
    first = UpServer(tmp_path, "--nodes", "2").start()
    code, _, _ = first.stop()
    assert code == 0
    database = first.data_dir / "kubetaint.db"
    for companion in ("kubetaint.db-wal", "kubetaint.db-shm"):
        assert not (first.data_dir / companion).exists()  # a clean stop leaves one file
    damage(database)
    result = subprocess.run(
        [sys.executable, "-m", "kubetaint", "up", "--data-dir", str(first.data_dir), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: cannot open SQLite store {database}: ")
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""
