"""`kubetaint explain -f FILE... [--pod NS/NAME] [-o table|json] [--all]`.

Reads YAML/JSON manifests with a small private loader (to be replaced by kubetaint.api.manifests).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import click

from kubetaint.api.manifests import ManifestError, load_manifests
from kubetaint.cli.scheduler_config import SchedulerConfigError, config_option, load_scheduler_config
from kubetaint.scheduler.config import ConfigError
from kubetaint.scheduler.explain import ExplainError, explain
from kubetaint.scheduler.explain_table import render_table


def _load(paths: tuple[str, ...]) -> list[Mapping[str, Any]]:
    """Every object in the files (the shared manifest loader: YAML/JSON, lists, directories, stdin)."""
    try:
        return [manifest.obj for manifest in load_manifests(list(paths))]
    except ManifestError as exc:
        raise click.ClickException(str(exc)) from None


class _Failure(click.ClickException):
    exit_code = 1

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-f", "--filename", "files", multiple=True, required=True, help="Manifest file(s); - for stdin."
)
@click.option("--pod", default=None, metavar="NS/NAME", help="Report only this pod.")
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--all", "all_rows", is_flag=True, help="One row per node (no grouping).")
@config_option
@click.argument("more_files", nargs=-1, metavar="[FILE]...")
def explain_command(
    files: tuple[str, ...],
    more_files: tuple[str, ...],
    pod: str | None,
    output: str,
    all_rows: bool,
    *,
    config_file: str | None = None,
) -> None:
    """Place the unbound pods on the given nodes in scheduling order and explain every decision."""
    try:
        config = load_scheduler_config(config_file)[0] if config_file else None
        objects = _load((*files, *more_files))  # `-f a.yaml b.yaml` as in -f FILE...
        if pod is not None and "/" not in pod:
            pod = f"default/{pod}"
        document = explain(objects, pod=pod, config=config)
    except click.ClickException as exc:
        raise _Failure(exc.message) from None
    except (ExplainError, ConfigError, SchedulerConfigError) as exc:
        raise _Failure(str(exc)) from None
    if output == "json":
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo(render_table(document, all_rows=all_rows), nl=False)
