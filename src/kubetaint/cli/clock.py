"""`kubetaint clock now|advance DURATION`: read or move the clock of a `kubetaint up --clock
virtual` server, found through a kubeconfig (--kubeconfig, else $KUBECONFIG, else the default
data dir's, else ~/.kube/config)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click
import httpx
import yaml

from kubetaint.apiserver.clockapi import CLOCK_PATH
from kubetaint.cli.up import default_data_dir
from kubetaint.sim.durations import DurationError, format_duration, parse_duration

#: Advancing a day of virtual time can take a while on a big cluster.
TIMEOUT_SECONDS = 600.0


class ClockError(Exception):
    """A one-line failure to report."""


def kubeconfig_path(given: Path | None) -> Path:
    if given is not None:
        return given
    env = os.environ.get("KUBECONFIG", "")
    first = next((p for p in env.split(os.pathsep) if p), "")
    if first:
        return Path(first)
    local = default_data_dir() / "kubeconfig"
    return local if local.exists() else Path.home() / ".kube" / "config"


def server_url(path: Path) -> str:
    """The current context's cluster server of the kubeconfig at `path`."""
    try:
        config = yaml.safe_load(path.read_text()) or {}
    except OSError as err:
        raise ClockError(f"cannot read kubeconfig {path}: {err.strerror}") from None
    except yaml.YAMLError:
        raise ClockError(f"kubeconfig {path} is not valid YAML") from None
    if not isinstance(config, dict):
        raise ClockError(f"kubeconfig {path} is not a kubeconfig")
    current = config.get("current-context")
    contexts = {
        c.get("name"): c.get("context") or {} for c in config.get("contexts") or [] if isinstance(c, dict)
    }
    clusters = {
        c.get("name"): c.get("cluster") or {} for c in config.get("clusters") or [] if isinstance(c, dict)
    }
    context = contexts.get(current)
    if context is None:
        raise ClockError(f"kubeconfig {path}: current context {current!r} not found")
    server = (clusters.get(context.get("cluster")) or {}).get("server")
    if not server:
        raise ClockError(f"kubeconfig {path}: the current context's cluster has no server")
    return str(server).rstrip("/")


def _call(method: str, url: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    try:
        response = httpx.request(method, url, json=body, timeout=TIMEOUT_SECONDS)
    except httpx.HTTPError as err:
        raise ClockError(f"cannot reach the server at {url}: {err}") from None
    try:
        doc = response.json()
    except ValueError:
        doc = None
    if response.status_code == 404:
        raise ClockError(f"the server at {url} is not a kubetaint server (no clock endpoint)")
    if response.status_code >= 400:
        message = doc.get("message") if isinstance(doc, dict) else response.text.strip()
        raise ClockError(f"the server refused: {message}")
    if not isinstance(doc, dict):
        raise ClockError(f"unexpected answer from {url}")
    return doc


def _show(doc: dict[str, Any]) -> str:
    text = f"{doc.get('now')} ({doc.get('type')} clock"
    if "elapsedSeconds" in doc:
        text += f", {format_duration(float(doc['elapsedSeconds']))} since the server started"
    return text + ")"


def _run(action: str, kubeconfig: Path | None, seconds: float | None = None) -> None:
    try:
        base = server_url(kubeconfig_path(kubeconfig)) + CLOCK_PATH
        if action == "now":
            doc = _call("GET", base)
        else:
            doc = _call("POST", base + "/advance", {"seconds": seconds})
    except ClockError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    click.echo(_show(doc))


_KUBECONFIG = click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="kubeconfig of the server.",
)


@click.group()
def clock_group() -> None:
    """Read or advance the clock of a `kubetaint up --clock virtual` server."""


@clock_group.command("now")
@_KUBECONFIG
def now_command(kubeconfig: Path | None) -> None:
    """Print the server's current time."""
    _run("now", kubeconfig)


@clock_group.command("advance")
@click.argument("duration")
@_KUBECONFIG
def advance_command(duration: str, kubeconfig: Path | None) -> None:
    """Move virtual time forward by DURATION (Go-style: 90s, 5m, 1h30m; or plain seconds),
    running everything due on the way (evictions, heartbeats, controllers)."""
    try:
        seconds = parse_duration(duration)
    except DurationError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    _run("advance", kubeconfig, seconds)
