"""`kubetaint explain [FILE]... [-f FILE]... [--pod NS/NAME] [-o table|wide|json|yaml] [--fail-on ...]`.

The input is manifests (multi-document YAML, JSON, `kind: List` such as `kubectl get ... -o yaml`
saved as is), kubetaint snapshots and scenarios (their objects and node groups). Every object is
decoded and validated as kube-apiserver would on create (`kubetaint validate`) before anything is
placed: an invalid object is reported, all of them in one run, and nothing is explained.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import click

from kubetaint.api.manifests import Manifest, ManifestError, load_documents
from kubetaint.cli.failure import Failure
from kubetaint.cli.inputs import DATA_OUTPUTS, dumps_yaml, gather_files, input_files
from kubetaint.cli.scheduler_config import SchedulerConfigError, config_option, load_scheduler_config
from kubetaint.scheduler.config import ConfigError
from kubetaint.scheduler.explain import ExplainError, explain
from kubetaint.scheduler.explain_table import render_table

#: --fail-on: what makes the command exit 1 once its report is written
FAIL_ON = ("unschedulable", "pending")


def _expand_scenarios(manifests: list[Manifest]) -> list[Manifest]:
    """A kubetaint scenario or snapshot stands for its objects and its node groups' nodes."""
    from kubetaint.sim.scenario import API_VERSION

    out: list[Manifest] = []
    for manifest in manifests:
        obj = manifest.obj
        if obj.get("kind") != "Scenario" or obj.get("apiVersion") != API_VERSION:
            out.append(manifest)
            continue
        from kubetaint.sim.nodes import group_nodes, node_manifest
        from kubetaint.sim.scenario import ScenarioError, parse_scenario
        from kubetaint.sim.source import Source

        try:
            scenario = parse_scenario(Source(manifest.source, obj))
        except ScenarioError as err:
            raise Failure(str(err)) from None
        for group in scenario.node_groups:
            for name, zone, template in group_nodes(group):
                node = _registered(node_manifest(name, zone, template))
                out.append(Manifest(node, manifest.source, manifest.document))
        out.extend(Manifest(o, manifest.source, manifest.document) for o in scenario.objects)
    return out


def _registered(node: dict[str, Any]) -> dict[str, Any]:
    """A node group's member as its hollow kubelet registers it: the default capacity unless
    the template gives one, allocatable the same unless given."""
    from kubetaint.kubelet.node_status import DEFAULT_CAPACITY

    status = node.setdefault("status", {})
    status.setdefault("capacity", dict(DEFAULT_CAPACITY))
    status.setdefault("allocatable", dict(status["capacity"]))
    return node


def load_checked(paths: list[str]) -> list[Mapping[str, Any]]:
    """Every object of the inputs, each decoded strictly and validated; Failure lists every
    problem (one line each) when any object is not one kube-apiserver would take."""
    from kubetaint.cli.validate import validate_manifests

    try:
        manifests = _expand_scenarios(load_documents(paths))
    except ManifestError as exc:
        raise Failure(str(exc)) from None
    if not manifests:
        raise Failure("no objects passed to explain")
    results = validate_manifests(manifests, None)
    problems = [r.text() for r in results if not r.valid]
    if problems:
        raise Failure("\n".join(problems))
    return [m.obj for m in manifests]


@click.command(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  kubetaint explain nodes.yaml pods.yaml
  kubectl get nodes,pods -A -o yaml > cluster.yaml && kubetaint explain cluster.yaml
  kubetaint explain snapshot.json --pod default/web -o wide
  kubetaint explain cluster.yaml --fail-on unschedulable   # exit 1 when a pod cannot be placed
""",
)
@input_files("Manifests, a saved List, a snapshot or a scenario; a directory; - reads standard input.")
@click.option("--pod", default=None, metavar="NS/NAME", help="Report only this pod.")
@click.option(
    "-o",
    "--output",
    type=click.Choice(DATA_OUTPUTS),
    default="table",
    show_default=True,
    help="table, wide (one row per node), json or yaml.",
)
@click.option("--all", "all_rows", is_flag=True, help="One row per node (no grouping); as -o wide.")
@click.option(
    "--fail-on",
    "fail_on",
    type=click.Choice(FAIL_ON),
    multiple=True,
    help="Exit 1 when a pod cannot be placed (unschedulable; pending is the same here). Repeatable.",
)
@config_option
def explain_command(
    files: tuple[str, ...],
    more_files: tuple[str, ...],
    *,
    pod: str | None,
    output: str,
    all_rows: bool,
    fail_on: tuple[str, ...],
    config_file: str | None = None,
) -> None:
    """Place the unbound pods on the given nodes in scheduling order and explain every decision."""
    try:
        config = load_scheduler_config(config_file)[0] if config_file else None
    except SchedulerConfigError as exc:
        raise Failure(str(exc)) from None
    objects = load_checked(gather_files(files, more_files))
    if pod is not None and "/" not in pod:
        pod = f"default/{pod}"
    try:
        document = explain(objects, pod=pod, config=config)
    except (ExplainError, ConfigError) as exc:
        raise Failure(str(exc)) from None
    if output == "json":
        click.echo(json.dumps(document, indent=2))
    elif output == "yaml":
        click.echo(dumps_yaml(document), nl=False)
    else:
        click.echo(render_table(document, all_rows=all_rows or output == "wide"), nl=False)
    if fail_on and any(p.get("result") != "Scheduled" for p in document.get("pods", [])):
        raise SystemExit(1)
