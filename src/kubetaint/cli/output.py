"""Writing a command's document to standard output."""

from __future__ import annotations

import click

#: A pipe's usual capacity: one piece is at most what one write to a pipe can take at once.
PIECE = 1 << 16


def write_out(text: str) -> None:
    """Write `text` to standard output in pieces of PIECE characters. A reader that goes away
    mid-way (`| head`) then makes a write fail, as it should: CPython reports one large write
    that a closing pipe cuts short as complete, and the rest would be dropped without a word."""
    for start in range(0, len(text), PIECE):
        click.echo(text[start : start + PIECE], nl=False)
