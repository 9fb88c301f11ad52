"""The README and the documentation show real output: every offline `kubetaint` command they show
(simulate, explain, validate), run on the files the same page defines, prints what the page says.

A page defines a file with a ```yaml block whose preceding text names it in backticks
(`first.yaml`), or ships it next to itself (`docs/tutorials/zone-snap.json`); a ```console block
holds `$ command` lines each followed by its output. Commands that need files the page does not
define, pipes or redirections are not run here. A line `...` in an output stands for lines left out.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
OFFLINE = ("simulate", "explain", "validate", "whatif")
_FENCE = re.compile(r"^```(?P<info>\w*)\n(?P<body>.*?)^```\n", re.S | re.M)
_NAMED = re.compile(r"`([\w.-]+\.(?:ya?ml|json))`")


@dataclass
class Shown:
    page: Path
    command: str
    expected: list[str]
    files: dict[str, str]

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}: $ {self.command}"


def shown_commands(page: Path) -> list[Shown]:
    text = page.read_text(encoding="utf-8")
    files: dict[str, str] = {}
    found: list[Shown] = []
    last = 0
    for block in _FENCE.finditer(text):
        before = text[last : block.start()]
        last = block.end()
        if block["info"] == "yaml":
            names = _NAMED.findall(before)
            if names:
                files[names[-1]] = block["body"]
        elif block["info"] == "console":
            found += _commands(page, block["body"], dict(files))
    return found


def _commands(page: Path, body: str, files: dict[str, str]) -> list[Shown]:
    out: list[Shown] = []
    for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
        command, _, rest = chunk.partition("\n")
        words = command.split()
        if len(words) < 2 or words[0] != ".venv/bin/kubetaint" or words[1] not in OFFLINE:
            continue
        if any(sign in command for sign in ("|", ">", "<", "&&", ";")):
            continue
        out.append(Shown(page, command, rest.rstrip("\n").split("\n"), files))
    return out


CASES = [shown for page in PAGES for shown in shown_commands(page)]


def _needs(shown: Shown) -> list[str]:
    """The files and directories the command names."""
    return [word for word in shlex.split(shown.command)[2:] if re.search(r"\.(ya?ml|json)$|/$", word)]


def _matches(expected: list[str], actual: list[str]) -> bool:
    if "..." not in expected:
        return expected == actual
    cut = expected.index("...")
    head, tail = expected[:cut], expected[cut + 1 :]
    return actual[: len(head)] == head and (not tail or actual[-len(tail) :] == tail)


def test_the_pages_show_offline_commands() -> None:
    """The check below has something to check: the README's first scenario and a what-if at least."""
    assert any(shown.page.name == "README.md" and "first.yaml" in shown.command for shown in CASES)
    assert any("whatif" in shown.command and "zone-snap.json" in shown.command for shown in CASES)


@pytest.mark.parametrize("shown", CASES, ids=str)
def test_a_shown_command_prints_what_the_page_shows(shown: Shown, tmp_path: Path) -> None:
    for name, body in shown.files.items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    for name in _needs(shown):
        beside = shown.page.parent / name
        if not (tmp_path / name).exists() and beside.is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_bytes(beside.read_bytes())
    missing = [name for name in _needs(shown) if not (tmp_path / name).exists()]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}, which the page does not define")
    argv = shlex.split(shown.command)[1:]
    result = subprocess.run(
        [sys.executable, "-m", "kubetaint", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    actual = [line.rstrip() for line in (result.stderr + result.stdout).rstrip("\n").split("\n")]
    expected = [line.rstrip() for line in shown.expected]
    assert _matches(expected, actual), "\n".join(["actual output:", *actual])
