"""A minimal StatefulSet owner for snapshots (which record StatefulSets in their annotation, not as
objects the StatefulSet controller runs): when a
pod owned by a recorded StatefulSet is deleted and its ordinal is below `replicas`, the same pod
(`<sts>-<ordinal>`, stable name, same spec, unbound) is created again, as the StatefulSet
controller (pkg/controller/statefulset) recreates a missing ordinal. Ordering guarantees,
volumes and update strategies are not modelled.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.sim.simulation import Simulation, SimulationError
from kubetaint.sim.snapshot import StatefulSetRef
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, WatchEvent


def _sts_owner(pod: Mapping[str, Any]) -> str | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == "StatefulSet":
            return str(ref.get("name"))
    return None


def replacement_pod(pod: Mapping[str, Any]) -> JSON:
    """The pod a StatefulSet creates for a missing ordinal: same name and spec, not yet bound."""
    meta = {
        k: v
        for k, v in (pod.get("metadata") or {}).items()
        if k not in ("resourceVersion", "uid", "creationTimestamp", "deletionTimestamp")
    }
    spec = {k: v for k, v in (pod.get("spec") or {}).items() if k != "nodeName"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


class StatefulSetOwner:
    """Recreates deleted StatefulSet pods of a running simulation."""

    def __init__(self, sim: Simulation, sets: Sequence[StatefulSetRef]) -> None:
        self.sim = sim
        self.replicas = {(s.namespace, s.name): s.replicas for s in sets}
        if self.replicas:
            sim.cluster.store.subscribe(each_event(self._on_change))

    def _on_change(self, event: WatchEvent) -> None:
        if event.resource != "pods" or event.type != "DELETED":
            return
        pod = event.object
        owner = _sts_owner(pod)
        meta = pod.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default")
        name = str(meta.get("name") or "")
        if owner is None or (namespace, owner) not in self.replicas:
            return
        ordinal = name.rsplit("-", 1)[-1]
        if not ordinal.isdigit() or int(ordinal) >= self.replicas[(namespace, owner)]:
            return
        replacement = replacement_pod(pod)
        self.sim.clock.call_soon(lambda: self._create(replacement))

    def _create(self, pod: JSON) -> None:
        # Recreated meanwhile (or its namespace is gone): nothing to own any more.
        with contextlib.suppress(SimulationError):
            self.sim.apply(pod)
