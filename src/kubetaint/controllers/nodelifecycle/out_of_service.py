"""Pods stuck terminating on out-of-service nodes (non-graceful node shutdown): the `gcTerminating`
part of the pod garbage collector (mirrors gcTerminating and markFailedAndDeletePod in
pkg/controller/podgc/gc_controller.go).

Every gcCheckPeriod (20 s) a pod that has a deletionTimestamp, on a node that is not Ready and
carries a taint with key `node.kubernetes.io/out-of-service` (any value and effect), is marked
Failed (unless already terminal) and force-deleted. The taint's NoExecute effect itself is
handled by the taint eviction controller like any other NoExecute taint.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle, parse_time
from kubetaint.core.conditions import TAINT_NODE_OUT_OF_SERVICE, get_condition
from kubetaint.store.informer import Informer
from kubetaint.store.interface import JSON, Store

log = logging.getLogger(__name__)

GC_CHECK_PERIOD = 20.0


def is_node_ready(node: Mapping[str, Any]) -> bool:
    ready = get_condition(node, "Ready")
    return ready is not None and ready.get("status") == "True"


def is_out_of_service(node: Mapping[str, Any]) -> bool:
    """Not Ready and tainted with the out-of-service key (TaintKeyExists)."""
    taints = (node.get("spec") or {}).get("taints") or []
    return not is_node_ready(node) and any(t.get("key") == TAINT_NODE_OUT_OF_SERVICE for t in taints)


def _eviction_and_creation_order(pod: Mapping[str, Any]) -> tuple[bool, float, str]:
    """byEvictionAndCreationTimestamp: evicted pods first, then oldest, then by name."""
    status = pod.get("status") or {}
    meta = pod.get("metadata") or {}
    evicted = status.get("phase") == "Failed" and status.get("reason") == "Evicted"
    created = meta.get("creationTimestamp")
    return (not evicted, parse_time(created) if created else 0.0, str(meta.get("name") or ""))


def terminating_pods_to_collect(pods: list[JSON], nodes: Informer) -> list[JSON]:
    """gcTerminating's selection, in deletion order."""
    chosen = []
    for pod in pods:
        if not (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        node = nodes.get("", str((pod.get("spec") or {}).get("nodeName") or ""))
        if node is not None and is_out_of_service(node):
            chosen.append(pod)
    return sorted(chosen, key=_eviction_and_creation_order)


def mark_failed_and_delete_pod(store: Store, pod: Mapping[str, Any]) -> None:
    """markFailedAndDeletePod: phase Failed unless terminal, then delete with grace period 0."""
    meta = pod.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    status = dict(pod.get("status") or {})
    if status.get("phase") not in ("Succeeded", "Failed"):
        status["phase"] = "Failed"
        store.update("pods", {**pod, "status": status})
    store.delete("pods", namespace, name, grace_period_seconds=0)


class OutOfServicePodGC:
    """Runs gcTerminating every GC_CHECK_PERIOD seconds from start()."""

    def __init__(self, store: Store, clock: Clock, *, pods: Informer, nodes: Informer) -> None:
        self._store = store
        self._clock = clock
        self._pods = pods
        self._nodes = nodes
        self._handle: Handle | None = None
        self._start = 0.0
        self._ticks = 0

    def start(self) -> None:
        self._nodes.start()
        self._pods.start()
        self._start = self._clock.now()
        self._handle = self._clock.call_soon(self._tick)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        self._ticks += 1
        self._handle = self._clock.call_at(self._start + self._ticks * GC_CHECK_PERIOD, self._tick)
        self.gc_terminating()

    def gc_terminating(self) -> int:
        """One pass; returns how many pods were force-deleted."""
        deleted = 0
        for pod in terminating_pods_to_collect(list(self._pods.items()), self._nodes):
            try:
                mark_failed_and_delete_pod(self._store, pod)
                deleted += 1
            except StatusError as err:
                if err.code != 404:
                    log.error("PodGC failed to force delete pod: %s", err.message)
        return deleted
