"""The TTL-after-finished controller's decision (pkg/controller/ttlafterfinished), run by the Job
controller's sync: a finished Job is deleted (foreground) `ttlSecondsAfterFinished` after it
finished, and requeued until then."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.controllers.job import tracking
from kubetaint.controllers.replicaset import podutil
from kubetaint.store.interface import PropagatingStore

JSON = dict[str, Any]
Key = tuple[str, str]
RESOURCE = "jobs.batch"
log = logging.getLogger(__name__)


def sync(store: PropagatingStore, requeue_after: Callable[[Key, float], None], now: float, job: JSON) -> None:
    """Delete `job` if its TTL after finishing has passed; else requeue it for when it does."""
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    if ttl is None or job["metadata"].get("deletionTimestamp"):
        return
    finished_at = tracking.finish_time(job)
    if finished_at is None:
        return
    remaining = finished_at + float(ttl) - now
    if remaining > 0:
        requeue_after(podutil.key_of(job), remaining)
        return
    namespace, name = podutil.key_of(job)
    try:
        store.delete(
            RESOURCE,
            namespace,
            name,
            uid=str(job["metadata"].get("uid") or "") or None,
            propagation_policy="Foreground",
        )
    except StatusError as err:
        if err.code not in (404, 409):
            log.info("ttl-after-finished: deleting %s/%s: %s", namespace, name, err.message)
