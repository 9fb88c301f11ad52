"""The command-line conventions every command shares: input files given as arguments or with
`-f/--filename` (repeatable; a directory contributes its manifest files; `-` is standard input),
and `-o/--output` formats."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from kubetaint.cli.failure import UsageFailure

F = TypeVar("F", bound=Callable[..., Any])

#: Data outputs (table and wide for people, json and yaml for programs).
DATA_OUTPUTS = ("table", "wide", "json", "yaml")


def input_files(help_text: str = "Input file or directory; - reads standard input.") -> Callable[[F], F]:
    """`[FILE]...` and `-f/--filename FILE` (repeatable), gathered by `gather_files`."""

    def decorate(func: F) -> F:
        func = click.option(
            "-f", "--filename", "files", multiple=True, metavar="FILE", help=f"{help_text} Repeatable."
        )(func)
        return click.argument("more_files", nargs=-1, metavar="[FILE]...")(func)

    return decorate


def gather_files(files: tuple[str, ...], more_files: tuple[str, ...]) -> list[str]:
    """Every input: the `-f` files in their order, then the arguments in theirs (click hands a
    command the two apart, not how they interleave: docs/cli.md#inputs); a usage error when none."""
    paths = [*files, *more_files]
    if not paths:
        raise UsageFailure("no input: give FILE or -f FILE (- reads standard input)")
    return paths


def dumps_yaml(document: Any) -> str:
    """A JSON document as block-style YAML (keys in document order): PyYAML's libyaml text of
    it read back from JSON (`kubetaint.sim.yamltext`)."""
    from kubetaint.sim.yamltext import dumps_yaml as block_yaml

    return block_yaml(document)
