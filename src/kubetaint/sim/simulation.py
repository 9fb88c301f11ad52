"""`Simulation`: a steppable run of a scenario (docs/api.md).

sim = Simulation("examples/toleration-seconds.yaml")
sim.run_until("1h")            # or advance(seconds)
sim.kubectl("taint nodes n1 k=v:NoExecute")
sim.timeline                   # records so far; sim.document() is the full simulate() JSON
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.core.heap import collections_deferred, collector_paused, promote_survivors
from kubetaint.kubelet import FAULTS
from kubetaint.sim.cluster import Cluster, _fresh, _status_text
from kubetaint.sim.decoding import check_decodable
from kubetaint.sim.decoding import describe as _describe
from kubetaint.sim.kinds import KindError, kind_of, resolve_kind
from kubetaint.sim.kubectl import Kubectl, KubectlError
from kubetaint.sim.scenario import (
    Scenario,
    ScenarioError,
    ScenarioEvent,
    load_scenario,
    run_bounds_problem,
    run_seconds,
)
from kubetaint.sim.timeline import document
from kubetaint.store.interface import JSON

#: Scenario events run before other work due at the same instant.
EVENT_PRIORITY = -10


class SimulationError(ValueError):
    """A step the simulation cannot take (bad argument, unknown object)."""


class Simulation:
    """A scenario loaded onto a simulated cluster, advanced in virtual time.

    The scenario (a path, YAML/JSON text, a dict or a loaded `Scenario`) is checked, and its
    objects admitted and validated, when the Simulation is created; ScenarioError names the
    problem. Nothing runs until `run_until`, `advance` or `run`; between steps, `apply`,
    `kubectl`, `delete` and `fault` act on the cluster as the scenario's events do.

    Examples:
        >>> sim = Simulation("examples/toleration-seconds.yaml")
        >>> sim.run_until("1h")
        >>> [pod["metadata"]["name"] for pod in sim.objects("Pod")]
        ['tolerates-an-hour']
    """

    def __init__(
        self,
        scenario: str | Path | Mapping[str, Any] | Scenario,
        *,
        seed: int | None = None,
        until: float | str | None = None,
    ) -> None:
        # millions of long-lived acyclic objects: nothing to collect, from parsing the scenario
        # (which, collected on its own, would leave its objects to a first young collection
        # right after) until they are promoted. The collector's state is the caller's again
        # once the constructor returns: enabled as it was, thresholds untouched, nothing frozen.
        with collector_paused():
            self.scenario = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
            if until is not None:
                self.scenario.until = _seconds(until, "until")
                problem = run_bounds_problem(self.scenario)
                if problem is not None:
                    raise SimulationError(problem[1])
            self.cluster = Cluster(self.scenario, seed=seed)
            self.seed = self.cluster.seed
            self.clock = self.cluster.clock
            self.kubectl_runner = Kubectl(self.cluster.registry, self.clock)
            self.cluster.load()
            self.cluster.begin()
            # the loaded cluster goes straight to the oldest generation, without a traversal:
            # young collections (before and during runs) never look at it again
            promote_survivors()
        for event in self.scenario.events:
            self.clock.call_at(self.cluster.start + event.at, self._runner(event), priority=EVENT_PRIORITY)

    # time ---------------------------------------------------------------------------------------

    @property
    def now(self) -> float:
        """Seconds since the scenario started."""
        return round(self.clock.now() - self.cluster.start, 6)

    @property
    def end(self) -> float:
        """Seconds from the start to the scenario's end (`until`, or 10 minutes after its last event)."""
        return self.scenario.end()

    def advance(self, seconds: float | str) -> None:
        """Run this long more (a number of seconds or a Go duration such as `"5m"`)."""
        self.run_until(self.now + _seconds(seconds, "seconds"))

    def run_until(self, t: float | str, progress: Callable[[float], None] | None = None) -> None:
        """Run everything due up to `t` seconds after the start (a number or a Go duration)."""
        target = self.cluster.start + _seconds(t, "t")
        with collections_deferred():  # for this run only: the thresholds are restored on return
            self._run_to(target, progress)

    def _run_to(self, target: float, progress: Callable[[float], None] | None) -> None:
        if progress is None:
            self.clock.run_until(target)
            return
        while True:
            due = self.clock.next_time()
            if due is None or due > target:
                break
            self.clock.step()
            progress(self.now)
        self.clock.run_until(target)
        progress(self.now)

    def run(self, progress: Callable[[float], None] | None = None) -> JSON:
        """Run to the scenario's end and return the timeline document."""
        self.run_until(self.end, progress)
        return self.document()

    # actions ------------------------------------------------------------------------------------

    def apply(self, obj: Mapping[str, Any]) -> JSON:
        """Create the object, or update it when it exists (like `kubectl apply`)."""
        try:
            kind = kind_of(obj)
        except KindError as err:
            raise SimulationError(str(err)) from None
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default") if kind.namespaced else ""
        name = str(meta.get("name") or "")
        existing: JSON | None = None
        if name:
            try:
                existing = self.cluster.registry.get(kind.resource, namespace, name)
            except StatusError:
                existing = None
        if existing is None:
            try:
                return self.cluster.create_object(obj)
            except ScenarioError as err:
                raise SimulationError(str(err)) from None
        merged = {**_fresh(obj), "metadata": {**_fresh(obj)["metadata"], "namespace": namespace or None}}
        if not namespace:
            merged["metadata"].pop("namespace")
        if "status" not in obj and "status" in existing:
            merged["status"] = existing["status"]
        try:
            check_decodable(obj, "")
            return self.cluster.registry.update(kind.resource, merged)
        except ScenarioError as err:
            raise SimulationError(str(err)) from None
        except StatusError as err:
            raise SimulationError(f"{_describe(obj)}: {_status_text(err)}") from None

    def delete(self, kind: str, name: str, namespace: str = "default") -> JSON:
        """Delete an object (`kind` as kubectl takes it: `Pod`, `pods`, `po`); SimulationError if absent."""
        try:
            resolved = resolve_kind(kind)
        except KindError as err:
            raise SimulationError(str(err)) from None
        try:
            return self.cluster.registry.delete(
                resolved.resource, namespace if resolved.namespaced else "", name
            )
        except StatusError as err:
            raise SimulationError(err.message) from None

    def kubectl(self, args: str | Sequence[str]) -> list[str]:
        """Run a kubectl verb; returns the lines kubectl prints. KubectlError with kubectl's message."""
        argv = shlex.split(args) if isinstance(args, str) else list(args)
        if argv and argv[0] == "kubectl":
            argv = argv[1:]
        command = "kubectl " + " ".join(argv)
        lines = self.kubectl_runner.run_with_output(argv, lambda line: self._note("Kubectl", command, line))
        return lines

    def fault(
        self,
        fault: str,
        *,
        node: str | None = None,
        nodes: Sequence[str] | None = None,
        zone: str | None = None,
    ) -> list[str]:
        """Apply a fault (stop, not-ready, recover, memory-pressure, ...) to nodes or a zone."""
        if fault not in FAULTS:
            raise SimulationError(f"unknown fault {fault!r} (supported: {', '.join(FAULTS)})")
        targets: list[str] = []
        if node is not None:
            targets.append(node)
        if nodes is not None:
            targets.extend(nodes)
        if zone is not None:
            in_zone = self.cluster.fleet.nodes_in_zone(zone)
            if not in_zone:
                raise SimulationError(f"unknown zone {zone!r}")
            targets.extend(in_zone)
        if not targets:
            raise SimulationError("a fault needs node, nodes or zone")
        unknown = [n for n in targets if n not in self.cluster.fleet.zones]
        if unknown:
            raise SimulationError(f"unknown node {unknown[0]!r}")
        self.cluster.fleet.fault(targets, fault)
        for name in targets:
            self._note("Fault", name, fault, kind="Node")
        return targets

    # reading ------------------------------------------------------------------------------------

    @property
    def timeline(self) -> list[JSON]:
        """The timeline records so far (read-only), as in the `timeline` of the JSON document."""
        return self.cluster.timeline.records

    def objects(self, kind: str, namespace: str = "") -> list[JSON]:
        """Current objects of a kind (`Pod`, `pods`, `Node`, ...), in key order (read-only)."""
        try:
            resolved = resolve_kind(kind)
        except KindError as err:
            raise SimulationError(str(err)) from None
        return list(self.cluster.store.list(resolved.resource, namespace=namespace).items)

    def document(self) -> JSON:
        """The timeline JSON of `kubetaint simulate` for the run so far."""
        return document(
            self.scenario.name,
            self.seed,
            self.now,
            self.timeline,
            nodes=self.objects("nodes"),
            pods=self.objects("pods"),
        )

    # scenario events ----------------------------------------------------------------------------

    def _runner(self, event: ScenarioEvent) -> Callable[[], None]:
        def run() -> None:
            try:
                self._run_event(event)
            except (SimulationError, KubectlError, ScenarioError) as err:
                self._note("EventFailed", f"events[{event.index}]", str(err), kind="Scenario")

        return run

    def _run_event(self, event: ScenarioEvent) -> None:
        if event.verb == "kubectl":
            self.kubectl(event.args)
        elif event.verb == "apply":
            self.apply(event.args)
        elif event.verb == "delete":
            spec = event.args
            self.delete(str(spec["kind"]), str(spec["name"]), str(spec.get("namespace") or "default"))
        else:
            fault = str(event.args)
            if "zone" in event.targets:
                self.fault(fault, zone=event.targets["zone"])
            else:
                self.fault(fault, nodes=event.targets["nodes"])

    def _note(self, reason: str, name: str, message: str, *, kind: str = "Command") -> None:
        self.cluster.timeline.add(
            {"t": self.cluster.timeline.t(), "reason": reason, "kind": kind, "name": name, "message": message}
        )


def _seconds(value: float | str, what: str) -> float:
    try:
        return run_seconds(value)
    except ValueError as err:
        raise SimulationError(f"{what}: {err}") from None
