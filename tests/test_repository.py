"""The repository stands on its own (nothing in it points to notes kept outside it), and its
documentation keeps up with the code: speed modules say how to switch them off, every coined term
is in the glossary, every memo is in the performance page."""

from __future__ import annotations

import ast
import re
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


#: Modules that exist only for a shortcut (docs/performance.md): the first sentence of each
#: one's docstring says what it speeds up and how to switch it off. A module that is gone needs
#: no sentence; a new speed module is added here.
SPEED_MODULES = [
    "speed/memo.py",
    "api/validation/memo.py",
    "kubelet/running.py",
    "sim/doccopy.py",
    "sim/jsontext.py",
    "sim/yamltext.py",
    "sim/sharing.py",
    "scheduler/filter_memo.py",
    "scheduler/plugins/fit_masks.py",
    "controllers/nodelifecycle/monitor_work.py",
]
#: Terms the code coins, each a heading of docs/glossary.md (matched without case).
COINED_TERMS = [
    "reference mode",
    "shortcut",
    "speed module",
    "memo",
    "last-answer memo",
    "bookkeeping only",
    "stored part",
    "clean spec",
    "pod view",
    "replay",
    "the first second's adoptions",
    "part sharing",
    "decode memo",
    "skeleton",
    "trusted object",
    "field write",
    "plainly current",
    "vouched run",
    "change batch",
    "plain event",
    "pod run",
    "heartbeat round",
    "settled node",
    "logged re-queue",
    "zone tainter",
    "equivalence class",
    "toleration signature",
    "filter memo",
    "time slice",
]
SOURCE = ROOT / "src" / "kubetaint"
#: How a memo is made: `Memo("its.name", ...)` or `Memo[K, V]("its.name"...` (the name maybe an
#: f-string, then matched by its fixed part).
MEMO_NAME = re.compile(r'Memo(?:\[[^()]*\])?\(\s*f?"([^"]+)"')


def test_every_memo_is_listed_in_the_performance_page() -> None:
    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    named = {
        match.group(1).partition("{")[0]  # (an f-string name: its fixed part, `module.`)
        for path in SOURCE.rglob("*.py")
        for match in MEMO_NAME.finditer(path.read_text(encoding="utf-8"))
    }
    assert named, "no memo found: the pattern no longer matches how memos are made"
    missing = sorted(name for name in named if not _listed(name, page))
    assert missing == []


def _listed(name: str, page: str) -> bool:
    """`name` in the page's table: in full, as `its.module.*`, or as `.last_part` after a name
    of the same module."""
    quoted = set(re.findall(r"`([a-z0-9_.*]+)`", page))
    module, _, last = name.rpartition(".")
    return (
        name in quoted
        or any(q.endswith(".*") and name.startswith(q[:-1]) for q in quoted)
        or (f".{last}" in quoted and any(q.startswith(module + ".") for q in quoted))
    )


@pytest.mark.parametrize("module", SPEED_MODULES)
def test_a_speed_module_says_first_what_it_speeds_up_and_how_to_switch_it_off(module: str) -> None:
    path = SOURCE / module
    if not path.exists():
        pytest.skip(f"{module} is gone")
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    summary = docstring.partition("\n\n")[0]  # its first line, wrapped
    assert "KUBETAINT_REFERENCE=1" in summary, f"{module}: {summary!r}"


def test_every_coined_term_is_in_the_glossary() -> None:
    headings = [
        line[4:].lower()
        for line in (ROOT / "docs" / "glossary.md").read_text().splitlines()
        if line.startswith("### ")
    ]
    missing = [term for term in COINED_TERMS if not any(term.lower() in heading for heading in headings)]
    assert missing == []
