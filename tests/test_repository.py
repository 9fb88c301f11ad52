"""The repository stands on its own: nothing in it points to notes kept outside it."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Spelled in pieces so that this file does not match itself.
OUTSIDE = ("DESIGN" + ".md", "shared" + "/reference", "../" + "shared")
SCANNED = [
    "README.md",
    "pyproject.toml",
    "mkdocs.yml",
    "src",
    "tests",
    "docs",
    "scripts",
    "benchmarks",
    ".ci",
]


def _files() -> list[Path]:
    found: list[Path] = []
    for entry in SCANNED:
        path = ROOT / entry
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += [
                p
                for p in path.rglob("*")
                if p.is_file() and p.suffix in (".py", ".md", ".toml", ".yml", ".yaml", "")
            ]
    return found


@pytest.mark.parametrize("needle", OUTSIDE)
def test_no_file_points_outside_the_repository(needle: str) -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in _files()
        if "__pycache__" not in path.parts and needle in path.read_text(encoding="utf-8", errors="replace")
    ]
    assert offenders == []
