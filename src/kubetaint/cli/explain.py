"""`kubetaint explain -f FILE... [--pod NS/NAME] [-o table|json] [--all]`.

Reads YAML/JSON manifests with a small private loader (to be replaced by kubetaint.api.manifests).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
import yaml

from kubetaint.scheduler.config import ConfigError
from kubetaint.scheduler.explain import ExplainError, explain
from kubetaint.scheduler.explain_table import render_table


def _load(paths: tuple[str, ...]) -> list[Mapping[str, Any]]:
    objects: list[Mapping[str, Any]] = []
    for path in paths:
        try:
            text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise click.ClickException(f"{path}: {exc.strerror}") from None
        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" line {mark.line + 1}" if mark is not None else ""
            raise click.ClickException(
                f"{path}:{where} invalid YAML/JSON: {getattr(exc, 'problem', exc)}"
            ) from None
        for doc in docs:
            if doc is None:
                continue
            if not isinstance(doc, Mapping):
                raise click.ClickException(f"{path}: expected Kubernetes objects, got {type(doc).__name__}")
            objects.append(doc)
    return objects


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
def explain_command(files: tuple[str, ...], pod: str | None, output: str, all_rows: bool) -> None:
    """Place the unbound pods on the given nodes in scheduling order and explain every decision."""
    try:
        objects = _load(files)
        if pod is not None and "/" not in pod:
            pod = f"default/{pod}"
        document = explain(objects, pod=pod)
    except click.ClickException as exc:
        raise _Failure(exc.message) from None
    except (ExplainError, ConfigError) as exc:
        raise _Failure(str(exc)) from None
    if output == "json":
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo(render_table(document, all_rows=all_rows), nl=False)
