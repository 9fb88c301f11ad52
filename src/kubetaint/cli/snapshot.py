"""`kubetaint snapshot [--kubeconfig PATH] [--context NAME] [-n NS] [-l SELECTOR] -o FILE
[--output-format json|yaml]`: capture a live cluster's scheduling-relevant objects, read-only, into
one Scenario document (kubetaint.sim.snapshot_capture); `-o -` writes it to standard output.

`-o` names the file (a contract scripts rely on), so the format is `--output-format`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kubetaint.cli.failure import Failure
from kubetaint.cli.inputs import dumps_yaml
from kubetaint.cli.live import LiveOptions, capture_live, live_options
from kubetaint.cli.output import write_out


@click.command(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  kubetaint snapshot -o snapshot.json
  kubetaint snapshot --context prod -n shop -o shop.json
  kubetaint snapshot -l app=web -o - | kubetaint whatif drain node-3 -f -
  kubetaint snapshot -o snapshot.yaml --output-format yaml
""",
)
@live_options
@click.option(
    "-o",
    "--output",
    "output",
    required=True,
    metavar="FILE",
    help="Where to write the snapshot (- for stdout).",
)
@click.option(
    "--output-format",
    "output_format",
    type=click.Choice(["json", "yaml"]),
    default="json",
    show_default=True,
    help="The snapshot's format (every command that reads a snapshot takes both).",
)
def snapshot_command(
    *,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    selector: str | None,
    output: str,
    output_format: str,
) -> None:
    """Capture a live cluster's scheduling-relevant objects, read-only, into one file.

    Nodes, namespaces, PriorityClasses and RuntimeClasses are read whole; -n limits the namespaced
    kinds to one namespace and -l the pods and their workloads to those a label selector picks."""
    live = LiveOptions(kubeconfig, context, namespace, selector)
    name = "snapshot" if output == "-" else (Path(output).stem or "snapshot")
    document, _ = capture_live(live, name=name)
    if output_format == "yaml":
        text = dumps_yaml(document)
    else:
        text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    if output == "-":
        write_out(text)
    else:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as err:
            raise Failure(f"{output}: {err.strerror or err}") from None
    count = len(document["spec"]["objects"])
    where = "standard output" if output == "-" else output
    click.echo(f"snapshot of {count} objects written to {where}", err=True)
