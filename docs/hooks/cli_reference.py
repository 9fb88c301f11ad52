"""MkDocs hook: the CLI reference (docs/cli.md) generated from the click commands at build time.

The page holds the marker `<!-- kubetaint-cli-reference -->`; each command and subcommand of
`kubetaint` replaces it with a heading and the exact text of its `--help`, so the reference is
always the installed commands' own.
"""

from __future__ import annotations

from typing import Any

import click

MARKER = "<!-- kubetaint-cli-reference -->"
WIDTH = 100


def _sections(command: click.Command, path: list[str], parent: click.Context | None) -> list[str]:
    ctx = click.Context(
        command, info_name=path[-1], parent=parent, terminal_width=WIDTH, max_content_width=WIDTH
    )
    title = " ".join(path)
    depth = "#" * min(len(path) + 1, 4)
    out = [f"{depth} {title}\n", "```text", command.get_help(ctx), "```\n"]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                out += _sections(sub, [*path, name], ctx)
    return out


def reference() -> str:
    from kubetaint.cli.main import cli

    return "\n".join(_sections(cli, ["kubetaint"], None))


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())
