"""What one sync of a Job works with, as job_controller.go's syncJobCtx: the Job being synced
(a copy whose status the sync writes), its pods, and what the sync has decided so far."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubetaint.controllers.job.backoff import Backoff
from kubetaint.controllers.job.intervals import Intervals

JSON = dict[str, Any]


@dataclass
class SyncJobCtx:
    """syncJobCtx."""

    job: JSON
    pods: list[JSON]
    active_pods: list[JSON]
    ready: int
    terminating: int
    #: the uids of `status.uncountedTerminatedPods`, by "succeeded" and "failed"
    uncounted: dict[str, set[str]]
    backoff: Backoff
    #: its pods removed before their finalizer was, as the failed pods they count as
    vanished: list[JSON] = field(default_factory=list)
    succeeded: int = 0
    failed: int = 0
    finished_condition: JSON | None = None
    prev_succeeded_indexes: Intervals = field(default_factory=list)
    succeeded_indexes: Intervals = field(default_factory=list)
    #: the failed indexes of a Job with backoffLimitPerIndex (None without it)
    failed_indexes: Intervals | None = None
    #: per index, the failed pod whose finalizer stays until its replacement exists
    pods_with_delayed_deletion: dict[int, JSON] = field(default_factory=dict)
