"""Many hollow kubelets on one clock, cheaply: one pod informer routes pod changes by
spec.nodeName, and nodes whose heartbeats share a phase share one 10 s timer, so 5,000 nodes
cost a handful of timers while each node still renews its Lease exactly every 10 s.

Mirrors kubemark's hollow-node fleet. Fault names are DESIGN.md's scenario `fault` values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubetaint.clock.base import Clock, Handle
from kubetaint.kubelet.kubelet import HollowKubelet, KubeletSettings
from kubetaint.kubelet.lease import LEASE_RESOURCE
from kubetaint.kubelet.node_status import NodeConfig
from kubetaint.kubelet.running import delivers_synchronously
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import JSON, Store, update_many

FAULTS = (
    "stop",
    "not-ready",
    "recover",
    "memory-pressure",
    "disk-pressure",
    "pid-pressure",
    "network-unavailable",
    "relieve",
)


class _PhaseGroup:
    """Kubelets whose heartbeat falls at the same offset within the interval."""

    __slots__ = ("handle", "members")

    def __init__(self) -> None:
        self.members: dict[str, HollowKubelet] = {}
        self.handle: Handle | None = None


class HollowNodePool:
    """Hollow kubelets for many nodes sharing one pod informer and phase-grouped heartbeat timers.

    A `pod_informer` given (unfiltered, over the same store) is started before `start()`, as the
    control plane starts its informers before its kubelets; without one the pool makes its own."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        configs: Iterable[NodeConfig] = (),
        settings: KubeletSettings | None = None,
        pod_informer: Informer | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.settings = settings or KubeletSettings()
        self.kubelets: dict[str, HollowKubelet] = {}
        self._informer = pod_informer or Informer(store, "pods")
        self._owns_informer = pod_informer is None
        self._groups: dict[float, _PhaseGroup] = {}
        self._phase_of: dict[str, float] = {}
        self.started = False
        #: Kubelets keep the pods routed to them instead of reading them back: every pod change
        #: reaches the informer before its write returns (see `kubelet.running`).
        self._views = False
        for config in configs:
            self.add_node(config)

    # membership --------------------------------------------------------------------------------

    def add_node(self, config: NodeConfig) -> HollowKubelet:
        """Add a hollow node; registered at once when the pool is already running."""
        kubelet = HollowKubelet(self.store, self.clock, config, self.settings)
        self.kubelets[config.name] = kubelet
        if self.started:
            kubelet.use_pod_view(self._views)  # its pods are listed at start, then routed here
            self._start_kubelet(kubelet)
        return kubelet

    def __getitem__(self, name: str) -> HollowKubelet:
        return self.kubelets[name]

    def __len__(self) -> int:
        return len(self.kubelets)

    # lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Register every node (Node, Lease, status) now and start the heartbeats and pod handling."""
        if self.started:
            return
        self.started = True
        # Each kubelet's view starts from its listing of the pods bound to it (resync_pods), then
        # sees every change through the pod informer (running already, or started below).
        self._views = delivers_synchronously(self.store)
        for kubelet in self.kubelets.values():
            kubelet.use_pod_view(self._views)
            self._start_kubelet(kubelet)
        self._informer.add_handlers(
            EventHandlers(on_add=self._on_pod, on_update=self._on_pod_update, on_delete=self._on_pod_delete)
        )
        if self._owns_informer:
            self._informer.start()

    def shutdown(self) -> None:
        """Cancel every timer (the hollow nodes simply vanish, as after `kill`)."""
        for group in self._groups.values():
            if group.handle is not None:
                group.handle.cancel()
        self._groups.clear()
        self._phase_of.clear()
        if self._owns_informer:
            self._informer.stop()
        self.started = False
        self._views = False  # changes may go unobserved from now on
        for kubelet in self.kubelets.values():
            kubelet.use_pod_view(False)

    def _start_kubelet(self, kubelet: HollowKubelet) -> None:
        kubelet.register()
        self._join_group(kubelet)
        kubelet.resync_pods()

    def _join_group(self, kubelet: HollowKubelet) -> None:
        interval = self.settings.lease_renew_interval
        phase = round(self.clock.now() % interval, 6)
        self._leave_group(kubelet.name)
        group = self._groups.get(phase)
        if group is None:
            group = self._groups[phase] = _PhaseGroup()
            group.handle = self.clock.call_later(interval, lambda: self._beat(phase))
        group.members[kubelet.name] = kubelet
        self._phase_of[kubelet.name] = phase

    def _leave_group(self, name: str) -> None:
        phase = self._phase_of.pop(name, None)
        if phase is None:
            return
        group = self._groups.get(phase)
        if group is None:
            return
        group.members.pop(name, None)
        if not group.members:
            if group.handle is not None:
                group.handle.cancel()
            del self._groups[phase]

    def _beat(self, phase: float) -> None:
        group = self._groups.get(phase)
        if group is None:
            return
        group.handle = self.clock.call_later(self.settings.lease_renew_interval, lambda: self._beat(phase))
        # Every member's heartbeat in turn; consecutive lease renewals are written as one batch
        # (the same writes in the same order), cut short by any other write.
        batch: list[tuple[HollowKubelet, JSON]] = []
        for kubelet in list(group.members.values()):
            renewal = kubelet.lease_renewal()
            if renewal is None:
                self._write_renewals(batch)
                kubelet.heartbeat()
                continue
            batch.append((kubelet, renewal))
            if kubelet.status_due():
                self._write_renewals(batch)
                kubelet.post_status()
        self._write_renewals(batch)

    def _write_renewals(self, batch: list[tuple[HollowKubelet, JSON]]) -> None:
        """Write the batched lease renewals (a failed one retried by its kubelet before the rest)."""
        while batch:
            stored, err = update_many(self.store, LEASE_RESOURCE, [renewal for _, renewal in batch])
            for (kubelet, _), lease in zip(batch, stored, strict=False):
                kubelet.lease_written(lease)
            if err is None:
                break
            batch[len(stored)][0].lease_written(None, err)
            del batch[: len(stored) + 1]
        batch.clear()

    # pod routing ---------------------------------------------------------------------------------

    def _route(self, pod: Mapping[str, Any]) -> HollowKubelet | None:
        node = (pod.get("spec") or {}).get("nodeName")
        return self.kubelets.get(node) if node else None

    def _on_pod(self, pod: dict[str, Any]) -> None:
        kubelet = self._route(pod)
        if kubelet is not None:
            kubelet.observe_pod(pod)

    def _on_pod_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        moved_from = self._route(old)
        if moved_from is not None and moved_from is not self._route(new):
            # spec.nodeName never changes once set; were it to, the old node's kubelet would no
            # longer see the pod's changes: it reads the store from now on
            moved_from.use_pod_view(False)
        self._on_pod(new)

    def _on_pod_delete(self, pod: dict[str, Any]) -> None:
        kubelet = self._route(pod)
        if kubelet is not None:
            kubelet.forget_pod(pod)

    # faults --------------------------------------------------------------------------------------

    def fault(self, names: Iterable[str], fault: str, **options: str) -> None:
        """Apply a scenario fault (`stop`, `not-ready`, `recover`, `memory-pressure`, `disk-pressure`,
        `pid-pressure`, `network-unavailable`, `relieve`) to the named nodes, in the given order."""
        if fault not in FAULTS:
            raise ValueError(
                f'unknown fault "{fault}": supported values: ' + ", ".join(f'"{f}"' for f in FAULTS)
            )
        targets = [self.kubelets[name] for name in names if name in self.kubelets]
        for kubelet in targets:
            self._apply(kubelet, fault, options)

    def _apply(self, kubelet: HollowKubelet, fault: str, options: Mapping[str, str]) -> None:
        if fault == "stop":
            kubelet.stop()
            self._leave_group(kubelet.name)
            return
        if fault == "recover":
            rejoin = kubelet.stopped
            kubelet.recover()
            if rejoin:
                self._join_group(kubelet)
            return
        actions: dict[str, Callable[[], None]] = {
            "not-ready": kubelet.not_ready,
            "memory-pressure": lambda: kubelet.memory_pressure(options.get("available", "0")),
            "disk-pressure": kubelet.disk_pressure,
            "pid-pressure": kubelet.pid_pressure,
            "network-unavailable": kubelet.network_unavailable_fault,
            "relieve": kubelet.relieve,
        }
        actions[fault]()
