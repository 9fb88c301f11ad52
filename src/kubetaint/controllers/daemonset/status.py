"""The DaemonSet controller's status update (updateDaemonSetStatus): the desired, current,
misscheduled, ready, available and updated counts written to the DaemonSet's status. Mixed into
`kubetaint.controllers.daemonset.controller.DaemonSetController`, whose state it reads (the
attributes declared below)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.clock.base import Clock
from kubetaint.controllers.daemonset.bynode import PodsByNode
from kubetaint.controllers.daemonset.claiming import RESOURCE, Key
from kubetaint.controllers.daemonset.placement import PlacementMemo
from kubetaint.controllers.daemonset.statuscounts import NodeCounts
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.workqueue import WorkQueue
from kubetaint.store.informer import Informer
from kubetaint.store.interface import Store

JSON = dict[str, Any]
#: the nodes (by name) and `_should_run(node, ds)` of each, for one DaemonSet
Placement = tuple[list[JSON], list[tuple[bool, bool]]]


class StatusUpdates:
    """updateDaemonSetStatus over a DaemonSet controller's state (the attributes and methods
    below are its)."""

    store: Store
    clock: Clock
    nodes: Informer
    queue: WorkQueue[Key]
    enable_comparison: bool
    _by_node: dict[str, PodsByNode]
    _counts: dict[str, NodeCounts]
    _sorted_last: tuple[list[JSON], list[Key] | None]

    def _memo(self, ds: JSON) -> PlacementMemo:
        raise NotImplementedError

    def _template_hash(self, template: JSON, collision_count: int | None) -> str:
        raise NotImplementedError

    def update_status(
        self, ds: JSON, by_node: Mapping[str, list[JSON]], placed: Placement | None = None
    ) -> None:
        """updateDaemonSetStatus: desired/current/misscheduled/ready/available/updated counts
        (`placed`: every node with its `_should_run(node, ds)`, when the caller has them)."""
        spec = ds.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = self.clock.now()
        revision = self._template_hash(
            spec.get("template") or {}, (ds.get("status") or {}).get("collisionCount")
        )
        if placed is None:
            nodes = list(self.nodes.items())
            verdicts = self._memo(ds).verdicts(nodes, ds, enable_comparison=self.enable_comparison)
        else:
            nodes, verdicts = placed
        uid = str(ds["metadata"].get("uid") or "")
        counts = self._counts.get(uid)
        if counts is None:
            counts = self._counts[uid] = NodeCounts()
        grouped = self._by_node.get(uid)
        sorted_nodes, order = self._sorted_last
        if (
            placed is not None
            and min_ready == 0
            and grouped is not None
            and by_node is grouped.result
            and nodes is sorted_nodes
            and order is not None
        ):
            # the nodes by name as `_sorted_nodes` found every one: only the nodes whose pods
            # changed since the last count are counted again
            found = counts.count_changed(
                nodes,
                verdicts,
                by_node,
                source=grouped,
                order=order,
                changed=grouped.take_changed(),
                revision=revision,
            )
        else:
            found = counts.count(nodes, verdicts, by_node, revision=revision, min_ready=min_ready, now=now)
        desired, current, misscheduled, ready, available, updated = found
        status = {
            **(ds.get("status") or {}),
            "desiredNumberScheduled": desired,
            "currentNumberScheduled": current,
            "numberMisscheduled": misscheduled,
            "numberReady": ready,
            "numberAvailable": available,
            "updatedNumberScheduled": updated,
            "numberUnavailable": desired - available,
            "observedGeneration": ds["metadata"].get("generation", 1),
        }
        if status != ds.get("status"):
            self.store.update(RESOURCE, {**ds, "status": status})
        if min_ready > 0 and ready != available:
            self.queue.add_after(podutil.key_of(ds), float(min_ready))
