"""The pod garbage collector: every 20 s deletes terminated pods over the threshold (evicted
first, then oldest), terminating pods on not-ready nodes with the out-of-service taint, pods bound
to nodes that stay missing for the 40 s quarantine, and unscheduled terminating pods.

Mirrors pkg/controller/podgc/gc_controller.go (gc, gcTerminated, gcTerminating, gcOrphaned with
the delaying node queue, gcUnscheduledTerminating, markFailedAndDeletePodWithCondition,
byEvictionAndCreationTimestamp). Indexes kept from the pod informer (and, for the nodes that
pods are bound to but the node informer lacks, from both informers) keep a pass from looking at
every pod or every node.
"""

from __future__ import annotations

import logging
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle, format_time
from kubetaint.controllers.replicaset import podutil
from kubetaint.store.component_informers import ComponentInformers
from kubetaint.store.informer import Changes, EventHandlers, Informer
from kubetaint.store.interface import Store, object_key

JSON = dict[str, Any]
Key = tuple[str, str]
#: kube-controller-manager --terminated-pod-gc-threshold default.
TERMINATED_POD_THRESHOLD = 12500
GC_CHECK_PERIOD = 20.0
QUARANTINE_TIME = 40.0
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"
ORPHAN_CONDITION = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "DeletionByPodGC",
    "message": "PodGC: node no longer exists",
}
log = logging.getLogger(__name__)
#: The phases podutil.is_terminal tells (inlined in a replay).
_TERMINAL = ("Succeeded", "Failed")


def _is_node_ready(node: JSON) -> bool:
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


class PodGCController:
    """Periodic pod garbage collection through the store."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        pod_informer: Informer | None = None,
        node_informer: Informer | None = None,
        terminated_pod_threshold: int = TERMINATED_POD_THRESHOLD,
    ) -> None:
        self.store = store
        self.clock = clock
        self.informers = ComponentInformers(store)
        self.pods = self.informers.shared_or_own(pod_informer, "pods")
        self.nodes = self.informers.shared_or_own(node_informer, "nodes")
        self.threshold = terminated_pod_threshold
        self.period = GC_CHECK_PERIOD
        self.quarantine = QUARANTINE_TIME
        self._next_tick: Handle | None = None
        self._terminated: set[Key] = set()
        self._terminating: set[Key] = set()
        self._by_node: dict[str, set[Key]] = {}
        self._node_of: dict[Key, str] = {}
        self._node_queue: dict[str, float] = {}  # node name -> when it is ready to be checked
        #: the nodes of `_by_node` the node informer has not cached (its key of a node: ("", name)),
        #: kept by both sides' changes so that a pass need not look at every indexed node
        self._unlisted: set[str] = set()
        self.pods.add_handlers(self._pods_changed)
        self.nodes.add_handlers(EventHandlers(on_add=self._node_listed, on_delete=self._node_unlisted))

    def start(self) -> None:
        self.informers.start()
        self._next_tick = self.clock.call_later(self.period, self._tick)

    def stop(self) -> None:
        """Stop the informers this controller started and its periodic pass."""
        self.informers.stop()
        if self._next_tick is not None:
            self._next_tick.cancel()
            self._next_tick = None

    def _tick(self) -> None:
        self._next_tick = self.clock.call_later(self.period, self._tick)
        try:
            self.gc()
        except Exception:  # one bad object must not stop the collector
            log.exception("podgc: pass failed")

    # indexes -------------------------------------------------------------------------------------

    def _node_listed(self, node: JSON) -> None:
        """`_unlisted` follows which indexed nodes the node informer caches (its key of a node:
        ("", name)): one it adds is no longer unlisted."""
        namespace, name = object_key(node)
        if not namespace:
            self._unlisted.discard(name)

    def _node_unlisted(self, node: JSON) -> None:
        namespace, name = object_key(node)
        if not namespace and name in self._by_node:
            self._unlisted.add(name)

    def _pods_changed(self, changes: Changes) -> None:
        """The pod informer's handler: each change into the indexes. The indexes hold what
        `_record` made of the last object told for each key, so an update keeping the spec and
        status objects (read-only: the same nodeName and phase), its deletionTimestamp and its key
        (an owner or label change: an adoption) needs nothing."""
        if changes.only == "ADDED" and not self._node_of and not self._terminated and not self._terminating:
            self._record_fresh(changes)  # the listing at start
            return
        for kind, _, old, pod in changes:
            if kind == "MODIFIED":
                assert old is not None
                old_meta, new_meta = old.get("metadata"), pod.get("metadata")
                if (
                    old.get("spec") is pod.get("spec")
                    and old.get("status") is pod.get("status")
                    and type(old_meta) is dict
                    and type(new_meta) is dict
                    and old_meta.get("deletionTimestamp") is new_meta.get("deletionTimestamp")
                    and old_meta.get("name") is new_meta.get("name")
                    and old_meta.get("namespace") is new_meta.get("namespace")
                ):
                    continue
                self._reindex(old, pod)
            elif kind == "ADDED":
                self._add(pod)
            else:
                self._unindex(pod)

    def _new_node_entry(self, node: str) -> set[Key]:
        """`_by_node`'s new (empty) entry for `node`, noted in `_unlisted` when not cached."""
        members: set[Key] = set()
        self._by_node[node] = members
        if self.nodes.get("", node) is None:
            self._unlisted.add(node)
        return members

    def _unindex(self, pod: JSON) -> None:
        key = podutil.key_of(pod)
        self._terminated.discard(key)
        self._terminating.discard(key)
        node = self._node_of.pop(key, None)
        if node is not None:
            members = self._by_node.get(node)
            if members is not None:
                members.discard(key)
                if not members:
                    del self._by_node[node]
                    self._unlisted.discard(node)

    def _add(self, pod: JSON) -> None:
        """_index of a pod the informer adds: usually unknown here (its delete unindexed it, or it
        is new), then there is nothing to unindex first (the replay of 150,000 pods at start)."""
        key = podutil.key_of(pod)
        if key in self._node_of or key in self._terminated or key in self._terminating:
            self._unindex(pod)
        self._record(key, pod)

    def _record_fresh(self, changes: Changes) -> None:
        """`_record` of each added (key, pod), inlined: into empty indexes, the informer's keys
        being distinct, no pod finds an earlier one's entries to unindex."""
        terminated, terminating, node_of, by_node = (
            self._terminated,
            self._terminating,
            self._node_of,
            self._by_node,
        )
        for _, key, _, pod in changes:
            if (pod.get("status") or {}).get("phase") in _TERMINAL:  # podutil.is_terminal
                terminated.add(key)
            if (pod.get("metadata") or {}).get("deletionTimestamp"):
                terminating.add(key)
            node = str((pod.get("spec") or {}).get("nodeName") or "")
            if node:
                node_of[key] = node
                members = by_node.get(node)
                if members is None:
                    members = self._new_node_entry(node)
                members.add(key)

    def _index(self, pod: JSON) -> None:
        self._unindex(pod)
        self._record(podutil.key_of(pod), pod)

    def _record(self, key: Key, pod: JSON) -> None:
        if podutil.is_terminal(pod):
            self._terminated.add(key)
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            self._terminating.add(key)
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        if node:
            self._node_of[key] = node
            members = self._by_node.get(node)
            if members is None:  # (setdefault would build a set for every call)
                members = self._new_node_entry(node)
            members.add(key)

    def _reindex(self, _old: JSON, new: JSON) -> None:
        """_index(new), skipped when the indexes already hold what it would record for the pod
        (an owner, label or status change keeping its phase class, deletion and node)."""
        key = podutil.key_of(new)
        if (
            self._node_of.get(key, "") == str((new.get("spec") or {}).get("nodeName") or "")
            and (key in self._terminated) == podutil.is_terminal(new)
            and (key in self._terminating) == bool((new.get("metadata") or {}).get("deletionTimestamp"))
        ):
            return  # _node_of[key] == node implies key in _by_node[node]: both change together
        self._index(new)

    def _pods(self, keys: set[Key]) -> list[JSON]:
        result = []
        for namespace, name in sorted(keys):
            pod = self.pods.get(namespace, name)
            if pod is not None:
                result.append(pod)
        return result

    # the passes ----------------------------------------------------------------------------------

    def gc(self) -> None:
        if self.threshold > 0:
            self.gc_terminated()
        self.gc_terminating()
        self.gc_orphaned()
        self.gc_unscheduled_terminating()

    def gc_terminated(self) -> None:
        excess = len(self._terminated) - self.threshold
        if excess <= 0:
            return
        for pod in sorted(self._pods(self._terminated), key=_eviction_then_age)[:excess]:
            self.mark_failed_and_delete(pod)

    def gc_terminating(self) -> None:
        doomed = []
        for pod in self._pods(self._terminating):
            node = self.nodes.get("", str((pod.get("spec") or {}).get("nodeName") or ""))
            if node is None:
                continue
            taints = (node.get("spec") or {}).get("taints") or []
            if not _is_node_ready(node) and any(t.get("key") == OUT_OF_SERVICE for t in taints):
                doomed.append(pod)
        for pod in sorted(doomed, key=_eviction_then_age):
            self.mark_failed_and_delete(pod)

    def gc_orphaned(self) -> None:
        now = self.clock.now()
        for node in self._unlisted:  # (the queue is read in name order: any order will do)
            when = now + self.quarantine
            self._node_queue[node] = min(self._node_queue.get(node, when), when)
        deleted: list[str] = []
        for node, when in sorted(self._node_queue.items()):
            if when > now:
                continue
            del self._node_queue[node]
            if self.nodes.get("", node) is None and not self._exists(node):
                deleted.append(node)
        for node in deleted:
            for pod in self._pods(set(self._by_node.get(node, set()))):
                self.mark_failed_and_delete(pod, dict(ORPHAN_CONDITION))

    def _exists(self, node: str) -> bool:
        try:
            self.store.get("nodes", "", node)
            return True
        except StatusError as err:
            return err.code != 404

    def gc_unscheduled_terminating(self) -> None:
        for pod in self._pods(self._terminating):
            if not (pod.get("spec") or {}).get("nodeName"):
                self.mark_failed_and_delete(pod)

    def mark_failed_and_delete(self, pod: JSON, condition: JSON | None = None) -> None:
        """markFailedAndDeletePodWithCondition: non-terminal pods become Failed first; then a
        force delete (grace period 0). Errors (NotFound included) are logged and skipped."""
        namespace, name = podutil.key_of(pod)
        try:
            if not podutil.is_terminal(pod):
                status = {**(pod.get("status") or {}), "phase": "Failed"}
                if condition is not None:
                    condition["lastTransitionTime"] = format_time(self.clock.now())
                    kept = [c for c in status.get("conditions") or [] if c.get("type") != condition["type"]]
                    status["conditions"] = [*kept, condition]
                self.store.update("pods", {**pod, "status": status})
            self.store.delete("pods", namespace, name, grace_period_seconds=0)
        except StatusError as err:
            log.info("podgc: could not delete pod %s/%s: %s", namespace, name, err.message)


def _eviction_then_age(pod: JSON) -> tuple[bool, str, str]:
    """byEvictionAndCreationTimestamp: evicted pods first, then older, then by name."""
    status = pod.get("status") or {}
    evicted = status.get("phase") == "Failed" and status.get("reason") == "Evicted"
    meta = pod.get("metadata") or {}
    return not evicted, str(meta.get("creationTimestamp") or ""), str(meta.get("name") or "")
