"""MkDocs hook: links from a page to a file of the repository outside docs/ (a scenario example,
the scenario JSON Schema) work on the site too.

Each such file a page links to (`[schema](../src/kubetaint/sim/scenario.schema.json)`) is
published with the site under `repository/<its path in the repository>`, and the link is rewritten
to point there. A link to a repository file that does not exist stays as written, so the strict
build reports it.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

PUBLISHED = "repository"
#: A markdown link or image target: ](target) or ](target#anchor), without a scheme.
_LINK = re.compile(r"\]\((?P<target>(?:\.\./)+[^)\s#]+)(?P<anchor>#[^)\s]*)?\)")


def _repository_file(docs_dir: Path, page_src: str, target: str) -> str | None:
    """The repository-relative path of `target` (relative to the page), when it names a file of
    the repository outside docs/; None otherwise."""
    root = docs_dir.parent.resolve()
    resolved = (docs_dir / posixpath.dirname(page_src) / target).resolve()
    try:
        relative = resolved.relative_to(root)
    except ValueError:
        return None
    if relative.parts[:1] == (docs_dir.name,) or not resolved.is_file():
        return None
    return relative.as_posix()


def on_files(files: Files, config: Any) -> Files:
    docs_dir = Path(config["docs_dir"])
    wanted: set[str] = set()
    for page in files.documentation_pages():
        text = Path(page.abs_src_path or "").read_text(encoding="utf-8")
        for match in _LINK.finditer(text):
            found = _repository_file(docs_dir, page.src_uri, match["target"])
            if found is not None:
                wanted.add(found)
    root = docs_dir.parent.resolve()
    for path in sorted(wanted):
        files.append(File.generated(config, f"{PUBLISHED}/{path}", abs_src_path=str(root / path)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, **_: Any) -> str:
    docs_dir = Path(config["docs_dir"])
    src = page.file.src_uri

    def rewrite(match: re.Match[str]) -> str:
        found = _repository_file(docs_dir, src, match["target"])
        if found is None:
            return match[0]
        target = posixpath.relpath(f"{PUBLISHED}/{found}", posixpath.dirname(src) or ".")
        return f"]({target}{match['anchor'] or ''})"

    return _LINK.sub(rewrite, markdown)
