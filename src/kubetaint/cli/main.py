"""The `kubetaint` command group; each subcommand lives in its own module under `kubetaint.cli`."""

from __future__ import annotations

import importlib

import click

from kubetaint import __version__
from kubetaint.cli.exiting import mark_console

# (command name, module, attribute): subcommands register here; missing ones are skipped so a
# partially built tree still has a working CLI.
_COMMANDS = [
    ("validate", "kubetaint.cli.validate", "validate_command"),
    ("explain", "kubetaint.cli.explain", "explain_command"),
    ("simulate", "kubetaint.cli.simulate", "simulate_command"),
    ("whatif", "kubetaint.cli.whatif", "whatif_command"),
    ("snapshot", "kubetaint.cli.snapshot", "snapshot_command"),
    ("up", "kubetaint.cli.up", "up_command"),
    ("clock", "kubetaint.cli.clock", "clock_group"),
    ("scheduler", "kubetaint.cli.scheduler", "scheduler_command"),
    ("controllers", "kubetaint.cli.controllers", "controllers_command"),
]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kubetaint")
def cli() -> None:
    """Kubernetes taints and tolerations: validate, explain, simulate and run a cluster."""


def _needs_extra(name: str, missing: str) -> click.Command:
    """A stand-in for a subcommand whose optional dependencies are not installed (the live server's
    commands without the `server` extra): it says which extra to install, and exits 1."""

    @click.command(
        name=name,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
        help="(needs the server extra: pip install 'kubetaint[server]')",
    )
    def needs_extra() -> None:
        click.echo(
            f"error: kubetaint {name} needs the {missing} package: pip install 'kubetaint[server]'", err=True
        )
        raise SystemExit(1)

    return needs_extra


def _register() -> None:
    for name, module_name, attribute in _COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            if exc.name is None or exc.name.split(".")[0] == "kubetaint":
                raise
            cli.add_command(_needs_extra(name, exc.name.split(".")[0]), name=name)
            continue
        cli.add_command(getattr(module, attribute), name=name)


_register()


def main() -> None:
    """Console-script entry point."""
    mark_console()
    cli(prog_name="kubetaint")
