"""SchedulingGates: pods with spec.schedulingGates wait outside activeQ
(mirrors pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.scheduler.events import UNSCHEDULED_POD, ActionType, ClusterEvent, ClusterEventWithHint
from kubetaint.scheduler.extension_points import (
    EnqueueExtensions,
    Plugin,
    PreEnqueuePlugin,
)
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.podinfo import PodInfo, pod_key
from kubetaint.scheduler.status import SUCCESS, Code, Status


def _after_gates_removed(pi: PodInfo, _old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    return new is not None and pod_key(new) == pi.key


class SchedulingGates(Plugin, EnqueueExtensions, PreEnqueuePlugin):
    name = names.SCHEDULING_GATES

    def events_to_register(self) -> list[ClusterEventWithHint]:
        event = ClusterEvent(UNSCHEDULED_POD, ActionType.UpdatePodSchedulingGatesEliminated)
        return [ClusterEventWithHint(event, _after_gates_removed)]

    def pre_enqueue(self, pi: PodInfo) -> Status:
        if not pi.scheduling_gates:
            return SUCCESS
        gates = " ".join(pi.scheduling_gates)  # Go %v of a []string
        return Status(Code.UnschedulableAndUnresolvable, f"waiting for scheduling gates: [{gates}]")
