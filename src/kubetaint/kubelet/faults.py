"""A hollow kubelet's faults (stop, not-ready, recover, node pressure, network, relieve) and its
node-pressure eviction loop, as a part of `HollowKubelet`.

Mirrors pkg/kubelet/eviction/eviction_manager.go (synchronize: one eviction per monitoring period
while the memory threshold is met, critical pods skipped, the pressure transition period before a
condition clears) and the kubelet's reaction to its runtime going down (Ready=False).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubetaint.clock.base import Clock, Handle
from kubetaint.kubelet import eviction, pods
from kubetaint.kubelet.admission import is_critical_pod
from kubetaint.kubelet.running import AdmittedPods
from kubetaint.store.interface import JSON

if TYPE_CHECKING:
    from kubetaint.kubelet.kubelet import KubeletSettings


class KubeletFaults:
    """Faults and node-pressure eviction; the state they use lives on `HollowKubelet`."""

    clock: Clock
    settings: KubeletSettings
    stopped: bool
    ready: bool
    network_unavailable: bool
    pressures: dict[str, bool]
    memory_available: str
    _desired: dict[str, str] | None
    _relief: dict[str, Handle]
    _eviction_timer: Handle | None
    _admitted: AdmittedPods

    if TYPE_CHECKING:

        def post_status(self, *, force: bool = False) -> bool: ...
        def _changed(self) -> None: ...
        def renew_lease(self) -> None: ...
        def resync_pods(self) -> None: ...
        def running_pods(self) -> list[JSON]: ...
        def _node(self) -> JSON | None: ...
        def _event(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> None: ...
        def _write_status(self, pod: JSON, status: JSON) -> bool: ...

    # node-pressure eviction ---------------------------------------------------------------------

    def _start_eviction_loop(self) -> None:
        if self._eviction_timer is None:
            self._eviction_timer = self.clock.call_soon(self._eviction_pass)

    def _eviction_pass(self) -> None:
        """synchronize(): while the memory threshold is met, evict the top-ranked pod (one per pass)."""
        self._eviction_timer = None
        if not self.pressures.get("MemoryPressure") or "MemoryPressure" in self._relief:
            return
        self._eviction_timer = self.clock.call_later(
            self.settings.eviction_monitoring_period, self._eviction_pass
        )
        if self.stopped:
            return
        candidates = [p for p in self.running_pods() if not p["metadata"].get("deletionTimestamp")]
        node = self._node()
        if node is not None:
            self._event(node, "Warning", "EvictionThresholdMet", "Attempting to reclaim memory")
        for pod in eviction.rank_memory_pressure(candidates):
            if is_critical_pod(pod):
                continue  # evictPod refuses critical pods; the next ranked pod is tried
            if self._evict(dict(pod)):
                return

    def _evict(self, pod: JSON) -> bool:
        message = eviction.memory_eviction_message(pod, self.memory_available)
        if not self._write_status(pod, pods.evicted_status(pod, message, self.clock.now())):
            return False
        meta = pod["metadata"]
        self._admitted.drop((str(meta.get("namespace") or ""), str(meta["name"])))
        self._event(pod, "Warning", "Evicted", message)
        return True

    # faults -------------------------------------------------------------------------------------

    def stop(self) -> None:
        """Heartbeats stop: no lease renewals, no status posts, pods left as they are."""
        self._changed()
        self.stopped = True

    def not_ready(self) -> None:
        """The runtime goes down: Ready=False (KubeletNotReady), posted at once; leases continue."""
        self.ready = False
        self.post_status(force=True)

    def recover(self) -> None:
        """Undo stop and not-ready: renew, post Ready=True at once, and look at every pod again."""
        was_stopped = self.stopped
        self._changed()
        self.stopped = False
        self.ready = True
        self.renew_lease()
        self.post_status(force=True)
        if was_stopped:
            self.resync_pods()
            if self.pressures.get("MemoryPressure"):
                self._start_eviction_loop()

    def _set_pressure(self, condition: str) -> None:
        handle = self._relief.pop(condition, None)
        if handle is not None:
            handle.cancel()
        self._changed()
        self.pressures[condition] = True
        self._desired = None
        self.post_status(force=True)

    def memory_pressure(self, available: str = "0") -> None:
        """memory.available falls below the hard threshold: MemoryPressure, evictions every 10 s."""
        self.memory_available = available
        self._set_pressure("MemoryPressure")
        self._start_eviction_loop()

    def disk_pressure(self) -> None:
        self._set_pressure("DiskPressure")

    def pid_pressure(self) -> None:
        self._set_pressure("PIDPressure")

    def network_unavailable_fault(self) -> None:
        self.network_unavailable = True
        self.post_status(force=True)

    def relieve(self) -> None:
        """Signals recover: evictions stop now; pressure conditions clear after the
        evictionPressureTransitionPeriod (5 m); the network comes back at once."""
        if self.network_unavailable:
            self.network_unavailable = False
            self.post_status(force=True)
        for condition, active in list(self.pressures.items()):
            if active and condition not in self._relief:
                delay = self.settings.eviction_pressure_transition_period
                self._relief[condition] = self.clock.call_later(
                    delay, functools.partial(self._clear, condition)
                )
        if self._eviction_timer is not None:
            self._eviction_timer.cancel()
            self._eviction_timer = None

    def _clear(self, condition: str) -> None:
        self._relief.pop(condition, None)
        self._changed()
        self.pressures[condition] = False
        self._desired = None
        self.post_status(force=True)
