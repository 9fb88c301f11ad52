"""The sequential search of findNodesThatPassFilters (pkg/scheduler/schedule_one.go): how many
feasible nodes to find (numFeasibleNodesToFind), the first of them met going round the node
list from nextStartNodeIndex, found in a pass mask, the nominated node tried first
(evaluateNominatedNode), the nodes a PreFilterResult narrows the search to, and selectHost."""

from __future__ import annotations

import random

import numpy as np

from kubetaint.scheduler.cache import BoolArray, Cache, IntArray
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.framework import Framework
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import Status

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """numFeasibleNodesToFind with the adaptive percentage (0 = 50 - n/125, at least 5)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


def first_hits(mask: BoolArray, start: int, k: int) -> tuple[IntArray, int]:
    """The positions of the first `k` true entries of `mask` met going round from `start`, and
    how many entries were gone through to find them (all of them when fewer are true)."""
    n = len(mask)
    window = 4 * k  # (the usual mask is mostly true: the hits are near; look further only if not)
    if start + window < n:
        near = np.flatnonzero(mask[start : start + window])
        if len(near) >= k:
            near = near[:k]
            return near + start, int(near[-1]) + 1
    hits = np.flatnonzero(mask[start:] if start else mask)
    if len(hits) >= k:
        hits = hits[:k]
        return hits + start if start else hits, int(hits[-1]) + 1
    if not start:
        return hits, n
    wrapped = np.flatnonzero(mask[:start])
    need = k - len(hits)
    processed = n
    if len(wrapped) >= need:
        wrapped = wrapped[:need]
        processed = n - start + int(wrapped[-1]) + 1
    return np.concatenate((hits + start, wrapped)), processed


def select_host(total: IntArray, rng: random.Random) -> int:
    """A uniformly random index among the maximal totals (upstream's reservoir sampling)."""
    ties = np.flatnonzero(total == np.maximum.reduce(total))
    if len(ties) == 1:
        return int(ties[0])
    return int(ties[rng.randrange(len(ties))])


def nominated_first(
    cache: Cache, fw: Framework, state: CycleState, pi: PodInfo
) -> tuple[list[NodeInfo] | None, tuple[str, Status] | None]:
    """evaluateNominatedNode: ([the nominated node] when it passes the filters, else None;
    (its name, status) when it exists and fails them, as the cycle's diagnosis records it)."""
    if not pi.nominated_node_name:
        return None, None
    ni = cache.nodes.get(pi.nominated_node_name)
    if ni is None:
        return None, None
    status = fw.run_filter(state, pi, ni)
    if status.is_success():
        return [ni], None
    return None, (ni.name, status)


def narrowed(cache: Cache, names: frozenset[str]) -> list[NodeInfo]:
    """The named nodes that exist, in node-tree order. (Upstream ranges over the NodeNames set,
    in Go's random map order; we keep the order the search over every node would meet them in,
    so that the same inputs always check the same nodes.)"""
    nodes = cache.nodes
    position = cache.order_positions()
    found = [ni for name in names if (ni := nodes.get(name)) is not None and name in position]
    found.sort(key=lambda ni: position[ni.name])
    return found


def position_in(cache: Cache, name: str, searched: list[NodeInfo] | None) -> int | None:
    """The node's index in the list searched (node-tree order or the narrowed list)."""
    if searched is None:
        return cache.order_positions().get(name)
    return next((i for i, ni in enumerate(searched) if ni.name == name), None)
