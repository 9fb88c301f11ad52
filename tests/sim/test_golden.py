"""Golden timelines for every example, and determinism: the same scenario and seed give the same
bytes. Regenerate the goldens with KUBETAINT_UPDATE_GOLDEN=1."""

from __future__ import annotations

import os

import pytest

from kubetaint.sim.api import simulate
from kubetaint.sim.timeline import dumps

from .helpers import EXAMPLES, run_example

GOLDEN = EXAMPLES.parent / "tests" / "sim" / "golden"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))


def _timeline_only(doc: dict) -> dict:
    """The golden keeps the timeline and summary (final objects carry uids and are checked apart)."""
    return {k: v for k, v in doc.items() if k != "final"}


@pytest.mark.parametrize("name", NAMES)
def test_timeline_matches_golden(name: str) -> None:
    text = dumps(_timeline_only(run_example(name))) + "\n"
    path = GOLDEN / f"{name}.json"
    if os.environ.get("KUBETAINT_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden {path.name}; run with KUBETAINT_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["toleration-seconds", "dedicated-nodes", "daemonset-tolerations"])
def test_two_runs_give_the_same_bytes(name: str) -> None:
    first = dumps(simulate(EXAMPLES / f"{name}.yaml"))
    second = dumps(simulate(EXAMPLES / f"{name}.yaml"))
    assert first == second


def test_another_seed_changes_generated_names_but_not_the_outcome() -> None:
    one = simulate(EXAMPLES / "dedicated-nodes.yaml", seed=1)
    two = simulate(EXAMPLES / "dedicated-nodes.yaml", seed=2)
    names = lambda doc: sorted(p["metadata"]["name"] for p in doc["final"]["pods"])  # noqa: E731
    assert names(one) != names(two)
    assert one["summary"] == two["summary"]
