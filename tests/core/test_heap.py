"""The collector controls in kubetaint.core.heap: what is paused, deferred and promoted, and that
the previous collector state always comes back."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from kubetaint import Simulation
from kubetaint.core.heap import DEFERRED_YOUNG, collections_deferred, collector_paused, promote_survivors


class Node:
    """A small tracked object that can sit in a reference cycle and be watched by a weakref."""

    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture(autouse=True)
def collector_state() -> Iterator[None]:
    """Each test starts from and leaves the interpreter's own collector state."""
    thresholds, enabled = gc.get_threshold(), gc.isenabled()
    assert gc.get_freeze_count() == 0
    yield
    gc.set_threshold(*thresholds)
    gc.unfreeze()
    if enabled:
        gc.enable()


def in_generation(obj: object, generation: int) -> bool:
    return any(candidate is obj for candidate in gc.get_objects(generation))


def test_pausing_disables_the_collector_and_restores_it() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_pausing_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_deferring_waits_for_many_young_objects_and_stops_the_older_collections() -> None:
    thresholds = gc.get_threshold()
    with collections_deferred():
        inside = gc.get_threshold()
    assert inside[0] == DEFERRED_YOUNG
    assert inside[1] > 1_000_000 and inside[2] > 1_000_000
    assert gc.get_threshold() == thresholds


def test_deferring_takes_a_young_threshold_of_its_own() -> None:
    with collections_deferred(young=1234):
        assert gc.get_threshold()[0] == 1234


def test_a_zero_young_threshold_stays_zero_while_deferring() -> None:
    gc.set_threshold(0)
    with collections_deferred():
        assert gc.get_threshold()[0] == 0


def make_cycle() -> weakref.ref[Node]:
    first, second = Node(), Node()
    first.other, second.other = second, first
    return weakref.ref(first)


def test_finding_cyclic_garbage_brings_the_young_threshold_back() -> None:
    young = gc.get_threshold()[0]
    with collections_deferred():
        watched = make_cycle()
        gc.collect(0)
        assert watched() is None
        assert gc.get_threshold()[0] == young  # cycles exist: collected as often as before
        assert gc.get_threshold()[1] > 1_000_000  # the older collections stay deferred
    assert not any(getattr(callback, "__name__", "") == "on_collection" for callback in gc.callbacks)


def test_a_collection_that_finds_nothing_keeps_the_deferral() -> None:
    gc.collect()
    with collections_deferred():
        gc.collect(0)
        assert gc.get_threshold()[0] == DEFERRED_YOUNG


def test_deferring_restores_the_thresholds_when_the_block_raises() -> None:
    thresholds = gc.get_threshold()
    with pytest.raises(RuntimeError), collections_deferred():
        raise RuntimeError("boom")
    assert gc.get_threshold() == thresholds


def test_a_cycle_made_while_deferring_is_collected_when_asked() -> None:
    with collections_deferred():
        watched = make_cycle()
        gc.collect(0)
        assert watched() is None


def test_survivors_of_a_deferred_block_end_in_the_oldest_generation() -> None:
    with collections_deferred():
        survivor = Node()
        assert not in_generation(survivor, 2)
    assert in_generation(survivor, 2)
    assert gc.get_freeze_count() == 0


def test_promotion_leaves_objects_someone_else_froze_frozen() -> None:
    frozen = Node()
    gc.freeze()
    held = gc.get_freeze_count()
    with collections_deferred():
        young = Node()
    assert gc.get_freeze_count() == held
    assert not in_generation(frozen, 2)
    assert not in_generation(young, 2)


def test_promoting_empties_the_young_generations() -> None:
    keep = [Node() for _ in range(10)]
    promote_survivors()
    assert all(in_generation(node, 2) for node in keep)


SCENARIO = {
    "apiVersion": "kubetaint.dev/v1alpha1",
    "kind": "Scenario",
    "metadata": {"name": "heap"},
    "spec": {"seed": 1, "until": "20s", "nodeGroups": [{"name": "node", "count": 2}]},
}


def test_a_loaded_simulation_sits_in_the_oldest_generation_and_nothing_is_frozen() -> None:
    sim = Simulation(SCENARIO)
    assert gc.get_freeze_count() == 0
    loaded = sim.objects("Node")[0]
    assert in_generation(loaded, 2)
    sim.run_until("10s")
    assert gc.get_freeze_count() == 0
    assert in_generation(loaded, 2)


@pytest.mark.parametrize("enabled", [True, False], ids=["collector on", "collector off"])
def test_creating_and_running_a_simulation_leaves_the_collector_as_the_caller_set_it(enabled: bool) -> None:
    gc.set_threshold(1234, 11, 12)
    if not enabled:
        gc.disable()
    sim = Simulation(SCENARIO)
    assert (gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()) == ((1234, 11, 12), enabled, 0)
    sim.run_until("10s")
    assert (gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()) == ((1234, 11, 12), enabled, 0)
    sim.run()
    assert (gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()) == ((1234, 11, 12), enabled, 0)


def test_objects_the_caller_froze_stay_frozen_through_a_simulation() -> None:
    mine = Node()
    gc.freeze()
    held = gc.get_freeze_count()
    sim = Simulation(SCENARIO)
    sim.run()
    assert gc.get_freeze_count() >= held
    assert not any(in_generation(mine, generation) for generation in range(3))


def test_garbage_made_between_runs_is_collected_as_usual() -> None:
    """Nothing of the simulation's is out of the collector's reach between runs: a cycle the
    caller makes after loading is collected by an ordinary collection."""
    sim = Simulation(SCENARIO)
    watched = make_cycle()
    gc.collect()
    assert watched() is None
    sim.run_until("5s")
    watched = make_cycle()
    gc.collect()
    assert watched() is None


def test_leaving_the_block_sets_off_no_collection_of_what_it_left() -> None:
    """More young objects than the restored threshold are promoted, not collected, on exit."""
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    try:
        with collections_deferred():
            kept = [[index] for index in range(20_000)]  # far over the default 700
        after = [[index] for index in range(100)]  # allocations that would trigger it
    finally:
        gc.callbacks.remove(count)
    assert collections == []
    assert in_generation(kept[0], 2) and not in_generation(after[0], 2)
