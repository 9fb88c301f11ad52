"""One hollow kubelet: registers its Node, renews its Lease, posts node status, admits the pods
bound to it and runs them with fake containers, finalises deleted pods, and evicts pods under
memory pressure. Faults (stop, not-ready, pressure, ...) drive what it reports.

Mirrors pkg/kubelet (kubelet_node_status.go, nodelease controller, kubelet.go HandlePodAdditions
and rejectPod, eviction/eviction_manager.go) and kubemark's hollow node. It owns no periodic
timers of its own except while under memory pressure: `HollowNodePool` drives `heartbeat()`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle, parse_time
from kubetaint.kubelet import container_events, pods, runtime
from kubetaint.kubelet.admission import admit
from kubetaint.kubelet.faults import KubeletFaults
from kubetaint.kubelet.lease import NodeLease
from kubetaint.kubelet.node_status import (
    CONDITION_EVENTS,
    NODE_CONDITIONS,
    NodeConfig,
    conditions_differ,
    desired_condition_status,
    initial_node,
    merge_conditions,
    reconcile_existing_node,
)
from kubetaint.kubelet.resources import StoredPodRequests
from kubetaint.kubelet.running import AdmittedPods
from kubetaint.store.events import EventQueue, EventRecorder
from kubetaint.store.interface import JSON, SetField, Store, until_failure

log = logging.getLogger(__name__)

_TERMINAL = ("Succeeded", "Failed")


@dataclass
class KubeletSettings:
    """Kubelet configuration fields (upstream names, seconds)."""

    node_lease_duration_seconds: int = 40
    #: nodelease renewInterval = 0.25 * leaseDuration.
    lease_renew_interval: float = 10.0
    node_status_update_frequency: float = 10.0
    node_status_report_frequency: float = 300.0
    eviction_monitoring_period: float = 10.0
    eviction_pressure_transition_period: float = 300.0
    #: Hollow containers stop at once, so a deleted pod is finalised at once (as kubemark does);
    #: True waits until metadata.deletionTimestamp (now + grace period) instead.
    honor_grace_period: bool = False
    record_events: bool = True
    #: True records the container events of the pods it starts and stops (Pulling, Pulled,
    #: Created, Started, Killing: kubelet.container_events), as `kubetaint up` does; the simulator
    #: leaves them out (a 150,000-pod run would write five events more per pod).
    container_events: bool = False
    enable_comparison_operators: bool = False


@dataclass(slots=True)
class StatusPost:
    """One status post of a kubelet: the node as read, its conditions before and after the
    merge, the (type, status) pairs that change, the instant and the statuses it posts."""

    kubelet: HollowKubelet
    node: JSON
    existing: list[JSON]
    conditions: list[JSON]
    changed: list[tuple[str, str]]
    now: float
    desired: dict[str, str]

    def field_write(self) -> SetField:
        """The write of this post alone (node status conditions replaced)."""
        return SetField("nodes", [self.node], NODE_CONDITIONS, self.conditions)


class HollowKubelet(KubeletFaults):
    """The kubelet of one hollow node (faults and node-pressure eviction: `KubeletFaults`)."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        config: NodeConfig,
        settings: KubeletSettings | None = None,
        recorder: EventRecorder | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.config = config
        self.settings = settings or KubeletSettings()
        self.name = config.name
        self._recorder = recorder
        self.registered = False
        self.stopped = False
        self._ready = True
        #: Active pressure conditions; change them through the fault methods (which forget the
        #: desired conditions remembered for heartbeats).
        self.pressures: dict[str, bool] = {}
        self._network_unavailable = False
        self._desired: dict[str, str] | None = None  # desired_conditions(), until a fault changes it
        self.memory_available = "0"
        self.last_status_post = float("-inf")
        self.lease = NodeLease(store, config.name, self.settings.node_lease_duration_seconds)
        #: called when what `quiet_renewal` answers may change (the pool's phase group sets it)
        self.heartbeat_changed: Callable[[], None] | None = None
        self._posted: dict[str, str] | None = None  # owned condition statuses last posted
        self._relief: dict[str, Handle] = {}
        self._eviction_timer: Handle | None = None
        self._pending: set[tuple[str, str]] = set()
        self._pending_handle: Handle | None = None
        self._finalisers: dict[tuple[str, str], Handle] = {}
        self._exits: dict[tuple[str, str], Handle] = {}  # run-to-completion pods' container exits
        self._ip_counter = 0
        self._pulled: set[str] = set()  # images this node has pulled (container events)
        #: Where container events are queued (the pool's), or None to write them at once.
        self.event_queue: EventQueue | None = None
        self._requests = StoredPodRequests()  # requests of the stored pods admission sums
        self._admitted = AdmittedPods(config.name, self._requests)  # key -> uid of pods running here

    # events ---------------------------------------------------------------------------------

    @property
    def recorder(self) -> EventRecorder:
        if self._recorder is None:
            self._recorder = EventRecorder(self.store, self.clock, "kubelet", self.name)
        return self._recorder

    def _event(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        if self.settings.record_events:
            self.recorder.event(obj, event_type, reason, message)

    def _container_events(
        self, pod: Mapping[str, Any], events: list[container_events.ContainerEvent]
    ) -> None:
        """Record `events` about `pod`: through the pool's `event_queue` when it has one (written
        with other kubelets' a moment later), else at once in one commit."""
        items = [(e.event_type, e.reason, e.message, e.field_path) for e in events]
        if self.event_queue is not None:
            self.event_queue.add(self.recorder, pod, items, "Pod")
        else:
            self.recorder.events([(pod, items)], kind="Pod")

    # registration, lease, status --------------------------------------------------------------

    def register(self) -> None:
        """registerWithAPIServer: create the Node (or adopt an existing one), then lease and status."""
        initial = initial_node(self.config)
        try:
            self.store.create("nodes", initial)
        except StatusError as err:
            if err.code != 409:
                log.warning("node %s: registration failed: %s", self.name, err.message)
                return
            self._reconcile_existing(initial)
        self._changed()
        self.registered = True
        self.renew_lease()
        self.post_status(force=True)

    def _reconcile_existing(self, initial: JSON) -> None:
        """tryRegisterWithAPIServer on AlreadyExists: the existing Node gets the kubelet's default
        labels and, when it has none, its capacity and allocatable (one write, as PatchNodeStatus)."""
        existing = self._node()
        reconciled = None if existing is None else reconcile_existing_node(initial, existing)
        if reconciled is None:
            return
        try:
            self.store.update("nodes", reconciled)
        except StatusError as err:
            log.info("node %s: reconciling the existing node failed: %s", self.name, err.message)

    def _node(self) -> JSON | None:
        try:
            return self.store.get("nodes", "", self.name)
        except StatusError:
            return None

    def _changed(self) -> None:
        """What `quiet_renewal` answers may change (the lease, the status posted or desired, a
        stop): tell `heartbeat_changed` first, which gives the kubelet back its last lease."""
        changed = self.heartbeat_changed
        if changed is not None:
            changed()

    def renew_lease(self) -> None:
        """The node lease controller's sync (see `kubetaint.kubelet.lease`)."""
        if self.stopped or not self.registered:
            return
        self._changed()
        self.lease.renew(self.clock.now())

    @property
    def ready(self) -> bool:
        return self._ready

    @ready.setter
    def ready(self, value: bool) -> None:
        self._changed()
        self._ready = value
        self._desired = None

    @property
    def network_unavailable(self) -> bool:
        return self._network_unavailable

    @network_unavailable.setter
    def network_unavailable(self, value: bool) -> None:
        self._changed()
        self._network_unavailable = value
        self._desired = None

    def desired_conditions(self) -> dict[str, str]:
        """The statuses of the conditions this kubelet owns (shared and read-only: remembered
        until a fault changes them, as every heartbeat asks)."""
        desired = self._desired
        if desired is None:
            desired = self._desired = desired_condition_status(
                self.ready, self.pressures, self.network_unavailable, self.config.report_network_condition
            )
        return desired

    def pressure_conditions(self) -> list[str]:
        return [c for c in ("MemoryPressure", "DiskPressure", "PIDPressure") if self.pressures.get(c)]

    def post_status(self, *, force: bool = False, attempts: int = 5) -> bool:
        """tryUpdateNodeStatus: post when forced, when a condition changed, or when the report
        frequency has passed since the last post. Retries on conflict (nodeStatusUpdateRetry 5;
        `attempts` left of them)."""
        for _ in range(attempts):
            post = self.status_post(force=force)
            if post is None:
                return False
            written, err = until_failure(self.store.commit((post.field_write(),)))
            if err is None:
                self.status_posted(post, written[0])
                return True
            if not self.post_conflicted(err):
                return False
        return False

    def status_post(self, *, force: bool = False) -> StatusPost | None:
        """The status post a heartbeat makes now (the node read, its conditions merged), or None
        when there is nothing to post (stopped, not registered, no node, nothing due)."""
        if self.stopped or not self.registered:
            return None
        node = self._node()
        if node is None:
            return None
        now = self.clock.now()
        desired = self.desired_conditions()
        status = node.get("status") or {}
        existing = list(status.get("conditions") or [])
        due = now - self.last_status_post >= self.settings.node_status_report_frequency
        if not (force or due or conditions_differ(existing, desired)):
            return None
        conditions, changed = merge_conditions(existing, desired, now)
        return StatusPost(self, node, existing, conditions, changed, now, desired)

    def status_posted(self, post: StatusPost, stored: JSON) -> None:
        """`post` was written (`stored`): remember it and record the condition changes."""
        self._changed()
        self.last_status_post = post.now
        self._posted = post.desired
        if not post.existing:
            return
        for ctype, cstatus in post.changed:
            reason = CONDITION_EVENTS.get((ctype, cstatus))
            if reason is not None:
                self._event(stored, "Normal", reason, f"Node {self.name} status is now: {reason}")

    def post_conflicted(self, err: StatusError) -> bool:
        """A status post failed with `err`: True when it is a conflict, which is retried."""
        if err.code == 409:
            return True
        log.info("node %s: status update failed: %s", self.name, err.message)
        return False

    def heartbeat(self) -> None:
        """One pass of the periodic loops the pool drives every 10 s: lease, then node status.

        The status is read and posted only when the report frequency has passed or the kubelet's
        own view changed since its last post (faults post at once, so this is rare)."""
        self.renew_lease()
        if self.status_due():
            self.post_status()

    def status_due(self) -> bool:
        """Whether the heartbeat posts the node status after renewing the lease."""
        now = self.clock.now()
        if now - self.last_status_post >= self.settings.node_status_report_frequency:
            return True
        posted = self._posted
        desired = self.desired_conditions()
        return posted is not desired and posted != desired

    def lease_renewal(self) -> JSON | None:
        """The heartbeat's lease update when it can be written in a batch with other kubelets'
        (None: `heartbeat()` must run instead, or nothing is renewed while stopped)."""
        if self.stopped or not self.registered:
            return None
        return self.lease.renewal(self.clock.now())

    def renewable_lease(self) -> JSON | None:
        """The lease the heartbeat renews when only its renewTime moves (`NodeLease.renewable`):
        a pool writes many such renewals at once; None: `lease_renewal` says what to write."""
        if self.stopped or not self.registered:
            return None
        return self.lease.renewable()

    def quiet_renewal(self, now: float) -> JSON | None:
        """The lease the heartbeat at `now` renews when that is all it does: `renewable_lease`
        when the node status is plainly not due (`status_due` is False: the report frequency
        has not passed and the conditions last posted are the ones desired, by identity). None
        says nothing: ask `renewable_lease` and `status_due`."""
        if self.stopped or not self.registered:
            return None
        if now - self.last_status_post >= self.settings.node_status_report_frequency:
            return None
        posted = self._posted
        if posted is None or posted is not self._desired:
            return None
        return self.lease.renewable_lease

    def lease_written(self, stored: JSON | None, err: StatusError | None = None) -> None:
        """The outcome of a batched `lease_renewal` (as `renew_lease` records it)."""
        self._changed()
        if stored is not None:
            self.lease.renewed(stored)
        elif err is not None:
            self.lease.failed(err, self.clock.now())

    # pods -------------------------------------------------------------------------------------

    def use_pod_view(self, enabled: bool) -> None:
        """Keep the pods bound here from `observe_pod`/`forget_pod` instead of reading them back:
        only where every later change of them is observed before its write returns (the pool's)."""
        self._admitted.use_view(enabled)

    def observe_pod(self, pod: JSON) -> None:
        """A stored pod bound here was added or changed: remember it, and look at it soon, unless
        its sync would change nothing (running as admitted: a later change is observed itself)."""
        meta = pod.get("metadata") or {}
        space, name = meta.get("namespace"), meta.get("name")
        if type(space) is str and type(name) is str:  # as stored: what str(x or "") makes of it
            key = (space, name)
        else:
            key = (str(space or ""), str(name or ""))
        admitted = self._admitted
        admitted_uid = admitted.uids.get(key)  # admitted.get(key)
        view = admitted.view
        if view is not None:
            view.observe(key, pod, admitted_uid)
            if (
                admitted_uid is not None
                and admitted_uid == meta.get("uid")
                and not meta.get("deletionTimestamp")
                and (pod.get("status") or {}).get("phase") not in _TERMINAL
            ):
                return
        self._pending.add(key)  # _enqueue_key(key)
        if self._pending_handle is None:
            self._pending_handle = self.clock.call_soon(self._process_pending)

    def enqueue_pod(self, pod: Mapping[str, Any]) -> None:
        """Record that a pod bound here changed; the work runs from the clock (never in handlers)."""
        meta = pod.get("metadata") or {}
        self._enqueue_key((str(meta.get("namespace") or ""), str(meta.get("name") or "")))

    def _enqueue_key(self, key: tuple[str, str]) -> None:
        self._pending.add(key)
        if self._pending_handle is None:
            self._pending_handle = self.clock.call_soon(self._process_pending)

    def forget_pod(self, pod: Mapping[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        self._admitted.deleted(key)
        if self._admitted.get(key) == meta.get("uid"):
            self._admitted.drop(key)
        for timers in (self._finalisers, self._exits):
            handle = timers.pop(key, None)
            if handle is not None:
                handle.cancel()

    def _process_pending(self) -> None:
        self._pending_handle = None
        if self.stopped or not self.registered:
            return  # picked up again by recover()
        batch = self._admitted.read(self.store, self._pending)
        self._pending.clear()
        if len(batch) > 1 and self._admitted.start_running(batch):
            return  # (the pods already running here at a start, admitted at once)
        if len(batch) > 1:  # HandlePodAdditions admits in creation order.
            batch.sort(key=lambda p: (p["metadata"].get("creationTimestamp") or "", p["metadata"]["name"]))
        for pod in batch:
            if (pod.get("spec") or {}).get("nodeName") == self.name:
                self._sync_pod(pod)

    def _sync_pod(self, pod: JSON) -> None:
        meta = pod["metadata"]
        key = (str(meta.get("namespace") or ""), str(meta["name"]))
        uid = meta.get("uid")
        if meta.get("deletionTimestamp"):
            self._schedule_finalise(pod, key)
            return
        phase = (pod.get("status") or {}).get("phase")
        if phase in _TERMINAL:
            self._admitted.drop(key)
            return
        if self._admitted.get(key) == uid:
            return
        if phase == "Running":  # bound and running before this kubelet started (a snapshot)
            self._admitted.set(key, str(uid))
            self._schedule_exit(pod, key)
            return
        self._admit(pod, key)

    def running_pods(self) -> list[JSON]:
        """Admitted, non-terminal pods on this node (the kubelet's active pods)."""
        listed = self.store.list("pods", field_selector=f"spec.nodeName={self.name}").items
        result = []
        for pod in listed:
            meta = pod["metadata"]
            key = (str(meta.get("namespace") or ""), str(meta["name"]))
            if (
                self._admitted.get(key) == meta.get("uid")
                and (pod.get("status") or {}).get("phase") not in _TERMINAL
            ):
                result.append(pod)
        return result

    def _admit(self, pod: JSON, key: tuple[str, str]) -> None:
        node = self._node()
        if node is None:
            return
        result = admit(
            pod,
            node,
            self._admitted.others(self.store, key, pod["metadata"].get("uid")),
            self.pressure_conditions(),
            enable_comparison=self.settings.enable_comparison_operators,
            requests_of=self._requests,
        )
        if result.admit:
            status = pods.running_status(pod, self._host_ip(), self._pod_ip(pod), self.clock.now())
            if self._write_status(pod, status):
                self._admitted.set(key, str(pod["metadata"].get("uid")))
                if self.settings.container_events and self.settings.record_events:
                    self._container_events(pod, container_events.started(pod, self._pulled))
                self._schedule_exit({**pod, "status": status}, key)
            return
        if self._write_status(pod, pods.rejected_status(pod, result.reason, result.message)):
            self._event(pod, "Warning", result.reason, result.message)

    def _schedule_exit(self, pod: JSON, key: tuple[str, str], when: float | None = None) -> None:
        """Let a run-to-completion pod's containers exit when `kubetaint.kubelet.runtime` says."""
        when = runtime.exit_time(pod) if when is None else when
        if when is None:
            return
        uid = str(pod["metadata"].get("uid") or "")
        pending = self._exits.pop(key, None)
        if pending is not None:
            pending.cancel()
        self._exits[key] = self.clock.call_at(max(when, self.clock.now()), lambda: self._exit(key, uid))

    def _exit(self, key: tuple[str, str], uid: str) -> None:
        """The containers of a running run-to-completion pod exit (or, waiting in CrashLoopBackOff,
        restart); a stopped kubelet writes nothing and looks again after a status period."""
        self._exits.pop(key, None)
        try:
            pod = self.store.get("pods", key[0], key[1])
        except StatusError:
            return
        meta = pod["metadata"]
        if (
            meta.get("uid") != uid
            or meta.get("deletionTimestamp")
            or (pod.get("spec") or {}).get("nodeName") != self.name
        ):
            return
        if (pod.get("status") or {}).get("phase") != "Running":
            return
        now = self.clock.now()
        if self.stopped:
            self._schedule_exit(pod, key, now + self.settings.node_status_update_frequency)
            return
        events = self.settings.container_events and self.settings.record_events
        if runtime.started_at(pod) is None:  # waiting in CrashLoopBackOff: the restart is due
            status = runtime.restarted_status(pod, now)
            if self._write_status(pod, status):
                if events:
                    self._container_events(pod, container_events.restarted(pod, self._pulled))
                self._schedule_exit({**pod, "status": status}, key)
            return
        status = runtime.exited_status(pod, now)
        if self._write_status(pod, status) and status["phase"] == "Running":
            if events:
                self._container_events(pod, container_events.backing_off(pod))
            restarts = runtime.restart_count(pod)
            self._schedule_exit(pod, key, now + runtime.restart_backoff(restarts))

    def _write_status(self, pod: JSON, status: JSON) -> bool:
        try:
            self.store.update("pods", {**pod, "status": status})
            return True
        except StatusError as err:
            if err.code == 409:
                self.enqueue_pod(pod)  # the status manager retries with the latest object
            return False

    def _host_ip(self) -> str:
        return self.config.internal_ip

    def _pod_ip(self, pod: Mapping[str, Any]) -> str:
        if (pod.get("spec") or {}).get("hostNetwork"):
            return self._host_ip()
        cidr = self.config.pod_cidr
        if not cidr:
            return ""
        base = cidr.split("/")[0].rsplit(".", 1)[0]
        self._ip_counter = self._ip_counter % 254 + 1
        return f"{base}.{self._ip_counter}"

    def _schedule_finalise(self, pod: JSON, key: tuple[str, str]) -> None:
        if key in self._finalisers:
            return
        if (
            self.settings.container_events
            and self.settings.record_events
            and (pod.get("status") or {}).get("phase") == "Running"
            and self._admitted.get(key) == pod["metadata"].get("uid")
        ):
            self._container_events(pod, container_events.killed(pod))
        when = self.clock.now()
        if self.settings.honor_grace_period:
            when = max(when, parse_time(str(pod["metadata"]["deletionTimestamp"])))
        uid = str(pod["metadata"].get("uid") or "")
        self._finalisers[key] = self.clock.call_at(when, lambda: self._finalise(key, uid))

    def _finalise(self, key: tuple[str, str], uid: str) -> None:
        """The status manager's final delete (grace period 0, UID precondition) once stopped."""
        self._finalisers.pop(key, None)
        if self.stopped:
            return
        with contextlib.suppress(StatusError):
            self._final_status(key, uid)
            self.store.delete("pods", key[0], key[1], uid=uid or None, grace_period_seconds=0)
        self._admitted.drop(key)

    def _final_status(self, key: tuple[str, str], uid: str) -> None:
        """The status manager's last status update before its delete, for a pod with finalizers
        (which outlives the delete): containers stopped, a terminal phase. A pod without
        finalizers is removed by the delete at once, so its last status is not written."""
        pod = self.store.get("pods", key[0], key[1])
        meta = pod["metadata"]
        if not meta.get("finalizers") or (uid and meta.get("uid") != uid):
            return
        if runtime.runs_to_completion(pod) and (pod.get("status") or {}).get("phase") == "Running":
            status = runtime.killed_status(pod, self.clock.now())
        else:
            status = pods.stopped_status(pod, self.clock.now())
        if status != pod.get("status"):
            self.store.update("pods", {**pod, "status": status})

    def resync_pods(
        self, bound: list[JSON] | None = None, *, keyed: list[tuple[tuple[str, str], JSON]] | None = None
    ) -> None:
        """Look at every pod bound here again (after a restart or a recovery): those the store
        lists by spec.nodeName, or `bound` when the caller has just read exactly that list, or
        `keyed`: that list as (key, pod) pairs, each key the pod's (namespace, name)."""
        view = self._admitted.view
        if keyed is not None:
            if view is not None and not self._admitted.uids:
                if keyed:
                    self._pending.update(view.observe_unadmitted_keyed(keyed))
                    self._process_soon()
                return
            bound = [pod for _, pod in keyed]
        if bound is None:
            bound = self.store.list("pods", field_selector=f"spec.nodeName={self.name}").items
        if view is not None and not self._admitted.uids and bound:
            # observe_pod of each when none is admitted here (a start): each is remembered and
            # looked at soon
            self._pending.update(view.observe_unadmitted(bound))
            self._process_soon()
            return
        for pod in bound:
            self.observe_pod(pod)

    def _process_soon(self) -> None:
        if self._pending_handle is None:
            self._pending_handle = self.clock.call_soon(self._process_pending)
