"""`kubetaint whatif (taint NODE... SPEC | drain NODE... | cordon NODE... | fail NODE...|zone=Z)
[-f SNAPSHOT | --kubeconfig PATH --context NAME -n NS -l SELECTOR] [--for D] [-o text|json|yaml|html]
[--fail-on evictions|pending]... [--seed N]`: without -f, the live cluster is captured first."""

from __future__ import annotations

import logging

import click

from kubetaint.cli.durations import flag_seconds
from kubetaint.cli.failure import Failure, UsageFailure
from kubetaint.cli.inputs import dumps_yaml
from kubetaint.cli.live import LiveOptions, capture_live, live_options
from kubetaint.cli.output import write_out

# (the simulator is imported when the command runs: `kubetaint whatif --help` stays fast)


@click.command(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Changes:
  taint NODE... KEY[=VALUE]:EFFECT   add a taint (as kubectl taint nodes)
  drain NODE...                      cordon and evict (as kubectl drain)
  cordon NODE...                     mark unschedulable
  fail NODE... | fail zone=ZONE      stop the nodes' kubelets (a node or zone outage)

\b
Examples:
  kubetaint whatif drain node-3                        # the current context's cluster
  kubectl kubetaint whatif drain node-3 --context prod  # as a kubectl plugin
  kubetaint whatif drain node-3 -f snapshot.json
  kubetaint whatif taint node-1 node-2 dedicated=gpu:NoExecute -f snapshot.json -o json
  kubetaint whatif fail zone=zone-a -f snapshot.json --for 30m --fail-on evictions   # a CI gate
  kubectl get nodes,pods -A -o json | kubetaint whatif cordon node-7 -f -
""",
)
@click.argument("change", nargs=-1, required=True)
@click.option(
    "-f",
    "--filename",
    "snapshot",
    default=None,
    metavar="SNAPSHOT",
    help="A snapshot, a scenario or a saved v1 List; - reads standard input."
    " Without it, the live cluster is captured first.",
)
@live_options
@click.option("--for", "duration", default=None, metavar="D", help="How long to run (default 1h).")
@click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "table", "wide", "json", "yaml", "html"]),
    default="text",
    show_default=True,
    help="text (table and wide: the same), json, yaml, or an html report.",
)
@click.option(
    "--fail-on",
    "fail_on",
    type=click.Choice(["evictions", "pending"]),
    multiple=True,
    help="Exit 1 when the change evicts pods, or leaves more pods pending than without it. Repeatable.",
)
@click.option("--seed", type=int, default=None, help="Override the snapshot's seed.")
def whatif_command(
    change: tuple[str, ...],
    snapshot: str | None,
    *,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    selector: str | None,
    duration: str | None,
    output: str,
    fail_on: tuple[str, ...],
    seed: int | None,
) -> None:
    """Run a snapshot with and without a change and report the difference."""
    from kubetaint.sim.scenario import ScenarioError
    from kubetaint.sim.simulation import SimulationError
    from kubetaint.sim.snapshot import SnapshotError, load_snapshot, load_snapshot_document
    from kubetaint.sim.whatif import DEFAULT_FOR, compare
    from kubetaint.sim.whatif_change import WhatIfError, WhatIfUsageError, parse_change
    from kubetaint.sim.whatif_report import dumps, render_html, render_text

    # Components log recoverable hiccups (a retried deletion); the report is the output here.
    logging.getLogger("kubetaint").addHandler(logging.NullHandler())
    seconds = DEFAULT_FOR if duration is None else flag_seconds("--for", duration)
    try:
        parsed = parse_change(change)
    except WhatIfUsageError as err:
        raise UsageFailure(str(err)) from None
    try:
        if snapshot is None:
            live = LiveOptions(kubeconfig, context, namespace, selector)
            document, _ = capture_live(live, name="live")
            scenario, info = load_snapshot_document(document)
        else:
            if any((kubeconfig, context, namespace, selector)):
                raise UsageFailure("--kubeconfig, --context, -n and -l read a live cluster: not with -f")
            scenario, info = load_snapshot(snapshot)
        compared = compare(scenario, info, parsed, duration=seconds, seed=seed)
    except (SnapshotError, ScenarioError, SimulationError, WhatIfError) as err:
        raise Failure(str(err)) from None
    document = compared.document
    if output == "json":
        write_out(dumps(document) + "\n")
    elif output == "yaml":
        write_out(dumps_yaml(document))
    elif output == "html":
        write_out(render_html(document, (compared.without, compared.with_change)))
    else:
        write_out(render_text(document))
    summary = document["summary"]
    if "evictions" in fail_on and summary["evictedAtOnce"] + summary["evictedLater"] > 0:
        raise SystemExit(1)
    if "pending" in fail_on and summary["pending"] > summary["pendingWithout"]:
        raise SystemExit(1)
