"""`kubetaint explain [FILE]... [-f FILE]... [--pod NS/NAME] [-o table|wide|json|yaml] [--fail-on ...]`,
or `kubetaint explain [pod/NAME]... [--kubeconfig PATH] [--context NAME] [-n NS] [-l SELECTOR]` for a
live cluster.

The input is manifests (multi-document YAML, JSON, `kind: List` such as `kubectl get ... -o yaml`
saved as is), kubetaint snapshots and scenarios (their objects and node groups). Every object is
decoded and validated as kube-apiserver would on create (`kubetaint validate`) before anything is
placed: an invalid object is reported, all of them in one run, and nothing is explained.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from kubetaint.cli.failure import Failure, UsageFailure
from kubetaint.cli.inputs import DATA_OUTPUTS, dumps_yaml, input_files
from kubetaint.cli.live import LiveOptions, capture_live, live_options
from kubetaint.cli.output import write_out
from kubetaint.cli.scheduler_config import SchedulerConfigError, config_option, load_scheduler_config

if TYPE_CHECKING:  # (the scheduler is imported when the command runs: `--help` stays fast)
    from kubetaint.api.manifests import Manifest

#: --fail-on: what makes the command exit 1 once its report is written
FAIL_ON = ("unschedulable", "pending")


def _expand_scenarios(manifests: list[Manifest]) -> list[Manifest]:
    """A kubetaint scenario or snapshot stands for its objects and its node groups' nodes."""
    from kubetaint.api.manifests import Manifest
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
            text = manifest.nodes.text if manifest.nodes is not None else None
            scenario = parse_scenario(Source(manifest.source, obj, text))  # (lines: one-document files)
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
    from kubetaint.api.manifests import ManifestError, load_documents
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


_POD_REFERENCE = re.compile(r"^(?:pods?|po)/([^/]+)$")


def _split_references(paths: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(files, pod names): `pod/NAME` names a live cluster's pod unless such a file exists."""
    files: list[str] = []
    pods: list[str] = []
    for path in paths:
        match = _POD_REFERENCE.match(path)
        if match is not None and not os.path.exists(path):
            pods.append(match.group(1))
        else:
            files.append(path)
    return files, pods


def _live_objects(live: LiveOptions, pods: list[str]) -> tuple[list[Mapping[str, Any]], list[str], str]:
    """The live cluster's objects (every namespace: nodes carry every pod), with the named pods
    unbound (explained as if pending: where could they go, and why not elsewhere), the names
    `ns/name` to report, and the namespace meant."""
    document, namespace = capture_live(live, name="live", whole=True)
    objects: list[Mapping[str, Any]] = list(document["spec"]["objects"])
    wanted = {f"{namespace}/{name}" for name in pods}
    found: set[str] = set()
    for index, obj in enumerate(objects):
        if obj.get("kind") != "Pod":
            continue
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        if key in wanted:
            found.add(key)
            spec = {k: v for k, v in (obj.get("spec") or {}).items() if k != "nodeName"}
            objects[index] = {k: v for k, v in {**obj, "spec": spec}.items() if k != "status"}
    missing = sorted(wanted - found)
    if missing:
        ns, _, name = missing[0].partition("/")
        raise Failure(f'pods "{name}" not found in namespace "{ns}"')  # kubectl's NotFound wording
    return objects, sorted(wanted), namespace


def _picked(
    document: dict[str, Any],
    objects: list[Mapping[str, Any]],
    names: list[str],
    live: LiveOptions,
    namespace: str,
) -> dict[str, Any]:
    """The report of the pods the live options pick: the named ones, else those of -n and -l."""
    from kubetaint.api.selectors import parse_label_selector

    labels: dict[str, Mapping[str, str]] = {}
    for obj in objects:
        if obj.get("kind") == "Pod":
            meta = obj.get("metadata") or {}
            labels[f"{meta.get('namespace') or 'default'}/{meta.get('name')}"] = meta.get("labels") or {}
    selector = parse_label_selector(live.selector) if live.selector else None
    kept = []
    for pod in document.get("pods", []):
        key = f"{pod['namespace']}/{pod['name']}"
        if names:
            if key in names:
                kept.append(pod)
            continue
        if live.namespace and pod["namespace"] != namespace:
            continue
        if selector is not None and not selector.matches(labels.get(key)):
            continue
        kept.append(pod)
    return {**document, "pods": kept}


@click.command(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  kubetaint explain nodes.yaml pods.yaml
  kubectl get nodes,pods -A -o yaml > cluster.yaml && kubetaint explain cluster.yaml
  kubetaint explain snapshot.json --pod default/web -o wide
  kubetaint explain cluster.yaml --fail-on unschedulable   # exit 1 when a pod cannot be placed
  kubetaint explain pod/web --context prod -n shop         # a live cluster's pod
  kubetaint explain -n shop -l app=web                     # the live cluster's pending pods
""",
)
@input_files(
    "Manifests, a saved List, a snapshot or a scenario; a directory; - reads standard input."
    " Without files, the live cluster is read (pod/NAME picks a pod)."
)
@live_options
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
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    selector: str | None,
    pod: str | None,
    output: str,
    all_rows: bool,
    fail_on: tuple[str, ...],
    config_file: str | None = None,
) -> None:
    """Place the unbound pods on the given nodes in scheduling order and explain every decision.

    Every object is decoded strictly and validated as kube-apiserver would first; invalid ones
    are all reported and nothing is placed. Without files, the cluster of the kubeconfig's
    context is read: its pending pods are explained, or the pods named pod/NAME as if they were
    pending (where they could go, and why not elsewhere)."""
    from kubetaint.scheduler.config import ConfigError
    from kubetaint.scheduler.explain import ExplainError, explain
    from kubetaint.scheduler.explain_table import render_table

    live = LiveOptions(kubeconfig, context, namespace, selector)
    try:
        config = load_scheduler_config(config_file)[0] if config_file else None
    except SchedulerConfigError as exc:
        raise Failure(str(exc)) from None
    paths, pod_names = _split_references(more_files)
    paths = [*files, *paths]
    names: list[str] = []
    if paths:
        if live.given or pod_names:
            raise UsageFailure(
                "pod/NAME, --kubeconfig, --context, -n and -l read a live cluster: not with files"
            )
        objects = load_checked(paths)
    else:
        objects, names, live_namespace = _live_objects(live, pod_names)
    if pod is not None and "/" not in pod:
        pod = f"default/{pod}"
    try:
        document = explain(objects, pod=pod, config=config)
    except (ExplainError, ConfigError) as exc:
        raise Failure(str(exc)) from None
    if not paths:
        document = _picked(document, objects, names, live, live_namespace)
    if output == "json":
        write_out(json.dumps(document, indent=2) + "\n")
    elif output == "yaml":
        write_out(dumps_yaml(document))
    else:
        write_out(render_table(document, all_rows=all_rows or output == "wide"))
    if fail_on and any(p.get("result") != "Scheduled" for p in document.get("pods", [])):
        raise SystemExit(1)
