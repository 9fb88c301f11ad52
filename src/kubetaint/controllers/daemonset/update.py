"""A DaemonSet's rolling update: which old pods to delete and which nodes get a new pod, as
pkg/controller/daemon/update.go (rollingUpdate, findUpdatedPodsOnNode, updatedDesiredNodeCounts)
and util/daemonset_util.go (IsPodUpdated, UnavailableCount, SurgeCount, AllowsSurge).

Decisions only: the controller reads the pods by node and the verdicts, and acts on the plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetaint.api.daemonset_generation import TEMPLATE_GENERATION_ANNOTATION
from kubetaint.controllers.deployment.util import scaled_value
from kubetaint.controllers.replicaset import podutil

JSON = dict[str, Any]
HASH_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"


@dataclass
class UpdatePlan:
    """syncNodes' arguments of rollingUpdate: old pods to delete and nodes needing a new pod."""

    delete: list[JSON] = field(default_factory=list)
    create: list[str] = field(default_factory=list)


def strategy_type(ds: Mapping[str, Any]) -> str:
    """spec.updateStrategy.type, RollingUpdate when unset (SetDefaults_DaemonSet)."""
    strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
    return str(strategy.get("type") or "RollingUpdate")


def _rolling(ds: Mapping[str, Any]) -> Mapping[str, Any] | None:
    strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
    if strategy_type(ds) != "RollingUpdate":
        return None
    rolling = strategy.get("rollingUpdate")
    # an unset rollingUpdate reads as SetDefaults_DaemonSet stores it: maxUnavailable 1, maxSurge 0
    return rolling if isinstance(rolling, dict) else {"maxUnavailable": 1, "maxSurge": 0}


def unavailable_count(ds: Mapping[str, Any], number_to_schedule: int) -> int:
    """UnavailableCount: maxUnavailable scaled to the nodes to schedule, rounded up (0 when the
    strategy is not RollingUpdate). ValueError for a malformed value."""
    rolling = _rolling(ds)
    if rolling is None:
        return 0
    value = rolling.get("maxUnavailable", 1)
    return scaled_value(value if value is not None else 1, number_to_schedule, True)


def surge_count(ds: Mapping[str, Any], number_to_schedule: int) -> int:
    """SurgeCount: maxSurge scaled to the nodes to schedule, rounded up (0 when the strategy is
    not RollingUpdate). ValueError for a malformed value."""
    rolling = _rolling(ds)
    if rolling is None:
        return 0
    value = rolling.get("maxSurge", 0)
    return scaled_value(value if value is not None else 0, number_to_schedule, True)


def allows_surge(ds: Mapping[str, Any]) -> bool:
    """AllowsSurge: SurgeCount(ds, 1) is well formed and not 0."""
    try:
        return surge_count(ds, 1) != 0
    except ValueError:
        return False


def template_generation(ds: Mapping[str, Any]) -> str | None:
    """GetTemplateGeneration, as the label value pods carry: the DaemonSet's template generation
    annotation (the daemon set strategy sets it on every write), else its metadata.generation (a
    DaemonSet loaded from a scenario or snapshot without it)."""
    meta = ds.get("metadata") or {}
    annotation = (meta.get("annotations") or {}).get(TEMPLATE_GENERATION_ANNOTATION)
    if annotation is not None:
        return str(annotation)
    generation = meta.get("generation")
    return str(generation) if generation is not None else None


def is_pod_updated(pod: Mapping[str, Any], hash_: str, generation: str | None) -> bool:
    """IsPodUpdated: the pod's revision hash label is the current hash, or its template
    generation label is the DaemonSet's template generation."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    template_matches = generation is not None and labels.get(GENERATION_LABEL) == generation
    hash_matches = len(hash_) > 0 and labels.get(HASH_LABEL) == hash_
    return hash_matches or template_matches


def find_updated_pods_on_node(
    pods: list[JSON], hash_: str, generation: str | None
) -> tuple[JSON | None, JSON | None, bool]:
    """findUpdatedPodsOnNode: (new pod, old pod, ok) among the node's pods not being deleted;
    ok is False when there is more than one of either (the manage loop prunes them first)."""
    new_pod: JSON | None = None
    old_pod: JSON | None = None
    for pod in pods:
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if is_pod_updated(pod, hash_, generation):
            if new_pod is not None:
                return None, None, False
            new_pod = pod
        else:
            if old_pod is not None:
                return None, None, False
            old_pod = pod
    return new_pod, old_pod, True


def updated_desired_node_counts(
    ds: Mapping[str, Any], should_run: Mapping[str, bool], by_node: dict[str, list[JSON]]
) -> tuple[int, int, int]:
    """updatedDesiredNodeCounts: (maxSurge, maxUnavailable, desiredNumberScheduled); each node
    that should run the pod gets an (empty) entry in `by_node`. A DaemonSet allowing neither
    surge nor unavailability accepts one unavailable pod. ValueError for malformed values."""
    desired = 0
    for name, run in should_run.items():
        if not run:
            continue
        desired += 1
        by_node.setdefault(name, [])
    max_unavailable = unavailable_count(ds, desired)
    max_surge = surge_count(ds, desired)
    if desired > 0 and max_unavailable == 0 and max_surge == 0:
        max_unavailable = 1
    return max_surge, max_unavailable, desired


def rolling_update(
    ds: Mapping[str, Any],
    by_node: Mapping[str, list[JSON]],
    should_run: Mapping[str, bool],
    hash_: str,
    now: float,
) -> UpdatePlan:
    """rollingUpdate: without surge, old pods deleted up to maxUnavailable (unavailable old pods
    always); with surge, new pods created beside available old ones up to maxSurge (beside
    unavailable ones always) and old pods deleted once their node's new pod is available.
    `by_node`: the DaemonSet's pods by node; `should_run`: NodeShouldRunDaemonPod's shouldRun of
    every node. ValueError for a malformed maxSurge or maxUnavailable."""
    nodes_to_pods = {name: list(pods) for name, pods in by_node.items()}
    max_surge, max_unavailable, desired = updated_desired_node_counts(ds, should_run, nodes_to_pods)
    min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
    generation = template_generation(ds)

    def available(pod: JSON) -> bool:
        return podutil.is_available(pod, min_ready, now)

    if max_surge == 0:
        return _without_surge(nodes_to_pods, hash_, generation, max_unavailable, available)
    return _with_surge(
        nodes_to_pods,
        should_run,
        hash_,
        generation,
        max_surge=max_surge,
        desired=desired,
        available=available,
    )


def _without_surge(
    nodes_to_pods: Mapping[str, list[JSON]],
    hash_: str,
    generation: str | None,
    max_unavailable: int,
    available: Callable[[JSON], bool],
) -> UpdatePlan:
    num_unavailable = 0
    allowed: list[JSON] = []
    candidates: list[JSON] = []
    for pods in nodes_to_pods.values():
        new_pod, old_pod, ok = find_updated_pods_on_node(pods, hash_, generation)
        if not ok or (old_pod is None) == (new_pod is None):
            # the manage loop cleans up or creates on this node: counted unavailable
            num_unavailable += 1
        elif new_pod is not None:
            if not available(new_pod):
                num_unavailable += 1
        elif old_pod is not None:
            if not available(old_pod):
                allowed.append(old_pod)  # an unavailable old pod is replaced at once
                num_unavailable += 1
            elif num_unavailable < max_unavailable:
                candidates.append(old_pod)
    remaining = min(max(max_unavailable - num_unavailable, 0), len(candidates))
    return UpdatePlan(delete=allowed + candidates[:remaining])


def _with_surge(
    nodes_to_pods: Mapping[str, list[JSON]],
    should_run: Mapping[str, bool],
    hash_: str,
    generation: str | None,
    *,
    max_surge: int,
    desired: int,
    available: Callable[[JSON], bool],
) -> UpdatePlan:
    old_to_delete: list[JSON] = []
    should_not_run_to_delete: list[JSON] = []
    candidate_nodes: list[str] = []
    allowed_nodes: list[str] = []
    num_surge = num_available = 0
    for name, pods in nodes_to_pods.items():
        new_pod, old_pod, ok = find_updated_pods_on_node(pods, hash_, generation)
        if not ok:
            num_surge += 1  # the manage loop cleans up this node: counted as surging
            continue
        shown = old_pod if old_pod is not None else new_pod
        if shown is not None and available(shown):
            num_available += 1
        if old_pod is None:
            continue  # the manage loop handles this node
        if new_pod is None:
            runs = should_run.get(name, False)
            if not available(old_pod):
                if not runs:
                    old_to_delete.append(old_pod)
                else:
                    allowed_nodes.append(name)
            elif not runs:
                should_not_run_to_delete.append(old_pod)
            elif num_surge < max_surge:
                candidate_nodes.append(name)
            continue
        if not available(new_pod):
            num_surge += 1  # waiting for the new pod to become available
            continue
        old_to_delete.append(old_pod)  # the new pod is available: the old one goes
    # with surge 100% availability is expected: a pod on a node the DaemonSet no longer fits
    # goes only while more pods are available than desired
    deletable = min(num_available - desired, len(should_not_run_to_delete))
    if deletable > 0:
        old_to_delete.extend(should_not_run_to_delete[:deletable])
    remaining = min(max(max_surge - num_surge, 0), len(candidate_nodes))
    return UpdatePlan(delete=old_to_delete, create=allowed_nodes + candidate_nodes[:remaining])


def surge_pods_to_delete(running: list[JSON], hash_: str, min_ready: int, now: float) -> list[JSON]:
    """podsShouldBeOnNode's pruning of a node's running pods (oldest first) when the DaemonSet
    allows surge: the oldest new and the oldest old pod may stay together while the new one is
    not yet available and the old one is ready; every other pod is deleted."""
    delete: list[JSON] = []
    oldest_new: JSON | None = None
    oldest_old: JSON | None = None
    for pod in running:
        if ((pod.get("metadata") or {}).get("labels") or {}).get(HASH_LABEL) == hash_:
            if oldest_new is None:
                oldest_new = pod
                continue
        elif oldest_old is None:
            oldest_old = pod
            continue
        delete.append(pod)
    if (
        oldest_new is not None
        and oldest_old is not None
        and (not podutil.is_ready(oldest_old) or podutil.is_available(oldest_new, min_ready, now))
    ):
        delete.append(oldest_old)
    return delete
