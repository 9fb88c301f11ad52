"""The scheduler's informer event handlers (pkg/scheduler/eventhandlers.go): nodes, pods, PDBs,
namespaces and ReplicaSets into the cache, the listers and the scheduling queue, with the cluster
events that move unschedulable pods. `Scheduler` takes them as its own methods."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubetaint.scheduler.cache import Cache
from kubetaint.scheduler.events import (
    ASSIGNED_POD,
    NODE,
    UNSCHEDULED_POD,
    ActionType,
    ClusterEvent,
    node_change_actions,
    pod_change_actions,
)
from kubetaint.scheduler.listers import Listers
from kubetaint.scheduler.podinfo import make_pod_info, pod_key
from kubetaint.scheduler.queue import SchedulingQueue

#: One change as a pod informer tells it: (kind, key, old, pod), kind "ADDED" (old None),
#: "MODIFIED" or "DELETED" (pod: the last one known); see kubetaint.store.informer.Change.
PodChange = tuple[str, Any, Mapping[str, Any] | None, Mapping[str, Any]]


class InformerEvents:
    """Informer handlers over the scheduler's cache, queue, listers and PDBs."""

    cache: Cache
    queue: SchedulingQueue
    listers: Listers
    _pdbs: dict[str, Mapping[str, Any]]

    def responsible_for(self, pod: Mapping[str, Any]) -> bool:
        """Whether one of the scheduler's profiles schedules `pod` (the Scheduler's answer)."""
        raise NotImplementedError

    def add_namespace(self, ns: Mapping[str, Any]) -> None:
        self.listers.add_namespace(ns)

    update_namespace = add_namespace

    def remove_namespace(self, ns: Mapping[str, Any]) -> None:
        self.listers.remove_namespace(ns)

    def add_replica_set(self, rs: Mapping[str, Any]) -> None:
        self.listers.add_replica_set(rs)

    update_replica_set = add_replica_set

    def remove_replica_set(self, rs: Mapping[str, Any]) -> None:
        self.listers.remove_replica_set(rs)

    def add_stateful_set(self, ss: Mapping[str, Any]) -> None:
        self.listers.add_stateful_set(ss)

    update_stateful_set = add_stateful_set

    def remove_stateful_set(self, ss: Mapping[str, Any]) -> None:
        self.listers.remove_stateful_set(ss)

    def add_service(self, svc: Mapping[str, Any]) -> None:
        self.listers.add_service(svc)

    update_service = add_service

    def remove_service(self, svc: Mapping[str, Any]) -> None:
        self.listers.remove_service(svc)

    # ---- informer events ---------------------------------------------------------------------
    def add_node(self, node: Mapping[str, Any]) -> None:
        self.cache.add_node(node)
        self.queue.move_on_event(ClusterEvent(NODE, ActionType.Add, "NodeAdd"), None, node)

    def update_node(self, node: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> None:
        name = (node.get("metadata") or {}).get("name", "")
        known = self.cache.nodes.get(name)
        if old is None and known is not None:
            old = known.node
        self.cache.update_node(node)
        if not self.queue.has_unschedulable():
            return  # no pod waits in unschedulablePods: the event could move none
        if old is None:
            self.queue.move_on_event(ClusterEvent(NODE, ActionType.Add, "NodeAdd"), None, node)
            return
        actions = node_change_actions(old, node)
        if actions:
            self.queue.move_on_event(ClusterEvent(NODE, actions, "NodeUpdate"), old, node)

    def remove_node(self, node: Mapping[str, Any] | str) -> None:
        self.cache.remove_node(node)

    def add_pod(self, pod: Mapping[str, Any]) -> None:
        meta, spec = pod.get("metadata"), pod.get("spec")
        if type(meta) is dict and type(spec) is dict:
            # the usual add (an informer's start listing: 150,000 pods), a bound pod with a string
            # uid (its pod_key) the cache does not hold, takes Cache.add_pod's steps directly
            node_name, key = spec.get("nodeName"), meta.get("uid")
            if node_name and key and type(key) is str and key not in self.cache.pod_nodes:
                self.cache.add_unknown(pod, key, node_name)
                self.queue.done(key)
                self.queue.assigned_pod_added(pod)
                return
        if (pod.get("spec") or {}).get("nodeName"):
            key = pod_key(pod)
            self.cache.add_pod(pod, key)
            self.queue.done(key)
            self.queue.assigned_pod_added(pod)
        elif self.responsible_for(pod) and not (pod.get("metadata") or {}).get("deletionTimestamp"):
            self.queue.add(make_pod_info(pod))

    def pods_changed(self, changes: Iterable[PodChange]) -> None:
        """The pod informer's handler: each (kind, key, old, pod) change in turn, an ADDED to
        `add_pod`, a DELETED to `remove_pod`, a MODIFIED to `update_pod(pod, old)`.

        The usual update, a bound pod keeping its very spec object (an owner, label or status
        change: a ReplicaSet's adoptions, a kubelet's status posts), takes update_pod's bound-pod
        steps directly: the cache refreshes of a run of them are made at once."""
        queue = self.queue
        done, refresh = queue.done, self.cache.refresh_kept_specs
        idle = not queue.pods and not queue.where  # then done(key) of any key changes nothing
        kept: list[tuple[Mapping[str, Any], str, str]] = []  # refreshes not yet made, in order
        for kind, _, old, new in changes:
            if kind == "MODIFIED" and old is not None:
                spec = new.get("spec")
                if spec is old.get("spec") and isinstance(spec, dict):
                    node_name = spec.get("nodeName")
                    if node_name:
                        key = pod_key(new)
                        if not idle:
                            done(key)
                            if queue.cross_topology_waiting():  # (a label change may help those)
                                queue.assigned_pod_updated(old, new, pod_change_actions(old, new))
                        kept.append((new, key, node_name))  # what cache.update_pod does for a bound pod
                        continue
            if kept:  # (the queue and the cache are apart: only the cache's order matters)
                refresh(kept)
                kept = []
            if kind == "MODIFIED":
                self.update_pod(new, old)
            elif kind == "ADDED":
                self.add_pod(new)
            else:
                self.remove_pod(new)
            idle = not queue.pods and not queue.where
        if kept:
            refresh(kept)

    def update_pod(self, pod: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> None:
        key = pod_key(pod)
        if (pod.get("spec") or {}).get("nodeName"):
            self.queue.done(key)
            queue = self.queue
            prior = self.cache.pod_info(key) if queue.has_unschedulable() else None
            self.cache.update_pod(pod, key)
            if prior is not None and prior.pod is not pod:
                if (prior.pod.get("spec") or {}).get("nodeName"):
                    queue.assigned_pod_updated(prior.pod, pod, pod_change_actions(prior.pod, pod))
                else:  # an assumed pod's binding: the assigned pod informer's add
                    queue.assigned_pod_added(pod)
            elif prior is None and queue.has_unschedulable():
                queue.assigned_pod_added(pod)
            return
        if not self.responsible_for(pod):
            return
        queued = self.queue.pods.get(key)
        if old is None and queued is not None:
            old = queued.pod_info.pod
        pi = make_pod_info(pod)
        event = (
            ClusterEvent(UNSCHEDULED_POD, pod_change_actions(old, pod), "UnscheduledPodUpdate")
            if old
            else None
        )
        self.queue.update(pi, event, old)

    def remove_pod(self, pod: Mapping[str, Any]) -> None:
        key = pod_key(pod)
        removed = self.cache.remove_pod(key)
        self.queue.delete(key)
        if removed is not None:
            self.queue.move_on_event(
                ClusterEvent(ASSIGNED_POD, ActionType.Delete, "AssignedPodDelete"), pod, None
            )

    def add_pdb(self, pdb: Mapping[str, Any]) -> None:
        meta = pdb.get("metadata") or {}
        self._pdbs[f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"] = pdb

    update_pdb = add_pdb

    def remove_pdb(self, pdb: Mapping[str, Any]) -> None:
        meta = pdb.get("metadata") or {}
        self._pdbs.pop(f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}", None)
