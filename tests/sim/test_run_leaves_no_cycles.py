"""A simulation's run leaves no cyclic garbage: what the engine drops, reference counting frees.
This is what lets `collections_deferred` wait for millions of young objects during a run without
letting garbage pile up; a change that makes cycles per event fails here."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubetaint import Simulation

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_sim  # noqa: E402  (the benchmark's own scenario: RS adoptions, a DaemonSet, a zone outage)


@pytest.fixture(autouse=True)
def collector_state() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()


def cycles_made_by_running(sim: Simulation, *stops: str) -> int:
    """Run `sim` (to each of `stops`, then to its end) with the collector off; the number of
    objects a full collection then finds unreachable."""
    gc.unfreeze()  # what loading froze, and anything dropped before it, is looked at first
    gc.collect()
    gc.disable()
    for stop in stops:
        sim.run_until(stop)
    sim.run()
    return gc.collect()


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_running_an_example_makes_no_cycles(path: Path) -> None:
    assert cycles_made_by_running(Simulation(path)) == 0


def test_a_zone_outage_with_adoptions_makes_no_cycles_when_stepped() -> None:
    sim = Simulation(bench_sim.scenario(30, 900, "15m"))
    assert cycles_made_by_running(sim, "30s", "61s", "5m") == 0


def test_the_check_finds_cycles_when_there_are_some() -> None:
    """The measure itself can fail: a cycle made during the run is counted."""
    sim = Simulation(bench_sim.scenario(3, 30, "20s"))

    def make_cycle() -> None:
        first: list[object] = []
        second: list[object] = [first]
        first.append(second)

    sim.clock.call_at(sim.cluster.start + 5, make_cycle)
    assert cycles_made_by_running(sim) == 2
