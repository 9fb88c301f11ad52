"""FitError: "0/N nodes are available: ..." (mirrors pkg/scheduler/framework/types.go FitError.Error)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from kubetaint.scheduler.status import Status

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
NOTE_LENGTH_LIMIT = 1024


class SchedulingError(Exception):
    """A cycle that failed with an error, not a rejection (a plugin's Error status): the pod gets
    FailedScheduling with reason SchedulerError and retries after backoff."""


class NodeToStatus(dict[str, Status]):
    """Each node's filter status by name (framework.NodeToStatus), made whole at once from
    statuses remembered with their summary (scheduler.filter_memo): how many nodes give each
    reason, and the nodes whose status is Unschedulable (those preemption may help,
    NodesForStatusCode), so neither is gathered again from every status. Read-only once made."""

    def __init__(
        self,
        statuses: Mapping[str, Status],
        reasons: Counter[str],
        unschedulable: list[str],
        *,
        first: tuple[str, Status] | None = None,
    ) -> None:
        if first is not None:  # (a status given before the others, replaced by theirs)
            super().__init__((first,))
            self.update(statuses)
        else:
            super().__init__(statuses)
        #: each reason's count over the statuses
        self.reasons = reasons
        #: the names of the nodes whose status is Unschedulable, in node-tree order
        self.unschedulable = unschedulable


@dataclass
class Diagnosis:
    node_to_status: dict[str, Status] = field(default_factory=dict)
    absent_status: Status | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


@dataclass
class FitError:
    num_all_nodes: int
    diagnosis: Diagnosis

    def histogram(self) -> Counter[str]:
        node_to_status = self.diagnosis.node_to_status
        counts: Counter[str] = Counter()
        if isinstance(node_to_status, NodeToStatus):
            counts.update(node_to_status.reasons)
        else:
            for status in node_to_status.values():
                for reason in status.reasons:
                    counts[reason] += 1
        absent = self.num_all_nodes - len(self.diagnosis.node_to_status)
        if absent > 0 and self.diagnosis.absent_status is not None:
            for reason in self.diagnosis.absent_status.reasons:
                counts[reason] += absent
        return counts

    def error(self) -> str:
        return fit_error_message(
            self.num_all_nodes,
            self.histogram(),
            pre_filter_msg=self.diagnosis.pre_filter_msg,
            post_filter_msg=self.diagnosis.post_filter_msg,
        )

    def __str__(self) -> str:
        return self.error()


def fit_error_message(
    num_all_nodes: int, reasons: Mapping[str, int], *, pre_filter_msg: str = "", post_filter_msg: str = ""
) -> str:
    """The FitError text: PreFilter message or the sorted "count reason" histogram, then PostFilter's."""
    message = f"0/{num_all_nodes} nodes are available:"
    if pre_filter_msg:
        message += f" {pre_filter_msg}."
    else:
        parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
        if parts:
            message += " " + ", ".join(parts) + "."
    if post_filter_msg:
        # " %v": the PostFilter message as it is (a nested preemption FitError ends in its own ".")
        message += f" {post_filter_msg}"
    return message


def truncate_message(message: str) -> str:
    """Event notes are limited to 1024 bytes; longer messages end in " ..."."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    return message[: NOTE_LENGTH_LIMIT - 4] + " ..."
