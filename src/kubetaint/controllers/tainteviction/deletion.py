"""The taint eviction controller's pod deletion (mirrors deletePodHandler and
addConditionAndDeletePod in pkg/controller/tainteviction/taint_eviction.go).

At fire time: event `TaintManagerEviction` "Marking for deletion Pod ns/name", then up to 5
attempts of GET → add the DisruptionTarget condition (status written only when it changed) →
DELETE, 10 ms apart on the clock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, format_time
from kubetaint.core.conditions import update_pod_condition
from kubetaint.store.events import EventRecorder
from kubetaint.store.interface import Store

log = logging.getLogger(__name__)

RETRIES = 5
RETRY_DELAY = 0.010
EVENT_REASON = "TaintManagerEviction"
DISRUPTION_TARGET: dict[str, Any] = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "DeletionByTaintManager",
    "message": "Taint manager: deleting due to NoExecute taint",
}


def pod_ref(key: str) -> dict[str, Any]:
    """The ObjectReference upstream records events against (kind, apiVersion, namespace, name)."""
    namespace, _, name = key.partition("/")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": namespace, "name": name}}


def emit_deletion_event(recorder: EventRecorder, key: str) -> None:
    recorder.event(pod_ref(key), "Normal", EVENT_REASON, f"Marking for deletion Pod {key}")


def emit_cancel_event(recorder: EventRecorder, key: str) -> None:
    recorder.event(pod_ref(key), "Normal", EVENT_REASON, f"Cancelling deletion of Pod {key}")


def add_condition_and_delete_pod(store: Store, clock: Clock, namespace: str, name: str) -> None:
    """One attempt; raises StatusError on failure."""
    pod = store.get("pods", namespace, name)
    new_status, changed = update_pod_condition(pod.get("status"), DISRUPTION_TARGET, format_time(clock.now()))
    if changed:
        pod = store.update("pods", {**pod, "status": new_status})
    store.delete("pods", namespace, name)


class PodDeleter:
    """The work function of the eviction queue."""

    def __init__(self, store: Store, clock: Clock, recorder: EventRecorder) -> None:
        self._store = store
        self._clock = clock
        self._recorder = recorder
        #: Pods deleted by this controller: (time, namespace/name), for reports and tests.
        self.deleted: list[tuple[float, str]] = []

    def __call__(self, key: str, fire_at: float, done: Callable[[], None]) -> None:
        log.info("Deleting pod %s", key)
        emit_deletion_event(self._recorder, key)
        self._attempt(key, 0, done)

    def _attempt(self, key: str, attempt: int, done: Callable[[], None]) -> None:
        namespace, _, name = key.partition("/")
        try:
            add_condition_and_delete_pod(self._store, self._clock, namespace, name)
        except StatusError as err:
            # Upstream sleeps 10ms after every failed attempt, the last one included.
            if attempt + 1 >= RETRIES:
                log.error("TaintEvictionController: timed worker failed for %s: %s", key, err.message)
                self._clock.call_later(RETRY_DELAY, done)
            else:
                self._clock.call_later(RETRY_DELAY, lambda: self._attempt(key, attempt + 1, done))
            return
        self.deleted.append((self._clock.now(), key))
        done()
