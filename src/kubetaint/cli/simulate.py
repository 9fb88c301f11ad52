"""`kubetaint simulate SCENARIO [-o table|wide|json|yaml|html] [--until D] [--seed N] [--fail-on ...]`.

SCENARIO is a Scenario file, a snapshot (`kubetaint snapshot`: run as `whatif` runs it, in-flight
evictions continuing) or a saved v1 List (`kubectl get nodes,pods,... -o yaml`, as a snapshot)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from kubetaint.cli.durations import flag_seconds
from kubetaint.cli.exiting import exit_now
from kubetaint.cli.failure import Failure, UsageFailure
from kubetaint.cli.inputs import gather_files, input_files
from kubetaint.cli.output import write_out
from kubetaint.cli.scheduler_config import SchedulerConfigError, config_option, load_scheduler_config
from kubetaint.sim.examples import ExampleError, example_names, example_path

if TYPE_CHECKING:  # (the simulator is imported when the command runs)
    from kubetaint.sim.scenario import Scenario

# (the simulator is imported when the command runs: `kubetaint simulate --help` stays fast)

#: Runs shorter than this (wall seconds) never show a progress bar.
PROGRESS_AFTER = 2.0


def _progress(end: float) -> tuple[Callable[[float], None], Callable[[], None]]:
    """A rich progress bar on stderr, shown only on a TTY and only once a run passes ~2 s."""
    if not sys.stderr.isatty():
        return (lambda t: None), (lambda: None)
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from kubetaint.clock.wall import wall_monotonic

    started = wall_monotonic()  # wall time for the progress display only, never for the simulation
    state: dict[str, Any] = {"bar": None, "task": None, "last": 0.0}

    def update(t: float) -> None:
        wall = wall_monotonic()
        if wall - state["last"] < 0.1:
            return
        state["last"] = wall
        if state["bar"] is None:
            if wall - started < PROGRESS_AFTER:
                return
            bar = Progress(
                TextColumn("simulating"),
                BarColumn(),
                TextColumn("{task.completed:.0f}/{task.total:.0f} s"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            state["bar"], state["task"] = bar, bar.add_task("run", total=end)
            bar.start()
        state["bar"].update(state["task"], completed=min(t, end))

    def close() -> None:
        if state["bar"] is not None:
            state["bar"].stop()

    return update, close


#: --fail-on: what makes the command exit 1 once its output is written
FAIL_ON = ("evictions", "pending", "unschedulable")


def failed(summary: dict[str, Any], fail_on: tuple[str, ...]) -> list[str]:
    """The --fail-on conditions a run's summary meets."""
    met = {
        "evictions": summary.get("evicted", 0) > 0,
        "pending": summary.get("pendingAtEnd", 0) > 0,
        "unschedulable": summary.get("failedScheduling", 0) > 0,
    }
    return [name for name in fail_on if met.get(name)]


@click.command(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  kubetaint simulate examples/taint-based-eviction.yaml
  kubetaint simulate --example taint-based-eviction
  kubetaint simulate scenario.yaml -o html > report.html
  kubetaint simulate snapshot.json --until 30m -o json
  cat scenario.yaml | kubetaint simulate -
  kubetaint simulate scenario.yaml --fail-on evictions --fail-on pending   # a CI gate
""",
)
@input_files("A scenario, a snapshot or a saved v1 List; - reads standard input.")
@click.option(
    "-o",
    "--output",
    type=click.Choice(["table", "wide", "json", "yaml", "html"]),
    default="table",
    show_default=True,
    help="table (long messages fold), wide (one line per record), json, yaml, or a self-contained "
    "html report.",
)
@click.option(
    "--example",
    metavar="NAME",
    default=None,
    help=f"Run a scenario shipped with kubetaint instead of a file ({', '.join(example_names())}).",
    shell_complete=lambda ctx, param, incomplete: [n for n in example_names() if n.startswith(incomplete)],
)
@click.option("--until", "until", default=None, metavar="D", help="Run this long (Go duration or seconds).")
@click.option("--seed", type=int, default=None, help="Override the scenario's seed.")
@click.option(
    "--fail-on",
    "fail_on",
    type=click.Choice(FAIL_ON),
    multiple=True,
    help="Exit 1 when pods were evicted, are pending at the end, or failed scheduling. Repeatable.",
)
@config_option
def simulate_command(
    files: tuple[str, ...],
    more_files: tuple[str, ...],
    *,
    output: str,
    example: str | None,
    until: str | None,
    seed: int | None,
    fail_on: tuple[str, ...],
    config_file: str | None = None,
) -> None:
    """Run a scenario in virtual time and print its timeline.

    The scenario format is described by its JSON Schema (kubetaint/sim/scenario.schema.json);
    unknown keys, wrong types and objects kube-apiserver would refuse are errors, all reported
    before anything runs."""
    from kubetaint.core.heap import collector_paused
    from kubetaint.sim.scenario import ScenarioError
    from kubetaint.sim.simulation import Simulation, SimulationError
    from kubetaint.sim.snapshot import SnapshotError, load_snapshot
    from kubetaint.sim.snapshot_run import is_snapshot, start_snapshot

    # Components log recoverable hiccups (a retried deletion); the timeline is the output here.
    logging.getLogger("kubetaint").addHandler(logging.NullHandler())
    if example is not None:
        if files or more_files:
            raise UsageFailure("give a SCENARIO file or --example NAME (one of them)")
        try:
            paths = [str(example_path(example))]
        except ExampleError as err:
            raise UsageFailure(f"--example: {err}") from None
    elif not files and not more_files:
        raise UsageFailure("give a SCENARIO file or --example NAME (one of them); - reads standard input")
    else:
        paths = gather_files(files, more_files)
    if len(paths) != 1:
        raise UsageFailure(f"simulate runs one scenario, got {len(paths)} inputs")
    scenario = paths[0]
    end = None if until is None else flag_seconds("--until", until)
    config: dict[str, Any] | None = None
    if config_file is not None:
        try:
            config, warnings = load_scheduler_config(config_file)
        except SchedulerConfigError as err:
            raise Failure(str(err)) from None
        for warning in warnings:
            click.echo(f"warning: {warning}", err=True)
    try:
        # the parsed file is long-lived and acyclic: nothing is collected from parsing it until the
        # Simulation has promoted what it keeps to the oldest generation (kubetaint.core.heap)
        with collector_paused():
            loaded, info = load_snapshot(scenario)  # a scenario, a snapshot, or a saved v1 List
            if config is not None:  # as kube-scheduler --config: the file's configuration, whole
                loaded.settings.scheduler_config = config
            sim = Simulation(loaded, seed=seed, until=end)
        update, close = _progress(sim.end)
        try:
            if is_snapshot(info):  # as whatif runs it: a cluster that keeps running
                start_snapshot(sim, info)
            doc = sim.run(update)
        finally:
            close()
    except (ScenarioError, SimulationError, SnapshotError) as err:
        raise Failure(str(err)) from None
    # writing makes no cycles, and a full collection would go through every object of the cluster
    # (about a second at 5,000 nodes; after `-o json` forks a writer, copying each page it visits)
    with collector_paused():
        _write(doc, output, loaded)
    code = 1 if failed(doc.get("summary") or {}, fail_on) else 0
    exit_now(code)  # (a large run's objects are not torn down one by one)
    if code:
        raise SystemExit(code)


def _write(doc: dict[str, Any], output: str, scenario: Scenario) -> None:
    """The run's document in the output format, on standard output."""
    if output == "json":
        from kubetaint.sim.halves import two_processes_allowed
        from kubetaint.sim.timeline import write_json

        with two_processes_allowed():  # (a second CPU may write the long lists' later parts)
            write_json(doc, sys.stdout)  # streamed: the text of a large run is never held whole
        sys.stdout.flush()
    elif output == "yaml":
        from kubetaint.sim.halves import two_processes_allowed
        from kubetaint.sim.yamltext import write_yaml

        with two_processes_allowed():
            write_yaml(doc, sys.stdout)  # streamed, as json
        sys.stdout.flush()
    elif output == "html":
        from kubetaint.sim.pending_explain import explain_pending
        from kubetaint.sim.report_html import render_html

        pending = explain_pending(
            doc, config=scenario.settings.scheduler_config, feature_gates=scenario.feature_gates
        )
        write_out(render_html(doc, pending))
    else:
        from kubetaint.sim.report_table import UNFOLDED, WIDTH, render_table

        write_out(render_table(doc, width=UNFOLDED if output == "wide" else WIDTH))
