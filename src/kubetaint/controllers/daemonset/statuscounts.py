"""updateDaemonSetStatus's counts (pkg/controller/daemon/daemon_controller.go): each node's share
of desired, current, misscheduled, ready, available and updated pods, remembered per node.

A DaemonSet syncs after each of its pod changes and counts every node (5,000 at a time), though
only the nodes whose pods changed count differently. A node's share depends on its pods (the
read-only list `_pods_by_node` hands out, which is rebuilt, never changed, when one of them
changes), whether the DaemonSet should run there and the current revision hash; and on the
clock only when minReadySeconds is set (availability then waits). Without minReadySeconds a
node's share is remembered with the very list, verdict and revision it was counted for; and a
caller that knows which nodes' lists changed since its last count (`count_changed`: the same
nodes in the same order, the same verdicts and revision) has only those nodes counted again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.controllers.replicaset import podutil
from kubetaint.speed.memo import Memo
from kubetaint.speed.reference import reference_mode

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
        #: what `count_changed` last counted: (source, order, verdicts, revision, each node's
        #: share by name, the sums), None before
        self._last: tuple[object, object, list[tuple[bool, bool]], str, dict[str, Counts], Counts] | None = (
            None
        )
        self._places: dict[str, int] = {}  # the place of each node name in the last order

    def count_changed(
        self,
        nodes: Sequence[Mapping[str, Any]],
        verdicts: list[tuple[bool, bool]],
        by_node: Mapping[str, list[JSON]],
        *,
        source: object,
        order: object,
        changed: set[str],
        revision: str,
    ) -> Counts:
        """`count(nodes, verdicts, by_node, revision=revision, min_ready=0, now=...)` (without
        minReadySeconds no clock is read), where `changed` holds every node whose list in
        `by_node` may differ from the one of the last `count_changed` with the same `source`
        (the pods by node the lists come from) and `order` (a token of the node names in
        `nodes`' order: the same object while they are the same). With the same verdicts and
        revision again, only the nodes of `changed` are counted again (in reference mode, every
        node is)."""
        last = self._last
        if (
            last is not None
            and last[0] is source
            and last[1] is order
            and last[3] == revision
            and last[2] == verdicts
            and not reference_mode()
        ):
            shares, sums = last[4], list(last[5])
            places = self._places
            for name in changed:
                i = places.get(name)
                if i is None:
                    continue  # not a node counted
                share = self._share(name, by_node.get(name), verdicts[i][0], revision)
                before = shares[name]
                if share != before:
                    shares[name] = share
                    for j in range(6):
                        sums[j] += share[j] - before[j]
        else:
            shares, sums = {}, [0, 0, 0, 0, 0, 0]
            self._places = places = {}
            for i, (node, (should_run, _)) in enumerate(zip(nodes, verdicts, strict=True)):
                name = str(node["metadata"]["name"])
                places[name] = i
                share = shares[name] = self._share(name, by_node.get(name), should_run, revision)
                for j in range(6):
                    sums[j] += share[j]
        totals: Counts = (sums[0], sums[1], sums[2], sums[3], sums[4], sums[5])
        self._last = (source, order, list(verdicts), revision, shares, totals)
        return totals

    def _share(self, name: str, pods: list[JSON] | None, should_run: bool, revision: str) -> Counts:
        """The share of node `name` without minReadySeconds, `pods` the list targeting it (or
        None), remembered as `count` remembers it."""
        if not pods:
            return (1, 0, 0, 0, 0, 0) if should_run else _NOTHING
        entry = self._entries.get(name)
        if entry is not None and entry[0] is pods and entry[1] is should_run and entry[2] == revision:
            return entry[3]
        counts = node_counts(pods, should_run, revision, 0, 0.0)
        self._entries.put(name, (pods, should_run, revision, counts))
        return counts

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
