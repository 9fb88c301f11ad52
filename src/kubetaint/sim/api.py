"""The simulator's public Python API (re-exported from `kubetaint`): `simulate` and `Simulation`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kubetaint.sim.scenario import ScenarioError, load_scenario
from kubetaint.sim.simulation import Simulation, SimulationError

__all__ = ["ScenarioError", "Simulation", "SimulationError", "simulate"]


def simulate(
    scenario: str | Path | Mapping[str, Any],
    *,
    until: float | str | None = None,
    seed: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """Run a scenario (path, YAML/JSON text or dict) to its end; the timeline JSON document.

    An invalid scenario raises ScenarioError (file:line, object and field) before anything runs.
    """
    loaded = load_scenario(scenario)
    return Simulation(loaded, seed=seed, until=until).run(progress)
