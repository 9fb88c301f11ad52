"""The documentation site's MkDocs hooks (docs/hooks): the generated CLI reference and the links to
repository files outside docs/."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]


def hook(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", ROOT / "docs" / "hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page(src_uri: str) -> SimpleNamespace:
    return SimpleNamespace(file=SimpleNamespace(src_uri=src_uri))


CONFIG = {"docs_dir": str(ROOT / "docs")}


@pytest.mark.parametrize(
    ("src_uri", "markdown", "rewritten"),
    [
        pytest.param(
            "simulator.md",
            "[ex](../examples/toleration-seconds.yaml)",
            "[ex](repository/examples/toleration-seconds.yaml)",
            id="a page at the top links to an example",
        ),
        pytest.param(
            "tutorials/ci-gate.md",
            "[schema](../../src/kubetaint/sim/scenario.schema.json#top)",
            "[schema](../repository/src/kubetaint/sim/scenario.schema.json#top)",
            id="a page one level down keeps the anchor",
        ),
        pytest.param(
            "simulator.md",
            "[missing](../examples/no-such.yaml)",
            "[missing](../examples/no-such.yaml)",
            id="a missing file stays as written for the strict build to report",
        ),
        pytest.param(
            "tutorials/ci-gate.md",
            "[page](../glossary.md)",
            "[page](../glossary.md)",
            id="a link to another page is left alone",
        ),
    ],
)
def test_links_to_repository_files_point_to_their_published_copy(
    src_uri: str, markdown: str, rewritten: str
) -> None:
    assert hook("repository_files").on_page_markdown(markdown, page(src_uri), CONFIG) == rewritten


def test_the_cli_reference_has_every_command_with_its_help() -> None:
    text = hook("cli_reference").on_page_markdown("<!-- kubetaint-cli-reference -->", page("cli.md"))
    for command in ("simulate", "whatif", "explain", "validate", "snapshot", "up", "clock advance"):
        assert f" kubetaint {command}\n" in text
    assert "Usage: kubetaint simulate [OPTIONS] [FILE]..." in text
