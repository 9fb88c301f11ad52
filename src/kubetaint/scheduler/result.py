"""What a scheduling cycle returns (the parts of schedule_one.go's ScheduleResult and the
diagnosis the host applies): the chosen node or the failure, and what the cycle evaluated."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetaint.scheduler.cache import IntArray
from kubetaint.scheduler.fit_error import FitError
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.queue import QueuedPodInfo


@dataclass
class Evaluation:
    """What one cycle looked at: the feasible nodes it scored and their scores."""

    feasible: Sequence[NodeInfo] = field(default_factory=list)
    plugin_scores: dict[str, IntArray] = field(default_factory=dict)
    total_scores: IntArray | None = None
    processed: int = 0


@dataclass
class ScheduleResult:
    """The outcome of one cycle, for the host to apply."""

    pod: Mapping[str, Any]
    node: str | None = None
    reason: str = "Scheduled"
    event_type: str = "Normal"
    message: str = ""
    condition: dict[str, str] | None = None
    nominated_node: str | None = None
    victims: list[Mapping[str, Any]] = field(default_factory=list)
    victim_events: list[dict[str, str]] = field(default_factory=list)
    fit_error: FitError | None = None
    evaluation: Evaluation | None = None
    #: the pod's fields the cycle could not judge (unmodelled.pod_warnings)
    warnings: list[str] = field(default_factory=list)
    #: A scheduled pod's queue entry (its attempts) and the Bind plugin that binds it, for
    #: `Scheduler.binding_failed` when the host cannot bind.
    queued: QueuedPodInfo | None = None
    bind_plugin: str = ""
    #: PreBind's API updates, (resource, object), for the host to write before the binding
    #: (VolumeBinding: the chosen PVs' claimRef, the claims to provision)
    prebind_writes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: the cycle's Unreserve (RunReservePluginsUnreserve), for `Scheduler.binding_failed`
    unreserve: Callable[[], None] | None = None

    @property
    def scheduled(self) -> bool:
        return self.node is not None
