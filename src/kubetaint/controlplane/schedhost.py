"""The scheduler's host on the injected clock: feeds informer events to the Scheduler, runs
scheduling cycles whenever pods are active, and applies each ScheduleResult through the registry
(binding, Scheduled / FailedScheduling events, the PodScheduled condition, nominatedNodeName,
preemption victims) — what kube-scheduler's schedule_one.go does around the algorithm.

A binding the API server refuses (a store that cannot write, a conflict) sends the pod back to
the queue with its backoff (handleBindingCycleError), so a binding that keeps failing is retried
1, 2, 4, 8 then every 10 seconds, never in a loop. On a live server's clock the cycles run in
time slices (`clock.slices`): requests are served between them."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle, format_time
from kubetaint.clock.slices import slices_of
from kubetaint.core.conditions import with_disruption_target
from kubetaint.registry import Registry
from kubetaint.registry.binding import bind
from kubetaint.registry.managedfields import ManagerWrites
from kubetaint.scheduler.scheduler import Scheduler, ScheduleResult
from kubetaint.store.events_adapter import EventsRecorder
from kubetaint.store.informer import EventHandlers, Informer

log = logging.getLogger(__name__)

#: Scheduling cycles run after other work due at the same instant (controllers, kubelets).
SCHEDULE_PRIORITY = 10
#: The storage resources whose informers the scheduler follows (its volume plugins' listers).
STORAGE_RESOURCES = (
    "persistentvolumeclaims",
    "persistentvolumes",
    "storageclasses.storage.k8s.io",
    "csinodes.storage.k8s.io",
    "csidrivers.storage.k8s.io",
)
#: The Warning event naming a pod's fields the scheduler does not model (once per pod).
NOT_MODELLED = "NotModelled"
#: The action of each event reason the scheduler records (schedule_one.go's Eventf calls).
_ACTIONS = {"Scheduled": "Binding", "FailedScheduling": "Scheduling", NOT_MODELLED: "Scheduling"}


class SchedulerHost:
    """Wires a Scheduler to informers and writes its decisions through the registry."""

    def __init__(
        self,
        registry: Registry,
        clock: Clock,
        scheduler_factory: Any,
        *,
        nodes: Informer,
        pods: Informer,
        pdbs: Informer,
        recorder: EventsRecorder,
        namespaces: Informer | None = None,
        replica_sets: Informer | None = None,
        stateful_sets: Informer | None = None,
        services: Informer | None = None,
        storage: dict[str, Informer] | None = None,
        writes: Registry | ManagerWrites | None = None,
    ) -> None:
        self.registry = registry
        #: The scheduler's own writes (status, preemption, PreBind): the registry, or its view
        #: recording kube-scheduler's managedFields (the binding itself records none, as upstream).
        self.writes = writes if writes is not None else registry
        self.clock = clock
        self._slices = slices_of(clock)
        self.recorder = recorder
        self._handle: Handle | None = None
        #: False on a standby replica (`up --leader-elect` without the kube-scheduler Lease): the
        #: cache and queue follow the informers, but no scheduling cycle runs (sched.Run is not called).
        self.leading = True
        self.scheduler: Scheduler = scheduler_factory(self._on_active)
        #: the pods (uid) whose NotModelled warning was recorded
        self._warned: set[str] = set()
        for warning in self.scheduler.warnings:
            log.warning("scheduler configuration: %s", warning)
        nodes.add_handlers(
            EventHandlers(
                on_add=self.scheduler.add_node,
                on_update=lambda old, new: self.scheduler.update_node(new, old),
                on_delete=self.scheduler.remove_node,
            )
        )
        pods.add_handlers(self.scheduler.pods_changed)
        s = self.scheduler
        _follow(pdbs, s.add_pdb, s.update_pdb, s.remove_pdb)
        # InterPodAffinity's namespaceSelector; PodTopologySpread's default selector
        for informer, add, update, remove in (
            (namespaces, s.add_namespace, s.update_namespace, s.remove_namespace),
            (replica_sets, s.add_replica_set, s.update_replica_set, s.remove_replica_set),
            (stateful_sets, s.add_stateful_set, s.update_stateful_set, s.remove_stateful_set),
            (services, s.add_service, s.update_service, s.remove_service),
        ):
            if informer is not None:
                _follow(informer, add, update, remove)
        # the volume plugins' claims, volumes, classes, CSINodes and CSIDrivers
        storage_handlers = {
            "persistentvolumeclaims": (s.add_pvc, s.update_pvc, s.remove_pvc),
            "persistentvolumes": (s.add_pv, s.update_pv, s.remove_pv),
            "storageclasses.storage.k8s.io": (
                s.add_storage_class,
                s.update_storage_class,
                s.remove_storage_class,
            ),
            "csinodes.storage.k8s.io": (s.add_csi_node, s.update_csi_node, s.remove_csi_node),
            "csidrivers.storage.k8s.io": (s.add_csi_driver, s.update_csi_driver, s.remove_csi_driver),
        }
        for resource, informer in (storage or {}).items():
            add, update, remove = storage_handlers[resource]
            _follow(informer, add, update, remove)

    def _on_active(self) -> None:
        if self._handle is None and self.leading:
            self._handle = self.clock.call_soon(self.run, priority=SCHEDULE_PRIORITY)

    def lead(self) -> None:
        """Start scheduling (the Lease was acquired): every pod queued meanwhile gets its cycle."""
        self.leading = True
        self._on_active()

    def stop(self) -> None:
        """Cancel a pending scheduling cycle."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def run(self) -> None:
        """Schedule every active pod now (one cycle each, in queue order); on a clock with time
        slices, those of one slice, the rest in a later callback."""
        self._handle = None
        while True:
            result = self.scheduler.schedule_one()
            if result is None:
                return
            self.apply(result)
            if self._slices is not None and self._slices.slice_over():
                self._on_active()
                return

    # applying results ---------------------------------------------------------------------------

    def apply(self, result: ScheduleResult) -> None:
        pod = result.pod
        meta = pod.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        if result.warnings:
            self._warn(pod, result.warnings)
        if result.node is not None:
            try:
                for resource, obj in result.prebind_writes:  # PreBind (VolumeBinding's bindAPIUpdate)
                    self.writes.update(resource, obj)
                bind(self.registry, namespace, name, result.node)
            except StatusError as err:
                log.warning("binding pod %s/%s to %s failed: %s", namespace, name, result.node, err.message)
                result = self.scheduler.binding_failed(result, err.message, self._current(namespace, name))
            else:
                self._event(pod, result)  # (the assumed pod: its resourceVersion before the binding)
                return
        for victim, victim_event in zip(result.victims, result.victim_events, strict=False):
            self._preempt(victim, victim_event, pod)
        # handleSchedulingFailure records the event whether or not the pod is still there; only its
        # status update needs the pod ("Pod doesn't exist in informer cache")
        self._event(pod, result)  # (the pod its cycle scheduled)
        current = self._current(namespace, name)
        if current is None:
            log.info("pod %s/%s doesn't exist: its scheduling failure is not written to it", namespace, name)
            return
        self._update_status(current, result)

    def _event(self, pod: Mapping[str, Any], result: ScheduleResult) -> None:
        action = _ACTIONS.get(result.reason, "Scheduling")
        self.recorder.event(pod, result.event_type, result.reason, result.message, kind="Pod", action=action)

    def _warn(self, pod: Mapping[str, Any], warnings: list[str]) -> None:
        """A Warning event NotModelled on the pod, once, naming what its cycles did not judge."""
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        if uid in self._warned:
            return
        if len(self._warned) > 100_000:
            self._warned.clear()
        self._warned.add(uid)
        self.recorder.event(
            pod, "Warning", NOT_MODELLED, "; ".join(warnings), kind="Pod", action="Scheduling"
        )

    def _current(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self.registry.get("pods", namespace, name)
        except StatusError:
            return None

    def _update_status(self, pod: Mapping[str, Any], result: ScheduleResult) -> None:
        """updatePod: PodScheduled=False (and nominatedNodeName) when they changed."""
        status = dict(pod.get("status") or {})
        conditions = list(status.get("conditions") or [])
        changed = False
        if result.condition is not None:
            old = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
            wanted = dict(result.condition)
            if old is None or any(old.get(k) != v for k, v in wanted.items()):
                transition = format_time(self.clock.now())
                if old is not None and old.get("status") == wanted["status"]:
                    transition = old.get("lastTransitionTime") or transition
                condition = {
                    "type": "PodScheduled",
                    "status": wanted["status"],
                    "lastProbeTime": None,
                    "lastTransitionTime": transition,
                    "reason": wanted.get("reason"),
                    "message": wanted.get("message"),
                }
                conditions = [c for c in conditions if c.get("type") != "PodScheduled"] + [condition]
                changed = True
        if result.nominated_node is not None and status.get("nominatedNodeName", "") != result.nominated_node:
            if result.nominated_node:
                status["nominatedNodeName"] = result.nominated_node
            else:
                status.pop("nominatedNodeName", None)
            changed = True
        if not changed:
            return
        status["conditions"] = conditions
        status.setdefault("phase", "Pending")
        try:
            self.writes.update_status("pods", {**pod, "status": status})
        except StatusError as err:
            log.debug("pod %s: status update failed: %s", pod.get("metadata", {}).get("name"), err.message)

    def _preempt(
        self, victim: Mapping[str, Any], event: Mapping[str, str], preemptor: Mapping[str, Any]
    ) -> None:
        """PrepareCandidate: DisruptionTarget=True (PreemptionByScheduler), delete, event Preempted
        (action Preempting, related: the preemptor)."""
        meta = victim.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        current = self._current(namespace, name)
        if current is None:
            return
        self.recorder.event(
            current,
            event.get("type", "Normal"),
            event["reason"],
            event["message"],
            kind="Pod",
            action="Preempting",
            related=preemptor,
            related_kind="Pod",
        )
        status = with_disruption_target(
            current.get("status"),
            "PreemptionByScheduler",
            f"{self.recorder.component}: preempting to accommodate a higher priority pod",
            format_time(self.clock.now()),
        )
        try:
            self.writes.update_status("pods", {**current, "status": status})
            self.writes.delete("pods", namespace, name)
        except StatusError as err:
            log.debug("preemption of %s/%s failed: %s", namespace, name, err.message)


def _follow(
    informer: Informer,
    add: Callable[[dict[str, Any]], None],
    update: Callable[[dict[str, Any]], None],
    remove: Callable[[dict[str, Any]], None],
) -> None:
    """The scheduler's cache follows `informer`'s objects (an update hands over the new object)."""

    def updated(old: dict[str, Any], new: dict[str, Any]) -> None:
        update(new)

    informer.add_handlers(EventHandlers(on_add=add, on_update=updated, on_delete=remove))
