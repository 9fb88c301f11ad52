"""A quiet Ready node's status post, as a part of the node lifecycle controller's node loop
(mirrors the per-node body of monitorNodeHealth and tryUpdateNodeHealth in
pkg/controller/nodelifecycle/node_lifecycle_controller.go for that one case).

Every healthy kubelet posts its node status every nodeStatusReportFrequency (5 min): ~40,000
visits an hour at 5,000 nodes whose only news is a new Ready heartbeat. For a node the last pass
left quiet, Ready and untainted, whose new object keeps its spec, labels and uid, the full
update's effects are known: the health record is refreshed, Ready is counted in its zone, there
is no taint to remove and the node leaves its zone queue; `_reposted` makes just those.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.clock.base import Clock
from kubetaint.controllers.nodelifecycle.health import NodeHealthTracker
from kubetaint.controllers.nodelifecycle.resting import QuietNode
from kubetaint.controllers.nodelifecycle.tainting import ZoneTainters
from kubetaint.store.interface import JSON


class StatusReposts:
    """The status-post update of NodeLoop (whose controller provides these attributes)."""

    health: NodeHealthTracker
    tainters: ZoneTainters
    nodes_to_retry: set[str]
    _clock: Clock
    _quiet: dict[str, QuietNode]

    def _reposted(
        self,
        name: str,
        node: JSON,
        quiet: QuietNode,
        lease: JSON | None,
        zone_conditions: dict[str, list[Mapping[str, Any] | None]],
    ) -> bool:
        """The full update of a quiet, Ready, untainted node whose new object is its kubelet's
        status post: the same spec, labels and uid, Ready still True under a new heartbeat (see
        NodeHealthTracker.try_update_reposted). Its effects are those of _full_update_node and
        _is_quiet for it: the health record refreshed, Ready counted in its zone, no taint to
        remove (none of the NoExecute ones in the same spec), the name out of its zone queue, not
        to retry, quiet again. False (nothing done) for any other node."""
        if quiet.status != "True" or quiet.no_execute_taints or name in self.nodes_to_retry:
            return False
        old = quiet.node
        meta, old_meta = node.get("metadata"), old.get("metadata")
        if type(meta) is not dict or type(old_meta) is not dict or meta.get("name") != name:
            return False
        spec, old_spec = node.get("spec"), old.get("spec")
        labels, old_labels = meta.get("labels"), old_meta.get("labels")
        if (
            (spec is not old_spec and spec != old_spec)
            or (labels is not old_labels and labels != old_labels)
            or meta.get("uid") != old_meta.get("uid")
        ):
            return False
        current = self.health.try_update_reposted(name, node.get("status"), lease, self._clock.now())
        if current is None:
            return False
        if quiet.counted:
            zone_conditions.setdefault(quiet.zone, []).append(current)
        queue = self.tainters.queue(quiet.zone)  # mark_node_as_reachable: Remove from its queue
        if name in queue.queue.values:
            queue.remove(name)
        quiets = self._quiet
        del quiets[name]  # (popped, then made again: as the full update does)
        quiets[name] = QuietNode(
            node, lease, current, "True", quiet.zone, quiet.counted, False, False, quiet.uid
        )
        return True
