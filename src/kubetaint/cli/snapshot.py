"""`kubetaint snapshot [--kubeconfig PATH] -o FILE`: capture a live cluster's scheduling-relevant
objects, read-only, into one Scenario document (kubetaint.sim.snapshot_capture)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from kubetaint.cli.failure import Failure
from kubetaint.sim.snapshot import SnapshotError
from kubetaint.sim.snapshot_capture import Progress, api_client, capture


def _progress() -> tuple[Progress | None, Callable[[], None]]:
    """A rich progress bar on stderr when it is a terminal."""
    if not sys.stderr.isatty():
        return None, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn

    bar = Progress(
        TextColumn("listing {task.fields[kind]}"), BarColumn(), console=Console(stderr=True), transient=True
    )
    task = bar.add_task("snapshot", total=1, kind="")
    bar.start()

    def update(kind: str, done: int, total: int) -> None:
        bar.update(task, total=total, completed=done, kind=kind)

    return update, bar.stop


@click.command(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  kubetaint snapshot -o snapshot.json
  kubetaint snapshot --kubeconfig ~/.kube/config -o prod.json
  kubetaint whatif drain node-3 -f snapshot.json
""",
)
@click.option("--kubeconfig", default=None, metavar="PATH", help="Kubeconfig (default: $KUBECONFIG).")
@click.option("-o", "--output", "output", required=True, metavar="FILE", help="Where to write the snapshot.")
def snapshot_command(kubeconfig: str | None, output: str) -> None:
    """Capture a live cluster's scheduling-relevant objects, read-only, into one file."""
    update, close = _progress()
    try:
        client = api_client(kubeconfig)
        try:
            document = capture(client, name=Path(output).stem or "snapshot", progress=update)
        finally:
            close()
    except SnapshotError as err:
        raise Failure(str(err)) from None
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as err:
        raise Failure(f"{output}: {err.strerror or err}") from None
    count = len(document["spec"]["objects"])
    click.echo(f"snapshot of {count} objects written to {output}", err=True)
