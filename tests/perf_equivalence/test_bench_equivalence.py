"""The benchmark scenario (benchmarks/bench_sim.py) at small scale gives exactly the document it gave
before the performance work: the timeline, the summary and every final object, byte for byte.

The goldens were produced by the unoptimised simulator (commit 755154e) and must never be regenerated
to make an optimisation pass; regenerate only for a deliberate behaviour change, with
KUBETAINT_UPDATE_GOLDEN=1.

Deliberate changes applied to the goldens since:
- nodes' `status.nodeInfo.kubeProxyVersion: ""` (the kubelet always sends it; the official Python
  client rejects nodes without it), placed after `kernelVersion` as the kubelet writes it (a data
  migration, not regenerated).
- PodTopologySpread's system default constraints (hostname maxSkew 3, zone maxSkew 5,
  ScheduleAnyway) applied to the ReplicaSets' pods, as upstream does: the simulator gives the
  scheduler its ReplicaSets. Regenerated, and checked equal to the reference mode's documents
  (KUBETAINT_REFERENCE=1: no shortcut, every node filtered and scored one by one).
- the DaemonSet's ControllerRevision, created at its first sync as upstream's constructHistory
  does: one object more, so every later resourceVersion is one higher and every later uid the
  seeded generator's next one (nothing else differs). Regenerated.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kubetaint.sim.api import Simulation
from kubetaint.sim.timeline import dumps

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"


def _bench_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_sim", ROOT / "benchmarks" / "bench_sim.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(nodes: int, pods: int, until: str) -> str:
    doc = _bench_module().scenario(nodes, pods, until)
    return dumps(Simulation(doc).run()) + "\n"


def _first_difference(actual: dict[str, Any], expected: dict[str, Any]) -> str:
    """A short pointer to where two documents part, so a failure is readable without the 2 MB diff."""
    for section in ("summary", "timeline", "final"):
        if actual.get(section) == expected.get(section):
            continue
        got, want = actual.get(section), expected.get(section)
        if isinstance(got, list) and isinstance(want, list):
            for i, (a, b) in enumerate(zip(got, want, strict=False)):
                if a != b:
                    return f"{section}[{i}]: got {a!r}, expected {b!r}"
            return f"{section}: {len(got)} entries, expected {len(want)}"
        return f"{section} differs"
    return "documents differ only in formatting"


@pytest.mark.parametrize(
    ("nodes", "pods", "until"),
    [
        pytest.param(60, 600, "1h", id="sixty nodes, six hundred pods, one zone down for an hour"),
        pytest.param(
            90, 1800, "20m", id="ninety nodes, eighteen hundred pods, twenty minutes of zone outage"
        ),
    ],
)
def test_bench_scenario_matches_the_pre_optimisation_golden(nodes: int, pods: int, until: str) -> None:
    text = _run(nodes, pods, until)
    path = GOLDEN / f"bench-{nodes}-{pods}-{until}.json.gz"
    if os.environ.get("KUBETAINT_UPDATE_GOLDEN"):
        path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    assert path.exists(), f"missing golden {path.name}"
    expected = gzip.decompress(path.read_bytes()).decode("utf-8")
    if text != expected:
        pytest.fail(_first_difference(json.loads(text), json.loads(expected)))
