"""How a command fails: one `error: ...` line per problem on standard error, exit 1 for input that
cannot be used (a file, a manifest, a scenario, a cluster's answer) and 2 for a wrong command line."""

from __future__ import annotations

from typing import IO, Any

import click


class Failure(click.ClickException):
    """Input that cannot be used: each line of the message becomes one `error:` line; exit 1."""

    exit_code = 1

    def show(self, file: IO[Any] | None = None) -> None:
        for line in self.message.splitlines() or [""]:
            click.echo(f"error: {line}", err=True)


class UsageFailure(Failure):
    """A wrong command line (an unknown change, a bad duration): exit 2."""

    exit_code = 2
