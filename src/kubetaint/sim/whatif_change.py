"""The change `whatif` tries: `taint NODE... SPEC`, `drain NODE...`, `cordon NODE...` or
`fail NODE...|zone=Z`, parsed from the command line, checked against a snapshot and applied at
t=0 through the Simulation API (kubectl verbs and faults, exactly as a scenario event would)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubetaint.core.taintspec import parse_taint_spec
from kubetaint.sim.kubectl import KubectlError
from kubetaint.sim.scenario import Scenario
from kubetaint.sim.simulation import Simulation, SimulationError
from kubetaint.store.interface import JSON

VERBS = ("taint", "drain", "cordon", "fail")
#: The flags `whatif drain` passes on: DaemonSet pods stay (as nearly every drain is run).
DRAIN_FLAGS = ("--ignore-daemonsets", "--delete-emptydir-data")


class WhatIfError(ValueError):
    """Input whatif cannot work with (unknown nodes, a snapshot that is not one): exit 1."""


class WhatIfUsageError(ValueError):
    """A malformed change on the command line: exit 2."""


@dataclass
class Change:
    verb: str
    nodes: list[str] = field(default_factory=list)
    spec: str | None = None
    zone: str | None = None

    def command(self) -> str:
        if self.verb == "taint":
            return f"kubectl taint nodes {' '.join(self.nodes)} {self.spec}"
        if self.verb == "fail":
            target = f"zone={self.zone}" if self.zone is not None else " ".join(self.nodes)
            return f"fail {target}"
        flags = f" {' '.join(DRAIN_FLAGS)}" if self.verb == "drain" else ""
        return f"kubectl {self.verb} {' '.join(self.nodes)}{flags}"

    def as_json(self) -> JSON:
        out: JSON = {"verb": self.verb, "nodes": list(self.nodes), "command": self.command()}
        if self.spec is not None:
            out["spec"] = self.spec
        if self.zone is not None:
            out["zone"] = self.zone
        return out

    def check(self, scenario: Scenario) -> None:
        """WhatIfError when the change names nodes or a zone the snapshot does not have."""
        if self.zone is not None:
            zones = scenario.initial_zones()
            if self.zone not in zones:
                known = ", ".join(sorted(zones)) or "none"
                raise WhatIfError(f"unknown zone {self.zone!r} (zones in the snapshot: {known})")
            return
        known_nodes = set(scenario.initial_node_names())
        unknown = [n for n in self.nodes if n not in known_nodes]
        if unknown:
            raise WhatIfError(f'nodes "{", ".join(unknown)}" not found in the snapshot')

    def affected_nodes(self, sim: Simulation) -> list[str]:
        if self.zone is not None:
            return sim.cluster.fleet.nodes_in_zone(self.zone)
        return list(self.nodes)

    def apply(self, sim: Simulation) -> list[str]:
        """Apply the change now (t=0); the lines kubectl printed (drain keeps adding retries)."""
        try:
            if self.verb == "taint":
                assert self.spec is not None
                return sim.kubectl(["taint", "nodes", *self.nodes, self.spec])
            if self.verb == "cordon":
                return sim.kubectl(["cordon", *self.nodes])
            if self.verb == "drain":
                output: list[str] = []
                sim.kubectl_runner.run_with_output(["drain", *self.nodes, *DRAIN_FLAGS], output.append)
                return output
            if self.zone is not None:
                sim.fault("stop", zone=self.zone)
            else:
                sim.fault("stop", nodes=self.nodes)
            return []
        except (KubectlError, SimulationError) as err:
            raise WhatIfError(str(err)) from None


def parse_change(args: Sequence[str]) -> Change:
    """`taint NODE... SPEC`, `drain NODE...`, `cordon NODE...`, `fail NODE...|zone=Z`."""
    if not args or args[0] not in VERBS:
        got = args[0] if args else ""
        raise WhatIfUsageError(f'unknown change "{got}" (supported: {", ".join(VERBS)})')
    verb, rest = args[0], list(args[1:])
    if rest and rest[0] in ("node", "nodes") and verb in ("taint", "drain", "cordon"):
        rest = rest[1:]  # `taint nodes n1 k=v:NoExecute`, as kubectl spells it
    if verb == "taint":
        if len(rest) < 2:
            raise WhatIfUsageError("taint needs at least one node and a taint spec (key=value:Effect)")
        spec = rest[-1]
        try:
            parse_taint_spec([spec])
        except ValueError as err:
            raise WhatIfUsageError(str(err)) from None
        return Change("taint", rest[:-1], spec=spec)
    if not rest:
        raise WhatIfUsageError(f"{verb} needs at least one node")
    if verb == "fail":
        zones = [a for a in rest if a.startswith("zone=")]
        if zones:
            if len(rest) != 1:
                raise WhatIfUsageError("fail takes either node names or one zone=Z")
            return Change("fail", zone=zones[0].split("=", 1)[1])
    return Change(verb, list(rest))
