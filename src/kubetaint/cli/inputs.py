"""The command-line conventions every command shares: input files given as arguments or with
`-f/--filename` (repeatable; a directory contributes its manifest files; `-` is standard input),
and `-o/--output` formats."""

from __future__ import annotations

import json
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
    """A JSON document as block-style YAML (keys in document order)."""
    import yaml

    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    # (through JSON first: the document holds only JSON types, whatever classes made it)
    return str(
        yaml.dump(json.loads(json.dumps(document)), Dumper=dumper, sort_keys=False, allow_unicode=True)
    )
