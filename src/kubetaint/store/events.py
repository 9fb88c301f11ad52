"""Recording Kubernetes Events (core/v1) through a store, as client-go's record.EventRecorder does.

Event names follow upstream (`<involved name>.<hex nanoseconds>`), with a counter suffix when two
events share an instant on a virtual clock. A failed write is dropped (events are best effort).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, format_time
from kubetaint.store.interface import JSON, Store

_API_VERSIONS = {
    "Pod": "v1",
    "Node": "v1",
    "Namespace": "v1",
    "ReplicaSet": "apps/v1",
    "Deployment": "apps/v1",
    "DaemonSet": "apps/v1",
    "PodDisruptionBudget": "policy/v1",
}


class EventRecorder:
    """Writes Events for one component (`source.component`, e.g. `taint-eviction-controller`)."""

    def __init__(self, store: Store, clock: Clock, component: str, host: str = "") -> None:
        self._store = store
        self._clock = clock
        self.component = component
        self.host = host
        self._last_stamp = -1
        self._sequence = 0

    def event(
        self, involved: Mapping[str, Any], event_type: str, reason: str, message: str, kind: str = ""
    ) -> JSON | None:
        """Record an event about `involved` (a stored object); returns the stored Event or None."""
        meta = involved.get("metadata") or {}
        kind = kind or str(involved.get("kind") or "")
        namespace = str(meta.get("namespace") or "default")
        now = self._clock.now()
        stamp = int(now * 1_000_000_000)
        if stamp == self._last_stamp:
            self._sequence += 1
        else:
            self._last_stamp, self._sequence = stamp, 0
        suffix = f"{stamp:x}" if self._sequence == 0 else f"{stamp:x}{self._sequence:x}"
        involved_ref = {
            "kind": kind,
            "namespace": str(meta.get("namespace") or ""),
            "name": str(meta.get("name") or ""),
            "uid": str(meta.get("uid") or ""),
            "apiVersion": str(involved.get("apiVersion") or _API_VERSIONS.get(kind, "v1")),
            "resourceVersion": str(meta.get("resourceVersion") or ""),
        }
        if not involved_ref["namespace"]:
            del involved_ref["namespace"]
        stamp_text = format_time(now)
        event: JSON = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{meta.get('name', '')}.{suffix}", "namespace": namespace},
            "involvedObject": involved_ref,
            "reason": reason,
            "message": message,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "firstTimestamp": stamp_text,
            "lastTimestamp": stamp_text,
            "count": 1,
            "type": event_type,
            "eventTime": None,
            "reportingComponent": self.component,
            "reportingInstance": self.host,
        }
        try:
            return self._store.create("events", event)
        except StatusError:
            return None
