"""`kubetaint clock now|advance DURATION`: read or move the clock of a `kubetaint up --clock
virtual` server, found through a kubeconfig (--kubeconfig, else $KUBECONFIG, else the default
data dir's, else ~/.kube/config)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from kubetaint.cli.extras import missing_extra
from kubetaint.store.interface import StoreError
from kubetaint.store.remote_config import Connection, load_kubeconfig

# (httpx and the server's modules are imported when a command runs: `kubetaint clock --help` stays fast)

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
    from kubetaint.cli.up import default_data_dir

    local = default_data_dir() / "kubeconfig"
    return local if local.exists() else Path.home() / ".kube" / "config"


def connection(path: Path) -> Connection:
    """How to reach the server of the kubeconfig at `path`: its current context's server, CA,
    token and client certificate (as `kubetaint scheduler` reads them)."""
    if not path.is_file():
        reason = "No such file or directory" if not path.exists() else "Is a directory"
        raise ClockError(f"cannot read kubeconfig {path}: {reason}")
    try:
        return load_kubeconfig(path)
    except StoreError as err:
        raise ClockError(str(err)) from None


def _call(
    connection: Connection, method: str, path: str, body: dict[str, Any] | None = None
) -> dict[str, Any]:
    try:
        import httpx
    except ModuleNotFoundError as error:
        raise missing_extra("clock", error, "cluster") from None
    url = connection.server + path
    try:
        with httpx.Client(
            verify=connection.ssl_context(), timeout=TIMEOUT_SECONDS, proxy=connection.proxy
        ) as client:
            response = client.request(method, url, json=body, headers=connection.headers())
    except (httpx.HTTPError, OSError) as err:
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
    from kubetaint.core.durations import format_duration

    text = f"{doc.get('now')} ({doc.get('type')} clock"
    if "elapsedSeconds" in doc:
        text += f", {format_duration(float(doc['elapsedSeconds']))} since the server started"
    return text + ")"


def _run(action: str, kubeconfig: Path | None, seconds: float | None = None) -> None:
    from kubetaint.apiserver.clock_path import CLOCK_PATH

    try:
        server = connection(kubeconfig_path(kubeconfig))
        if action == "now":
            doc = _call(server, "GET", CLOCK_PATH)
        else:
            doc = _call(server, "POST", CLOCK_PATH + "/advance", {"seconds": seconds})
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


@click.group(
    epilog="""\b
Examples:
  kubetaint clock now
  kubetaint clock advance 5m --kubeconfig ./data/kubeconfig
""",
)
def clock_group() -> None:
    """Read or advance the clock of a `kubetaint up --clock virtual` server."""


@clock_group.command("now", epilog="\b\nExamples:\n  kubetaint clock now\n")
@_KUBECONFIG
def now_command(kubeconfig: Path | None) -> None:
    """Print the server's current time."""
    _run("now", kubeconfig)


@clock_group.command(
    "advance", epilog="\b\nExamples:\n  kubetaint clock advance 90s\n  kubetaint clock advance 1h\n"
)
@click.argument("duration")
@_KUBECONFIG
def advance_command(duration: str, kubeconfig: Path | None) -> None:
    """Move virtual time forward by DURATION (Go-style: 90s, 5m, 1h30m; or plain seconds),
    running everything due on the way (evictions, heartbeats, controllers)."""
    from kubetaint.core.durations import DurationError, parse_duration

    try:
        seconds = parse_duration(duration)
    except DurationError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    _run("advance", kubeconfig, seconds)
