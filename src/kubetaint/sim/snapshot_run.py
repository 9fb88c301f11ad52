"""Starting a simulation of a snapshot as a cluster that keeps running (shared by `simulate` and
`whatif`): the snapshot's StatefulSets recreate their deleted pods, the controllers take the
snapshot's objects at t=0, and in-flight taint-eviction timers continue from the snapshot.

In-flight evictions. Upstream's taint eviction controller starts a pod's timer when it processes
the pod on a tainted node (processing time, not the taint's `timeAdded`); a restarted controller
starts every timer from zero. A snapshot is modelled as a cluster that keeps running, whose
controller has had the timer since the NoExecute taint was added: right after t=0 every pending
timer on a node that already had NoExecute taints in the snapshot is moved to
`timeAdded(earliest such taint) + tolerationSeconds` (due ones fire at once). Without a capture
time (a hand-saved List) timers start at t=0, as after a controller restart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.clock import parse_time
from kubetaint.controllers.tainteviction.controller import TaintEvictionController
from kubetaint.core.eviction import min_toleration_seconds
from kubetaint.core.matching import get_matching_tolerations
from kubetaint.sim.scenario import Scenario
from kubetaint.sim.simulation import Simulation
from kubetaint.sim.snapshot import SnapshotInfo
from kubetaint.sim.statefulset import StatefulSetOwner
from kubetaint.store.interface import JSON


def is_snapshot(info: SnapshotInfo) -> bool:
    """Whether a scenario's snapshot info holds anything a run must honour (a capture time for
    in-flight timers, StatefulSets to stand in for)."""
    return bool(info.captured_at or info.stateful_sets)


def start_snapshot(sim: Simulation, info: SnapshotInfo) -> StatefulSetOwner:
    """Run `sim` (not yet started) to t=0 as a snapshot: the StatefulSet stand-in first (it
    watches from the start), then t=0's work, then the in-flight timers moved. Returns the
    stand-in (it lives as long as the run)."""
    owner = StatefulSetOwner(sim, info.stateful_sets)
    run_to_start(sim, info)
    return owner


def run_to_start(sim: Simulation, info: SnapshotInfo) -> None:
    """t=0's work (controllers adopt the snapshot's pods and start their timers), then the
    in-flight taint-eviction timers moved to where the snapshot had them."""
    sim.run_until(0)
    continue_timers(sim, info)


def _node(pod: Mapping[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def continue_timers(sim: Simulation, info: SnapshotInfo) -> None:
    """Move pending taint-eviction timers to the snapshot taints' timeAdded (module docstring)."""
    if not info.captured_at:
        return
    captured = parse_time(info.captured_at)
    start = sim.cluster.start
    controllers = [c for c in sim.cluster.controllers if isinstance(c, TaintEvictionController)]
    if not controllers:
        return
    controller = controllers[0]
    snapshot_taints = _snapshot_no_execute_taints(sim.scenario)
    for key, worker in list(controller.queue.workers.items()):
        if worker is None:
            continue
        namespace, _, name = key.partition("/")
        pod = controller.pods.get(namespace, name)
        taints = snapshot_taints.get(_node(pod or {}), [])
        added = [parse_time(str(t["timeAdded"])) for t in taints if t.get("timeAdded")]
        if pod is None or not added:
            continue
        tolerated, used = get_matching_tolerations(taints, (pod.get("spec") or {}).get("tolerations") or [])
        seconds = min_toleration_seconds(used) if tolerated else 0.0
        if seconds < 0:
            continue
        created_at = start - (captured - min(added))
        fire_at = max(created_at + seconds, sim.clock.now())
        controller.queue.cancel_work(key)
        controller.queue.add_work(key, created_at if fire_at > sim.clock.now() else fire_at, fire_at)


def _snapshot_no_execute_taints(scenario: Scenario) -> dict[str, list[JSON]]:
    out: dict[str, list[JSON]] = {}
    for obj in scenario.objects:
        if obj.get("kind") == "Node":
            taints = [
                t for t in (obj.get("spec") or {}).get("taints") or [] if t.get("effect") == "NoExecute"
            ]
            if taints:
                out[str(obj["metadata"]["name"])] = taints
    return out
