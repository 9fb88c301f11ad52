"""doNoExecuteTaintingPass of the node lifecycle controller (node_lifecycle_controller.go): every
NodeEvictionPeriod (100 ms) each zone's rate-limited queue is tried, and each node its limiter lets
through gets the NoExecute taint its Ready condition calls for. The pass is scheduled only at the
grid points where a queue has work its limiter accepts (at the others upstream's pass changes
nothing)."""

from __future__ import annotations

import logging
import math

from kubetaint.clock.base import Clock, Handle
from kubetaint.controllers.nodelifecycle.rate_limited_queue import (
    NODE_EVICTION_PERIOD,
    RateLimitedTimedQueue,
    TimedValue,
    to_nanos,
)
from kubetaint.controllers.nodelifecycle.taints import swap_node_controller_taint
from kubetaint.core.conditions import NOT_READY_TAINT_TEMPLATE, UNREACHABLE_TAINT_TEMPLATE, get_condition
from kubetaint.store.informer import Informer
from kubetaint.store.interface import Store

log = logging.getLogger(__name__)

#: A node missing its Ready condition is retried in the tainting queue after 50 ms.
MISSING_READY_RETRY_NS = 50_000_000
#: the tainting pass's grid step in microseconds
GRID_US = round(NODE_EVICTION_PERIOD * 1_000_000)


class NoExecuteTainting:
    """The controller's tainting pass and its timer (a mixin of NodeLifecycleController, which
    sets the attributes below)."""

    _store: Store
    _clock: Clock
    nodes: Informer
    #: zoneNoExecuteTainter: each zone's rate-limited queue of nodes to taint
    zone_no_execute_tainter: dict[str, RateLimitedTimedQueue]
    _running: bool
    #: the grid's origin (the controller's start), in microseconds
    _tainting_start_us: int
    #: the grid index of the pass scheduled (None: none), and of the last pass run
    _tainting_k: int | None
    _last_tainting_k: int
    _tainting_handle: Handle | None

    def do_no_execute_tainting_pass(self) -> None:
        """doNoExecuteTaintingPass: Try every zone queue (zones in name order), swapping in the
        taint each node's Ready condition calls for."""
        now_ns = to_nanos(self._clock.now())
        for zone in sorted(self.zone_no_execute_tainter):
            self.zone_no_execute_tainter[zone].try_(now_ns, self._taint_node)

    def _taint_node(self, value: TimedValue) -> tuple[bool, int]:
        """doNoExecuteTaintingPass's action for one queued node: (done, retry wait)."""
        node = self.nodes.get("", value.value)
        if node is None:
            log.info("Node %s no longer present in nodeLister", value.value)
            return True, 0
        ready = get_condition(node, "Ready")
        if ready is None:
            return False, MISSING_READY_RETRY_NS
        if ready.get("status") == "False":
            add, remove = NOT_READY_TAINT_TEMPLATE, UNREACHABLE_TAINT_TEMPLATE
        elif ready.get("status") == "Unknown":
            add, remove = UNREACHABLE_TAINT_TEMPLATE, NOT_READY_TAINT_TEMPLATE
        else:
            return True, 0
        return swap_node_controller_taint(self._store, self._clock, [add], [remove], node), 0

    def _tainting_grid_time(self, k: int) -> float:
        return (self._tainting_start_us + k * GRID_US) / 1_000_000

    def _first_tainting_index(self) -> int:
        """The first grid point at or after now that has not had its pass yet."""
        now_us = round(self._clock.now() * 1_000_000)
        return max(-(-(now_us - self._tainting_start_us) // GRID_US), self._last_tainting_k + 1)

    def _arm_tainting_pass(self) -> None:
        """Schedule the tainting pass at the first grid point where some zone queue has work its
        limiter accepts (or cancel it): upstream runs it at every grid point, and a pass at the
        others changes nothing (a refused TryAccept leaves the bucket untouched, an empty queue is
        not tried). A pass never runs twice at one grid point."""
        if not self._running:
            return
        k_min = self._first_tainting_index()
        now_ns = to_nanos(self._clock.now())
        best: int | None = None
        for queue in self.zone_no_execute_tainter.values():
            lower = queue.next_try(now_ns)
            if lower is None:
                continue
            k = max(k_min, math.ceil((lower // 1000 - self._tainting_start_us) / GRID_US))
            while not queue.limiter.would_accept(to_nanos(self._tainting_grid_time(k))):
                k += 1
            best = k if best is None else min(best, k)
        self._schedule_tainting_pass(best)

    def _schedule_tainting_pass(self, k: int | None) -> None:
        if k == self._tainting_k and (k is None or self._tainting_handle is not None):
            return
        if self._tainting_handle is not None:
            self._tainting_handle.cancel()
            self._tainting_handle = None
        self._tainting_k = k
        if k is not None:
            self._tainting_handle = self._clock.call_at(self._tainting_grid_time(k), self._tainting_tick)

    def _tainting_tick(self) -> None:
        self._tainting_handle = None
        self._tainting_k = None
        now_us = round(self._clock.now() * 1_000_000)
        self._last_tainting_k = (now_us - self._tainting_start_us) // GRID_US
        self.do_no_execute_tainting_pass()
        self._arm_tainting_pass()
