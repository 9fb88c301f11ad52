"""The sequential search of findNodesThatPassFilters (pkg/scheduler/schedule_one.go): how many
feasible nodes to find (numFeasibleNodesToFind) and the first of them met going round the node
list from nextStartNodeIndex, found in a pass mask."""

from __future__ import annotations

import numpy as np

from kubetaint.scheduler.cache import BoolArray, IntArray

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
