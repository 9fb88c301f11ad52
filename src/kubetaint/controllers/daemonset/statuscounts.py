"""updateDaemonSetStatus's counts (pkg/controller/daemon/daemon_controller.go): each node's share
of desired, current, misscheduled, ready, available and updated pods, remembered per node.

A DaemonSet syncs after each of its pod changes and counts every node (5,000 at a time), though
only the nodes whose pods changed count differently. A node's share depends on its pods (the
read-only list `_pods_by_node` hands out, which is rebuilt, never changed, when one of them
changes), whether the DaemonSet should run there and the current revision hash; and on the
clock only when minReadySeconds is set (availability then waits). Without minReadySeconds a
node's share is remembered with the very list, verdict and revision it was counted for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.controllers.replicaset import podutil
from kubetaint.speed.memo import Memo

JSON = dict[str, Any]
#: (desired, current, misscheduled, ready, available, updated), each 0 or 1 for one node
Counts = tuple[int, int, int, int, int, int]
_NOTHING: Counts = (0, 0, 0, 0, 0, 0)


class NodeCounts:
    """One DaemonSet's per-node counts, as last counted."""

    def __init__(self) -> None:
        self._entries: Memo[str, tuple[list[JSON], bool, str, Counts]] = Memo(
            "controllers.daemonset.statuscounts.node_counts", limit=1 << 16
        )

    def count(
        self,
        nodes: Sequence[Mapping[str, Any]],
        verdicts: Sequence[tuple[bool, bool]],
        by_node: Mapping[str, list[JSON]],
        *,
        revision: str,
        min_ready: int,
        now: float,
    ) -> Counts:
        """The sums over `nodes` (with `verdicts[i]` the `_should_run` of `nodes[i]`) of each
        node's share, its scheduled pods being those of `by_node` (read-only lists)."""
        remember = min_ready == 0  # (availability then reads no clock)
        entries = self._entries
        desired = current = misscheduled = ready = available = updated = 0
        for node, (should_run, _) in zip(nodes, verdicts, strict=True):
            name = str(node["metadata"]["name"])
            pods = by_node.get(name)
            if not pods:  # nothing scheduled there: desired when it should run, nothing else
                if should_run:
                    desired += 1
                continue
            entry = entries.get(name) if remember else None
            if entry is not None and entry[0] is pods and entry[1] is should_run and entry[2] == revision:
                counts = entry[3]
            else:
                counts = node_counts(pods, should_run, revision, min_ready, now)
                if remember:
                    entries.put(name, (pods, should_run, revision, counts))
            desired += counts[0]
            current += counts[1]
            misscheduled += counts[2]
            ready += counts[3]
            available += counts[4]
            updated += counts[5]
        return desired, current, misscheduled, ready, available, updated


def node_counts(pods: list[JSON], should_run: bool, revision: str, min_ready: int, now: float) -> Counts:
    """One node's share of the counts, `pods` (at least one) targeting it."""
    scheduled = [p for p in pods if (p.get("spec") or {}).get("nodeName")]
    if not should_run:
        return (0, 0, 1, 0, 0, 0) if scheduled else _NOTHING
    if not scheduled:
        return (1, 0, 0, 0, 0, 0)
    is_ready, is_available, is_updated = scheduled_counts(scheduled, revision, min_ready, now)
    return (1, 1, 0, int(is_ready), int(is_available), int(is_updated))


def scheduled_counts(
    scheduled: list[JSON], revision: str, min_ready: int, now: float
) -> tuple[bool, bool, bool]:
    """updateDaemonSetStatus for a node's scheduled pods (at least one): whether the oldest is
    ready, whether it is available, and whether it has the current revision hash (updateDaemonSetStatus
    counts the oldest pod alone)."""
    if len(scheduled) == 1:  # the usual node: what sorting and collecting one pod finds
        oldest = scheduled[0]
        return (
            podutil.is_ready(oldest),
            podutil.is_available(oldest, min_ready, now),
            revision == (oldest["metadata"].get("labels") or {}).get("controller-revision-hash"),
        )
    return scheduled_counts_generic(scheduled, revision, min_ready, now)


def scheduled_counts_generic(
    scheduled: list[JSON], revision: str, min_ready: int, now: float
) -> tuple[bool, bool, bool]:
    """`scheduled_counts` for any number of pods."""
    oldest = sorted(scheduled, key=creation_and_phase)[0]
    updated = revision == (oldest["metadata"].get("labels") or {}).get("controller-revision-hash")
    return podutil.is_ready(oldest), podutil.is_available(oldest, min_ready, now), updated


def creation_and_phase(pod: JSON) -> tuple[str, int, str]:
    """podByCreationTimestampAndPhase: older first, then Running before other phases."""
    meta = pod.get("metadata") or {}
    running = 0 if (pod.get("status") or {}).get("phase") == "Running" else 1
    return str(meta.get("creationTimestamp") or ""), running, str(meta.get("name") or "")
