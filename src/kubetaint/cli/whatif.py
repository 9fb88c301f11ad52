"""`kubetaint whatif (taint NODE... SPEC | drain NODE... | cordon NODE... | fail NODE...|zone=Z)
-f SNAPSHOT [--for D] [-o text|json|html] [--fail-on evictions|pending] [--seed N]`."""

from __future__ import annotations

import logging
from typing import Any

import click

from kubetaint.sim.durations import DurationError, parse_duration
from kubetaint.sim.scenario import ScenarioError
from kubetaint.sim.simulation import SimulationError
from kubetaint.sim.snapshot import SnapshotError, load_snapshot
from kubetaint.sim.whatif import DEFAULT_FOR, compare
from kubetaint.sim.whatif_change import WhatIfError, WhatIfUsageError, parse_change
from kubetaint.sim.whatif_report import dumps, render_html, render_text


class _Failure(click.ClickException):
    exit_code = 1

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)


class _Usage(_Failure):
    exit_code = 2


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("change", nargs=-1, required=True)
@click.option("-f", "--filename", "snapshot", required=True, metavar="SNAPSHOT", help="A snapshot file.")
@click.option("--for", "duration", default=None, metavar="D", help="How long to run (default 1h).")
@click.option(
    "-o", "--output", type=click.Choice(["text", "json", "html"]), default="text", show_default=True
)
@click.option("--fail-on", "fail_on", type=click.Choice(["evictions", "pending"]), default=None)
@click.option("--seed", type=int, default=None, help="Override the snapshot's seed.")
def whatif_command(
    change: tuple[str, ...],
    snapshot: str,
    *,
    duration: str | None,
    output: str,
    fail_on: str | None,
    seed: int | None,
) -> None:
    """Run a snapshot with and without a change and report the difference."""
    # Components log recoverable hiccups (a retried deletion); the report is the output here.
    logging.getLogger("kubetaint").addHandler(logging.NullHandler())
    seconds = DEFAULT_FOR
    if duration is not None:
        try:
            seconds = parse_duration(duration)
        except DurationError as err:
            raise _Usage(f"--for: {err}") from None
    try:
        parsed = parse_change(change)
    except WhatIfUsageError as err:
        raise _Usage(str(err)) from None
    try:
        scenario, info = load_snapshot(snapshot)
        compared = compare(scenario, info, parsed, duration=seconds, seed=seed)
    except (SnapshotError, ScenarioError, SimulationError, WhatIfError) as err:
        raise _Failure(str(err)) from None
    document = compared.document
    if output == "json":
        click.echo(dumps(document))
    elif output == "html":
        click.echo(render_html(document, (compared.without, compared.with_change)), nl=False)
    else:
        click.echo(render_text(document), nl=False)
    summary = document["summary"]
    if fail_on == "evictions" and summary["evictedAtOnce"] + summary["evictedLater"] > 0:
        raise SystemExit(1)
    if fail_on == "pending" and summary["pending"] > summary["pendingWithout"]:
        raise SystemExit(1)
