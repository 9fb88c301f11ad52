"""Starting a simulation of a snapshot as a cluster that keeps running (shared by `simulate` and
`whatif`): the snapshot's StatefulSet pods get the simulator's name of their captured revision,
the controllers take the snapshot's objects at t=0, and in-flight taint-eviction timers continue
from the snapshot.

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
from kubetaint.controllers.statefulset.pods import REVISION_LABEL, is_member, update_revision
from kubetaint.controllers.tainteviction.controller import TaintEvictionController
from kubetaint.core.eviction import min_toleration_seconds
from kubetaint.core.matching import get_matching_tolerations
from kubetaint.sim.scenario import Scenario
from kubetaint.sim.simulation import Simulation
from kubetaint.sim.snapshot import SnapshotInfo
from kubetaint.store.interface import JSON


def is_snapshot(info: SnapshotInfo) -> bool:
    """Whether a scenario's snapshot info holds anything a run must honour (a capture time for
    in-flight timers, StatefulSet revisions to align)."""
    return bool(info.captured_at or info.revisions)


def start_snapshot(sim: Simulation, info: SnapshotInfo) -> None:
    """Run `sim` (not yet started) to t=0 as a snapshot: the StatefulSet pods' revisions aligned,
    then t=0's work, then the in-flight timers moved."""
    run_to_start(sim, info)


def run_to_start(sim: Simulation, info: SnapshotInfo) -> None:
    """The StatefulSet pods' revisions aligned, t=0's work (controllers adopt the snapshot's
    pods and start their timers), then the in-flight taint-eviction timers moved to where the
    snapshot had them."""
    align_stateful_set_revisions(sim, info)
    sim.run_until(0)
    continue_timers(sim, info)


def align_stateful_set_revisions(sim: Simulation, info: SnapshotInfo) -> None:
    """Relabel each pod of a StatefulSet's captured update revision with the revision name the
    simulated StatefulSet controller gives the same template (`<set>-<hash>`, the hash being the
    simulator's): the controller then keeps the pods it adopts instead of rolling them."""
    if not info.revisions:
        return
    store = sim.cluster.store
    for sts in sim.objects("statefulsets.apps"):
        meta = sts.get("metadata") or {}
        captured = info.revisions.get((str(meta.get("namespace") or "default"), str(meta.get("name"))))
        if captured is None:
            continue
        ours = update_revision(sts)
        for pod in sim.objects("pods"):
            pod_meta = pod.get("metadata") or {}
            labels = pod_meta.get("labels") or {}
            if (
                pod_meta.get("namespace") != meta.get("namespace")
                or not is_member(sts, pod)
                or labels.get(REVISION_LABEL) != captured
            ):
                continue
            relabelled = {**pod_meta, "labels": {**labels, REVISION_LABEL: ours}}
            store.update("pods", {**pod, "metadata": relabelled})


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
