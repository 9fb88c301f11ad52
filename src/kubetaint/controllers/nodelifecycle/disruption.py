"""Zone disruption states and their effect on the tainting rate limiters (mirrors handleDisruption
and setLimiterInZone in pkg/controller/nodelifecycle/node_lifecycle_controller.go), as a part of
the node lifecycle controller."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.clock.base import Clock
from kubetaint.controllers.nodelifecycle.health import NodeHealthTracker
from kubetaint.controllers.nodelifecycle.resting import RestingNodes
from kubetaint.controllers.nodelifecycle.settings import NodeLifecycleSettings
from kubetaint.controllers.nodelifecycle.tainting import ZoneTainters
from kubetaint.controllers.nodelifecycle.zones import ZoneState, zone_qps, zone_state
from kubetaint.store.interface import JSON

log = logging.getLogger("kubetaint.controllers.nodelifecycle.controller")


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


class ZoneDisruption:
    """The zone half of NodeLifecycleController (which provides these attributes)."""

    settings: NodeLifecycleSettings
    zone_states: dict[str, ZoneState]
    tainters: ZoneTainters
    health: NodeHealthTracker
    resting: RestingNodes
    _clock: Clock

    def _guard(self, handler: Callable[[Any], Any], arg: Any) -> None:
        raise NotImplementedError

    def mark_node_as_reachable(self, node: Mapping[str, Any]) -> bool:
        raise NotImplementedError

    def handle_disruption(
        self,
        zone_conditions: Mapping[str, list[Mapping[str, Any] | None]],
        nodes: Callable[[], list[JSON]],
        elsewhere: Mapping[str, tuple[int, int]] | None = None,
    ) -> None:
        """Zone states and limiters; the all-zones-fully-disrupted stop and its exit.
        `nodes` gives the nodes listed at the start of the pass (only asked for on entering or
        leaving full disruption); `elsewhere` counts, per zone, the (Ready, all) nodes not listed
        in `zone_conditions`."""
        threshold = self.settings.unhealthy_zone_threshold
        sizes: dict[str, tuple[int, int]] = {}  # zone -> (ready, all)
        for zone, conditions in zone_conditions.items():
            ready = sum(1 for c in conditions if c is not None and c.get("status") == "True")
            sizes[zone] = (ready, len(conditions))
        for zone, (ready_there, size_there) in (elsewhere or {}).items():
            ready, size = sizes.get(zone, (0, 0))
            sizes[zone] = (ready + ready_there, size + size_there)
        new_states: dict[str, ZoneState] = {}
        all_are_full = True
        for zone in sorted(sizes):
            ready, size = sizes[zone]
            _, state = zone_state(ready, size - ready, threshold)
            if state != ZoneState.FULL_DISRUPTION:
                all_are_full = False
            new_states[zone] = state
            self.zone_states.setdefault(zone, ZoneState.INITIAL)
        all_were_full = True
        for zone in sorted(self.zone_states):
            if zone not in sizes:
                del self.zone_states[zone]
                continue
            if self.zone_states[zone] != ZoneState.FULL_DISRUPTION:
                all_were_full = False
                break
        if all_are_full and all_were_full:
            return
        if all_are_full:
            log.info("Controller detected that all Nodes are not-Ready. Entering master disruption mode")
            self.resting.clear()  # every node is looked at again from the next pass
            for node in nodes():
                self._guard(self.mark_node_as_reachable, node)
            for zone in self.zone_states:
                self.tainters.swap_limiter(zone, 0)
            for zone in self.zone_states:
                self.zone_states[zone] = ZoneState.FULL_DISRUPTION
            return
        if all_were_full:
            log.info("Controller detected that some Nodes are Ready. Exiting master disruption mode")
            self.resting.clear()
            self.health.reset_probes([_name(n) for n in nodes()], self._clock.now())
            for zone in sorted(self.zone_states):
                self._set_limiter_in_zone(zone, sizes.get(zone, (0, 0))[1], new_states.get(zone))
                self.zone_states[zone] = new_states.get(zone, ZoneState.INITIAL)
            return
        for zone in sorted(self.zone_states):
            state = new_states.get(zone, ZoneState.INITIAL)
            if self.zone_states[zone] == state:
                continue
            log.info("Controller detected that zone %r is now in state %s", zone, state)
            self._set_limiter_in_zone(zone, sizes.get(zone, (0, 0))[1], state)
            self.zone_states[zone] = state

    def _set_limiter_in_zone(self, zone: str, size: int, state: ZoneState | None) -> None:
        if state is None:
            return
        qps = zone_qps(
            state,
            size,
            self.settings.node_eviction_rate,
            self.settings.secondary_node_eviction_rate,
            self.settings.large_cluster_size_threshold,
        )
        if qps is not None:
            self.tainters.swap_limiter(zone, qps)
