"""The Scenario file (docs/scenario.md): loading and static checks.

Everything that can be checked before the run is checked here; every problem found is reported in
one ScenarioError, one line each with `file:line: ` (when known), the object and the field.
"""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubetaint.api.features import FeatureGates
from kubetaint.api.strictload import InputError, read_input, shown_name
from kubetaint.controlplane.settings import ControlPlaneSettings, check_settings
from kubetaint.core.durations import parse_duration
from kubetaint.core.heap import collector_paused
from kubetaint.kubelet import FAULTS
from kubetaint.sim.doccopy import copy_document
from kubetaint.sim.kinds import KindError, kind_of
from kubetaint.sim.scenario_schema import check as schema_problems
from kubetaint.sim.scenario_schema import unsupported
from kubetaint.sim.sharing import PartSharing
from kubetaint.sim.source import Source, SourceError, Where, load_text

API_VERSION = "kubetaint.dev/v1alpha1"
ZONE_LABEL = "topology.kubernetes.io/zone"
EVENT_VERBS = ("kubectl", "apply", "delete", "fault")
FAULT_TARGETS = ("node", "nodes", "zone")
KUBECTL_VERBS = ("taint", "cordon", "uncordon", "drain", "delete", "label")
_SPEC_KEYS = ("seed", "until", "featureGates", "settings", "nodeGroups", "objects", "events")
#: Default run length after the last event when `until` is not given.
DEFAULT_TAIL = 600.0
#: Bounds checked before a run starts: nodes (node groups and Node objects), pods (Pod objects and
#: the replicas of ReplicaSets, Deployments and ReplicationControllers), and node-hours (nodes
#: times the run's length), each about four times the largest benchmarked run (5,000 nodes,
#: 150,000 pods, one hour).
MAX_NODES = 20_000
MAX_PODS = 600_000
MAX_NODE_HOURS = 100_000
#: Problems listed before the rest are counted.
MAX_PROBLEMS = 100
#: Node lifecycle monitor passes (the run's length over nodeMonitorPeriod).
MAX_MONITOR_PASSES = 1_000_000
#: The longest run or event time (a leap year).
MAX_DURATION = 366 * 24 * 3600.0
MAX_DURATION_TEXT = "8784h"
_REPLICATED_KINDS = ("ReplicaSet", "Deployment", "ReplicationController", "StatefulSet")


def run_seconds(value: Any, *, with_value: bool = False) -> float:
    """The seconds of a run's length or an event's time: a Go duration or plain seconds, from 0
    to MAX_DURATION. ValueError otherwise (DurationError, Go's message, for what does not parse;
    `with_value`: the range messages end with the value given)."""
    seconds = parse_duration(value)
    given = f", got {value!r}" if with_value else ""
    if seconds < 0:
        raise ValueError("must not be negative" + given)
    if not seconds <= MAX_DURATION:  # (NaN and infinity included)
        raise ValueError(f"must be at most {MAX_DURATION_TEXT}{given}")
    return seconds


class ScenarioError(ValueError):
    """An invalid scenario; the message names file:line, the object and the field (one line per
    problem when there are several)."""


@dataclass
class NodeGroup:
    name: str
    count: int
    zones: list[str]
    template: dict[str, Any]

    def node_names(self) -> list[str]:
        return [f"{self.name}-{i}" for i in range(self.count)]


@dataclass
class ScenarioEvent:
    """One timed action. `verb` is kubectl/apply/delete/fault; `args` its parsed argument."""

    at: float
    verb: str
    args: Any
    index: int
    where: str | Where = ""
    targets: dict[str, Any] = field(default_factory=dict)


@dataclass
class Scenario:
    name: str = "scenario"
    seed: int = 0
    until: float | None = None
    feature_gates: FeatureGates = field(default_factory=dict)
    settings: ControlPlaneSettings = field(default_factory=ControlPlaneSettings)
    raw_settings: dict[str, Any] = field(default_factory=dict)
    node_groups: list[NodeGroup] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    object_where: list[str | Where] = field(default_factory=list)
    events: list[ScenarioEvent] = field(default_factory=list)
    source: Source | None = None

    def end(self) -> float:
        if self.until is not None:
            return self.until
        last = max((e.at for e in self.events), default=0.0)
        return last + DEFAULT_TAIL

    def initial_node_names(self) -> list[str]:
        names = [n for g in self.node_groups for n in g.node_names()]
        names += [str((o.get("metadata") or {}).get("name")) for o in self.objects if o.get("kind") == "Node"]
        return names

    def initial_zones(self) -> set[str]:
        zones = {z for g in self.node_groups for z in g.zones}
        zones |= {
            str(((o.get("metadata") or {}).get("labels") or {}).get(ZONE_LABEL))
            for o in self.objects
            if o.get("kind") == "Node" and ZONE_LABEL in ((o.get("metadata") or {}).get("labels") or {})
        }
        return zones


def load_scenario(scenario: str | Path | Mapping[str, Any]) -> Scenario:
    """A scenario from a path, YAML/JSON text, or an already-parsed dict."""
    with collector_paused():  # only long-lived, acyclic data is built: nothing to collect
        return _load_scenario(scenario)


def _load_scenario(scenario: str | Path | Mapping[str, Any]) -> Scenario:
    if isinstance(scenario, Mapping):
        return parse_scenario(Source("<scenario>", copy_document(dict(scenario))))
    text_or_path = str(scenario)
    is_path = isinstance(scenario, Path) or (
        "\n" not in text_or_path and not text_or_path.lstrip().startswith("{")
    )
    if is_path:
        try:
            text = read_input(text_or_path)
        except InputError as err:
            raise ScenarioError(str(err)) from None
        name = shown_name(text_or_path)
    else:
        text, name = text_or_path, "<scenario>"
    try:
        return parse_scenario(load_text(text, name))
    except SourceError as err:
        raise ScenarioError(str(err)) from None


def _is_mapping(value: Any) -> bool:
    """isinstance(value, Mapping), a plain dict (nearly every value) told without the ABC check."""
    return type(value) is dict or isinstance(value, Mapping)


def _is_list(obj: Any) -> bool:
    """A v1 List or a typed list (PodList, NodeList, ...): what kubectl reads as several objects."""
    if not _is_mapping(obj):
        return False
    kind = obj.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "items" in obj


def parse_scenario(source: Source) -> Scenario:
    return _Parser(source).parse()


class _Parser:
    def __init__(self, source: Source) -> None:
        self.source = source
        #: A document given as data has no lines: every object's `where` is this one string
        #: (shared, not one string per object of a 150,000-object scenario); a text's objects
        #: get theirs worked out when a message shows it (`Source.where_later`).
        self._dataless_where = source.where([]) if source.text is None else None
        #: A parsed text's pods get their equal spec parts shared, as a document given as data
        #: shares its templates' (sim.sharing).
        self._sharing = PartSharing() if source.text is not None else None
        #: problems of node groups, objects and events, each skipped so that all are reported
        self.problems: list[str] = []

    def note(self, problem: ScenarioError) -> None:
        """Record a problem and go on checking: the load reports all of them at the end."""
        self.problems.append(str(problem))

    def fail(self, path: Sequence[str | int], message: str) -> ScenarioError:
        dotted = _dotted(path)
        prefix = f"{dotted}: " if dotted else ""
        return ScenarioError(f"{self.source.where(path)}{prefix}{message}")

    def structure(self) -> list[str]:
        """Every duplicate key and every problem the Scenario schema finds, one line each."""
        lines: list[str] = []
        for dup in self.source.duplicates:
            if dup.line is not None:
                lines.append(f"{self.source.name}:{dup.line}: duplicate field {json.dumps(dup.path[-1])}")
            else:
                lines.append(str(self.fail(dup.path, "duplicate field")))
        lines.extend(str(self.fail(p.path, p.message)) for p in schema_problems(self.source.data))
        return lines

    def parse(self) -> Scenario:
        problems = self.structure()
        if problems:
            raise ScenarioError("\n".join(problems))
        data = self.source.data
        if not isinstance(data, Mapping):
            raise self.fail([], "expected a Scenario object")
        if data.get("apiVersion") != API_VERSION:
            raise self.fail(
                ["apiVersion"],
                f"Unsupported value: {unsupported(data.get('apiVersion'))}:"
                f' supported values: "{API_VERSION}"',
            )
        if data.get("kind") != "Scenario":
            raise self.fail(
                ["kind"], f'Unsupported value: {unsupported(data.get("kind"))}: supported values: "Scenario"'
            )
        meta = data.get("metadata") or {}
        spec = data.get("spec") or {}
        if not isinstance(spec, Mapping):
            raise self.fail(["spec"], "expected an object")
        for key in spec:
            if key not in _SPEC_KEYS:
                self.note(self.fail(["spec", key], f"unknown field (supported: {', '.join(_SPEC_KEYS)})"))
        scenario = Scenario(name=str(meta.get("name") or "scenario"), source=self.source)
        try:
            scenario.seed = self._seed(spec.get("seed", 0))
        except ScenarioError as err:
            self.note(err)
        if spec.get("until") is not None:
            try:
                scenario.until = self._duration(["spec", "until"], spec["until"])
            except ScenarioError as err:
                self.note(err)
        scenario.feature_gates = self._gates(spec.get("featureGates"))
        raw_settings = spec.get("settings") or {}
        if _is_mapping(raw_settings):
            scenario.raw_settings = dict(raw_settings)
            scenario.settings, bad = check_settings(scenario.raw_settings)
            for problem in bad:
                self.note(self.fail(["spec", "settings", problem.key], str(problem)))
        else:
            self.note(self.fail(["spec", "settings"], "expected an object"))
        scenario.node_groups = self._node_groups(spec.get("nodeGroups") or [])
        self._objects(scenario, spec.get("objects") or [])
        scenario.events = self._events(scenario, spec.get("events") or [])
        if self.problems:
            shown = self.problems[:MAX_PROBLEMS]
            if len(self.problems) > MAX_PROBLEMS:
                shown.append(f"... and {len(self.problems) - MAX_PROBLEMS} more problems")
            raise ScenarioError("\n".join(shown))
        self._check_bounds(scenario)
        return scenario

    def _check_bounds(self, scenario: Scenario) -> None:
        problem = run_bounds_problem(scenario)
        if problem is not None:
            raise self.fail(*problem)

    def _seed(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(["spec", "seed"], f"expected an integer, got {value!r}")
        return value

    def _duration(self, path: list[str | int], value: Any) -> float:
        try:
            return run_seconds(value, with_value=True)
        except ValueError as err:
            raise self.fail(path, str(err)) from None

    def _gates(self, raw: Any) -> FeatureGates:
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            self.note(self.fail(["spec", "featureGates"], "expected a map of feature gate names to booleans"))
            return {}
        from kubetaint.api.features import DEFAULT_FEATURE_GATES

        gates: dict[str, bool] = {}
        for name, value in raw.items():
            if name not in DEFAULT_FEATURE_GATES:
                self.note(self.fail(["spec", "featureGates", name], f"unrecognized feature gate: {name}"))
            elif not isinstance(value, bool):
                self.note(self.fail(["spec", "featureGates", name], f"expected true or false, got {value!r}"))
            else:
                gates[str(name)] = value
        return gates

    def _node_groups(self, raw: Any) -> list[NodeGroup]:
        if not isinstance(raw, list):
            raise self.fail(["spec", "nodeGroups"], "expected a list")
        groups: list[NodeGroup] = []
        seen: set[str] = set()
        for i, item in enumerate(raw):
            try:
                groups.append(self._node_group(["spec", "nodeGroups", i], item, seen))
            except ScenarioError as err:
                self.problems.append(str(err))
        return groups

    def _node_group(self, path: list[str | int], item: Any, seen: set[str]) -> NodeGroup:
        if not isinstance(item, Mapping):
            raise self.fail(path, "expected an object")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise self.fail([*path, "name"], "Required value")
        if name in seen:
            raise self.fail([*path, "name"], f"Duplicate value: {name!r}")
        seen.add(name)
        count = item.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise self.fail([*path, "count"], f"expected a non-negative integer, got {count!r}")
        zones = item.get("zones") or []
        if not isinstance(zones, list) or not all(isinstance(z, str) and z for z in zones):
            raise self.fail([*path, "zones"], "expected a list of zone names")
        template = item.get("template") or {}
        if not isinstance(template, Mapping):
            raise self.fail([*path, "template"], "expected a Node template object")
        self._check_template([*path, "template"], template)
        return NodeGroup(name, count, list(zones), copy.deepcopy(dict(template)))

    def _check_template(self, path: list[str | int], template: Mapping[str, Any]) -> None:
        """A group's template decodes as the Node its members register as."""
        from kubetaint.sim.decoding import decoding_problem

        meta = template.get("metadata") or {}
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {**meta, "name": "template"} if _is_mapping(meta) else meta,
            "spec": template.get("spec") or {},
            "status": template.get("status") or {},
        }
        problem = decoding_problem(node)
        if problem is not None:
            raise self.fail(path, problem)

    def _objects(self, scenario: Scenario, raw: Any) -> None:
        if not isinstance(raw, list):
            raise self.fail(["spec", "objects"], "expected a list of manifests")
        for i, obj in enumerate(raw):
            try:
                self._add_object(scenario, ["spec", "objects", i], obj)
            except ScenarioError as err:
                self.problems.append(str(err))

    def _add_object(self, scenario: Scenario, path: list[str | int], obj: Any) -> None:
        """One manifest; a List (`kubectl get ... -o yaml` saved as is) adds its items in order,
        as `kubectl apply -f` flattens it, nested Lists included."""
        if _is_list(obj):
            items = obj.get("items")
            if not isinstance(items, list):
                raise self.fail([*path, "items"], f"{obj.get('kind')}: expected a list of objects")
            for j, item in enumerate(items):
                self._add_object(scenario, [*path, "items", j], item)
            return
        self._check_manifest(path, obj)
        if self._sharing is not None:
            self._sharing.share(obj)
        scenario.objects.append(obj)
        where = self._dataless_where
        scenario.object_where.append(where if where is not None else self.source.where_later(path))

    def _check_manifest(self, path: list[str | int], obj: Any) -> None:
        if not _is_mapping(obj):
            raise self.fail(path, "expected a Kubernetes object")
        try:
            kind_of(obj)
        except KindError as err:
            raise self.fail(path, str(err)) from None
        meta = obj.get("metadata")
        if not _is_mapping(meta) or not (meta.get("name") or meta.get("generateName")):
            raise self.fail(
                [*path, "metadata", "name"],
                f"{obj.get('kind')}: Required value: name or generateName is required",
            )

    def _check_decoding(self, path: list[str | int], obj: Mapping[str, Any]) -> None:
        from kubetaint.sim.decoding import decoding_problem

        problem = decoding_problem(obj)
        if problem is not None:
            raise self.fail(path, f"{obj.get('kind')}: {problem}")

    def _events(self, scenario: Scenario, raw: Any) -> list[ScenarioEvent]:
        if not isinstance(raw, list):
            raise self.fail(["spec", "events"], "expected a list")
        nodes = set(scenario.initial_node_names())
        zones = scenario.initial_zones()
        events: list[ScenarioEvent] = []
        for i, item in enumerate(raw):
            try:
                events.append(self._event(i, item, nodes, zones))
            except ScenarioError as err:
                self.problems.append(str(err))
        events.sort(key=lambda e: (e.at, e.index))
        return events

    def _event(self, i: int, item: Any, nodes: set[str], zones: set[str]) -> ScenarioEvent:
        """One event; an applied Node joins `nodes` (and its zone `zones`) for later events."""
        path: list[str | int] = ["spec", "events", i]
        if not isinstance(item, Mapping):
            raise self.fail(path, "expected an event object")
        if "at" not in item:
            raise self.fail([*path, "at"], "Required value")
        at = self._duration([*path, "at"], item["at"])
        verbs = [v for v in EVENT_VERBS if v in item]
        unknown = [k for k in item if k not in (*EVENT_VERBS, "at", *FAULT_TARGETS)]
        if unknown:
            raise self.fail([*path, unknown[0]], f"unknown event verb (supported: {', '.join(EVENT_VERBS)})")
        if len(verbs) != 1:
            raise self.fail(path, f"exactly one of {', '.join(EVENT_VERBS)} is required, got {len(verbs)}")
        verb = verbs[0]
        event = ScenarioEvent(at, verb, item[verb], i, self.source.where_later([*path, verb]))
        if verb == "kubectl":
            event.args = self._kubectl([*path, "kubectl"], item["kubectl"], nodes)
        elif verb == "apply":
            self._check_manifest([*path, "apply"], item["apply"])
            self._check_decoding([*path, "apply"], item["apply"])
            if item["apply"].get("kind") == "Node":
                nodes.add(str(item["apply"]["metadata"].get("name")))
                labels = item["apply"]["metadata"].get("labels") or {}
                if ZONE_LABEL in labels:
                    zones.add(str(labels[ZONE_LABEL]))
        elif verb == "delete":
            self._check_delete([*path, "delete"], item["delete"])
        else:
            event.targets = self._fault(path, item, nodes, zones)
        return event

    def _kubectl(self, path: list[str | int], value: Any, nodes: set[str]) -> list[str]:
        if isinstance(value, str):
            try:
                args = shlex.split(value)
            except ValueError as err:
                raise self.fail(path, f"cannot split command line: {err}") from None
        elif isinstance(value, list) and all(isinstance(a, str) for a in value):
            args = list(value)
        else:
            raise self.fail(path, "expected a kubectl command line (string or list of arguments)")
        if args and args[0] == "kubectl":
            args = args[1:]
        if not args or args[0] not in KUBECTL_VERBS:
            got = args[0] if args else ""
            raise self.fail(path, f'unknown kubectl verb "{got}" (supported: {", ".join(KUBECTL_VERBS)})')
        from kubetaint.sim.kubectl import KubectlError, check_command

        try:
            check_command(args, nodes)
        except KubectlError as err:
            raise self.fail(path, str(err)) from None
        return args

    def _check_delete(self, path: list[str | int], value: Any) -> None:
        if not isinstance(value, Mapping):
            raise self.fail(path, "expected {kind, name[, namespace]}")
        try:
            from kubetaint.sim.kinds import resolve_kind

            resolve_kind(str(value.get("kind") or ""))
        except KindError as err:
            raise self.fail([*path, "kind"], str(err)) from None
        if not value.get("name"):
            raise self.fail([*path, "name"], "Required value")

    def _fault(
        self, path: list[str | int], item: Mapping[str, Any], nodes: set[str], zones: set[str]
    ) -> dict[str, Any]:
        fault = item["fault"]
        if fault not in FAULTS:
            supported = ", ".join(f'"{f}"' for f in FAULTS)
            raise self.fail(
                [*path, "fault"], f"Unsupported value: {unsupported(fault)}: supported values: {supported}"
            )
        given = [k for k in FAULT_TARGETS if k in item]
        if len(given) != 1:
            raise self.fail(path, "a fault needs exactly one of node, nodes, zone")
        key = given[0]
        value = item[key]
        if key == "zone":
            if value not in zones:
                raise self.fail(
                    [*path, "zone"], f"unknown zone {value!r} (known: {', '.join(sorted(zones))})"
                )
            return {"zone": value}
        names = [value] if key == "node" else value
        if not isinstance(names, list) or not names:
            raise self.fail([*path, key], "expected a node name or a list of node names")
        for j, name in enumerate(names):
            if name not in nodes:
                where = [*path, key] if key == "node" else [*path, key, j]
                raise self.fail(where, f"unknown node {name!r}")
        return {"nodes": [str(n) for n in names]}


def run_bounds_problem(scenario: Scenario) -> tuple[list[str | int], str] | None:
    """What makes a run too large (MAX_NODES, MAX_PODS, MAX_NODE_HOURS), with the field to blame,
    or None; checked before anything is built."""
    manifests = [*scenario.objects, *(e.args for e in scenario.events if e.verb == "apply")]
    nodes = sum(g.count for g in scenario.node_groups)
    nodes += sum(1 for obj in manifests if obj.get("kind") == "Node")
    if nodes > MAX_NODES:
        return [
            "spec",
            "nodeGroups",
        ], f"the scenario has {nodes} nodes; at most {MAX_NODES} are simulated"
    pods = sum(_pods_of(obj) for obj in manifests)
    if pods > MAX_PODS:
        return [
            "spec",
            "objects",
        ], f"the scenario asks for {pods} pods; at most {MAX_PODS} are simulated"
    period = scenario.settings.node_lifecycle.get("nodeMonitorPeriod")
    if isinstance(period, int | float) and period > 0 and scenario.end() / period > MAX_MONITOR_PASSES:
        message = (
            f"a nodeMonitorPeriod of {period:g}s over {scenario.end():g}s is"
            f" {scenario.end() / period:g} node monitor passes; at most {MAX_MONITOR_PASSES} are simulated"
        )
        return ["spec", "settings", "nodeMonitorPeriod"], message
    hours = scenario.end() / 3600
    if nodes * hours > MAX_NODE_HOURS:
        message = (
            f"{nodes} nodes for {hours:g}h is {nodes * hours:g} node-hours;"
            f" at most {MAX_NODE_HOURS} are simulated"
        )
        return ["spec", "until"], message
    return None


def _pods_of(obj: Mapping[str, Any]) -> int:
    """Pods a manifest makes: 1 for a Pod, its replicas for a replicated workload (1 when unset)."""
    kind = obj.get("kind")
    if kind == "Pod":
        return 1
    if kind in _REPLICATED_KINDS:
        replicas = (obj.get("spec") or {}).get("replicas", 1) if _is_mapping(obj.get("spec")) else 1
        return (
            replicas if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas > 0 else 0
        )
    return 0


def _dotted(path: Sequence[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
