"""A damaged SQLite store file is refused when opened, with one line naming the file and the
damage (and the object's key for one bad row); the files are 0600, also when they were not."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from kubetaint.clock import VirtualClock
from kubetaint.store.interface import StoreError
from kubetaint.store.sqlite import SqliteStore
from kubetaint.store.sqlite_schema import DB_FILE


def _pod(name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def _cluster(data: Path, pods: int = 200) -> Path:
    """A closed store with `pods` pods, checkpointed into the database file."""
    store = SqliteStore(data, VirtualClock())
    for i in range(pods):
        store.create("pods", _pod(f"web-{i:04d}"))
    store.close()
    path = data / DB_FILE
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def _empty(path: Path) -> None:
    path.write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def _truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00garbage, not a database\n" * 400)


def _header_intact_pages_garbled(path: Path) -> None:
    data = bytearray(path.read_bytes())
    for offset in range(4096 * 2, len(data), 4096):
        data[offset : offset + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))


def _bad_json_row(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE objects SET json = '{\"metadata\": {' WHERE name = 'web-0007'")


def _not_an_object_row(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE objects SET json = '[1, 2]' WHERE name = 'web-0011'")


def _bad_change(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE changes SET json = 'nope' WHERE rv = (SELECT MIN(rv) FROM changes)")


def _foreign(path: Path) -> None:
    _empty(path)
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE notes (body TEXT)")


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        pytest.param(_empty, "the file is empty (0 bytes), not a kubetaint database", id="an empty file"),
        pytest.param(_truncated, "the file is damaged (", id="a truncated file"),
        pytest.param(_garbage, "the file is damaged (file is not a database)", id="garbage"),
        pytest.param(_header_intact_pages_garbled, "the file is damaged (", id="garbled pages"),
        pytest.param(
            _bad_json_row,
            "the object /registry/pods/default/web-0007 is not a JSON object",
            id="one row of broken JSON",
        ),
        pytest.param(
            _not_an_object_row,
            "the object /registry/pods/default/web-0011 is not a JSON object",
            id="one row holding a JSON array",
        ),
        pytest.param(_bad_change, "the change at resourceVersion ", id="one change of broken JSON"),
        pytest.param(
            _foreign, "not a kubetaint database (no meta, objects, changes table)", id="another database"
        ),
    ],
)
def test_a_damaged_store_is_refused_with_one_line(
    tmp_path: Path, damage: Callable[[Path], None], message: str
) -> None:
    path = _cluster(tmp_path)
    damage(path)
    with pytest.raises(StoreError) as info:
        SqliteStore(tmp_path, VirtualClock())
    text = str(info.value)
    assert text.startswith(f"cannot open SQLite store {path}: ")
    assert message in text
    assert "\n" not in text


def test_the_refused_store_releases_the_data_dir(tmp_path: Path) -> None:
    path = _cluster(tmp_path)
    _garbage(path)
    with pytest.raises(StoreError):
        SqliteStore(tmp_path, VirtualClock())
    path.unlink()
    SqliteStore(tmp_path, VirtualClock()).close()  # the lock was released


def test_a_healthy_store_opens_with_every_object(tmp_path: Path) -> None:
    _cluster(tmp_path, pods=30)
    store = SqliteStore(tmp_path, VirtualClock())
    try:
        assert len(store.list("pods").items) == 30
    finally:
        store.close()


def _modes(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mode & 0o777 for p in folder.iterdir()}


def test_the_database_files_are_private(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path, VirtualClock())
    try:
        store.create("pods", _pod("web"))
        assert _modes(tmp_path) == {
            "kubetaint.db": 0o600,
            "kubetaint.db-wal": 0o600,
            "kubetaint.db-shm": 0o600,
            "kubetaint.lock": 0o600,
        }
    finally:
        store.close()


def test_existing_files_are_made_private(tmp_path: Path) -> None:
    _cluster(tmp_path)
    for file in tmp_path.iterdir():
        file.chmod(0o644)
    store = SqliteStore(tmp_path, VirtualClock())
    try:
        assert set(_modes(tmp_path).values()) == {0o600}
    finally:
        store.close()
