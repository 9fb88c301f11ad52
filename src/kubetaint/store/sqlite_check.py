"""The checks an existing SQLite store file passes before it is served, and its permissions.

A file that is empty (0 bytes), truncated or corrupt, that holds another program's tables, or
whose rows do not hold JSON objects is refused with one line naming the file and the damage (and
the object's key when one row is bad), never served as an empty or partial cluster. The database
and its -wal/-shm companions are kept 0600: they hold every object of the cluster.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from kubetaint.store.interface import StoreError

PRIVATE_FILE = 0o600
#: How many lines of PRAGMA quick_check to read: the first names the damage.
_QUICK_CHECK_LINES = 1
_TABLES = ("meta", "objects", "changes")


def _not_an_object(column: str) -> str:
    """SQL true when `column` is not a JSON object (json_type fails on invalid JSON: CASE first)."""
    return f"(CASE WHEN json_valid({column}) THEN json_type({column}) != 'object' ELSE 1 END)"


def companions(path: Path) -> tuple[Path, ...]:
    """The database file and the files SQLite keeps beside it in WAL mode."""
    return (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"))


def restrict(paths: tuple[Path, ...]) -> None:
    """Make the existing files among `paths` 0600 (StoreError when that is not possible)."""
    for file in paths:
        try:
            if file.exists() and (file.stat().st_mode & 0o777) != PRIVATE_FILE:
                os.chmod(file, PRIVATE_FILE)
        except OSError as err:
            raise StoreError(f"cannot restrict the permissions of {file}: {err.strerror or err}") from None


def create_private(path: Path) -> None:
    """Create the database file 0600 before SQLite does, so that SQLite gives its -wal and -shm
    files the same mode (it copies the database file's permissions)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    except FileExistsError:
        pass
    except OSError as err:
        raise StoreError(f"cannot create SQLite store {path}: {err.strerror or err}") from None


def check_before_open(path: Path) -> bool:
    """Whether `path` is a store file that exists already; StoreError for an empty one."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return False
    except OSError as err:
        raise StoreError(f"cannot open SQLite store {path}: {err.strerror or err}") from None
    wal = companions(path)[1]
    if size == 0 and not (wal.exists() and wal.stat().st_size > 0):
        raise StoreError(
            f"cannot open SQLite store {path}: the file is empty (0 bytes), not a kubetaint database; "
            "move it away to start a new cluster"
        )
    return True


def damaged(path: Path, err: sqlite3.DatabaseError) -> StoreError:
    """The one-line error for a file SQLite cannot read (not for a locked one)."""
    return StoreError(f"cannot open SQLite store {path}: the file is damaged ({_one_line(str(err))})")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def check_contents(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a store whose pages are damaged, whose tables are another program's, or a row of
    which does not hold a JSON object (StoreError naming the damage)."""
    try:
        _check_contents(conn, path)
    except sqlite3.OperationalError:
        raise  # locked or busy: reported as such by the caller
    except sqlite3.DatabaseError as err:
        raise damaged(path, err) from None


def _check_contents(conn: sqlite3.Connection, path: Path) -> None:
    problems = [str(row[0]) for row in conn.execute(f"PRAGMA quick_check({_QUICK_CHECK_LINES})")]
    if problems != ["ok"]:
        raise StoreError(
            f"cannot open SQLite store {path}: the file is damaged ({_one_line('; '.join(problems))})"
        )
    tables = {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return  # created but never initialised (the schema is created next)
    missing = [name for name in _TABLES if name not in tables]
    if missing:
        raise StoreError(
            f"cannot open SQLite store {path}: not a kubetaint database (no {', '.join(missing)} table)"
        )
    bad = conn.execute(f"SELECT key FROM objects WHERE {_not_an_object('json')} LIMIT 1").fetchone()
    if bad is not None:
        raise StoreError(f"cannot open SQLite store {path}: the object {bad[0]} is not a JSON object")
    bad = conn.execute(
        f"SELECT rv, resource FROM changes WHERE {_not_an_object('json')} "
        f"OR (old_json IS NOT NULL AND {_not_an_object('old_json')}) LIMIT 1"
    ).fetchone()
    if bad is not None:
        raise StoreError(
            f"cannot open SQLite store {path}: the change at resourceVersion {bad[0]} of {bad[1]} "
            "is not a JSON object"
        )
