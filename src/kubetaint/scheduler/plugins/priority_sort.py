"""PrioritySort: higher spec.priority first, then earlier queue timestamp
(mirrors pkg/scheduler/framework/plugins/queuesort/priority_sort.go)."""

from __future__ import annotations

from typing import Protocol

from kubetaint.scheduler.extension_points import (
    Plugin,
    QueueSortPlugin,
)
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.podinfo import PodInfo


class Queued(Protocol):
    @property
    def pod_info(self) -> PodInfo: ...

    @property
    def timestamp(self) -> float: ...


class PrioritySort(Plugin, QueueSortPlugin):
    name = names.PRIORITY_SORT

    def sort_key(self, q: Queued) -> tuple[int, float]:
        """Ascending key equivalent to Less: (-priority, timestamp)."""
        return (-q.pod_info.priority, q.timestamp)

    def less(self, a: Queued, b: Queued) -> bool:
        return self.sort_key(a) < self.sort_key(b)
