"""The declared dependencies match the imports: every package the source imports is declared,
in the base install or an extra (pyproject.toml), and the base install holds exactly what the
library and the offline commands import outside the server's packages."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "kubetaint"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: The packages only the live server and the stores behind it use (the `server` and `etcd` extras).
SERVER_PACKAGES = ("apiserver", "store")


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def _imports(path: Path) -> set[str]:
    """The top-level names of third-party modules `path` imports (guarded imports included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names and name != "kubetaint"}


def _distributions(modules: set[str]) -> set[str]:
    owners = importlib.metadata.packages_distributions()
    return {owner.lower() for module in modules for owner in owners.get(module, [module])}


def test_every_imported_package_is_declared() -> None:
    declared = {_name(r) for r in PROJECT["dependencies"]}
    for extra, requirements in PROJECT["optional-dependencies"].items():
        if extra not in ("dev", "docs"):
            declared |= {_name(r) for r in requirements}
    imported = _distributions(set().union(*(_imports(path) for path in SRC.rglob("*.py"))))
    assert sorted(imported - declared) == []


def test_the_base_install_is_what_the_library_and_offline_commands_import() -> None:
    offline = [path for path in SRC.rglob("*.py") if path.relative_to(SRC).parts[0] not in SERVER_PACKAGES]
    needed = _distributions(set().union(*(_imports(path) for path in offline)))
    base = {_name(r) for r in PROJECT["dependencies"]}
    # what an offline module imports beyond the base must be optional there (guarded, or the
    # live-cluster and server commands, which name their extra when it is missing)
    optional = {"google-re2", "httpx"}
    assert sorted(needed - base - optional) == [] and sorted(base - needed) == []
