"""Raw resource scores remembered per cache slot, for the pods that request the same amounts.

The pods of one template request the same amounts, and a node's NodeResourcesFit and
NodeResourcesBalancedAllocation scores depend only on those amounts and on the node's allocatable
and requested columns. So each plugin remembers, per requested-amounts vector, every node's score
with the cache's change-log position (`Cache.changes_seen`) it holds for; a cycle first scores
again the slots changed since (usually the node the previous pod was assumed on), one by one with
Python's integers and floats (`one`, exactly the vectorised scorer's arithmetic) when they are
few, then reads the scores of its nodes. Off in reference mode (`KUBETAINT_REFERENCE=1`): every
ask is scored afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from kubetaint.scheduler.cache import Cache, IntArray
from kubetaint.scheduler.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from kubetaint.scheduler.status import MAX_NODE_SCORE
from kubetaint.speed.memo import Memo

ResourceSpec = tuple[str, int]
_BASIC = (CPU, MEMORY, EPHEMERAL_STORAGE)
#: Up to this many stale slots are scored one by one; more go through the vectorised scorer.
ONE_BY_ONE = 16
#: Amounts at or past this go through the vectorised scorer (int64 products, exact floats).
_EXACT_LIMIT = 1 << 53
_LIMIT = 64
#: More changed slots than this since the last ask: every node is scored afresh.
MAX_CHANGED = 256

#: (cache, slots, pod amounts) -> raw scores of those slots.
BatchScorer = Callable[[Cache, IntArray, list[int]], IntArray]
#: (alloc, req) of one node (Python ints) -> its raw score.
OneScorer = Callable[[list[int], list[int]], int]


def row_inputs(
    cache: Cache, slot: int, resources: Sequence[ResourceSpec], pod_req: list[int], use_requested: bool
) -> tuple[list[int], list[int]] | None:
    """resource_allocation.inputs_from_cache for one slot, as Python ints (None: too large to
    score exactly outside numpy)."""
    alloc: list[int] = []
    req: list[int] = []
    for i, (name, _) in enumerate(resources):
        col = cache.columns.get(name)
        if (pod_req[i] == 0 and name not in _BASIC) or col is None:
            alloc.append(0)
            req.append(0)
            continue
        # (ndarray.item gives the Python int without making a numpy scalar first)
        if not use_requested and name == CPU:
            used = cache.nonzero_cpu.item(slot)
        elif not use_requested and name == MEMORY:
            used = cache.nonzero_memory.item(slot)
        else:
            used = cache.req.item(slot, col)
        a, r = cache.alloc.item(slot, col), used + pod_req[i]
        if not (-_EXACT_LIMIT < a < _EXACT_LIMIT and -_EXACT_LIMIT < r < _EXACT_LIMIT):
            return None
        alloc.append(a)
        req.append(r)
    return alloc, req


def _weighted_one(per: list[int], alloc: list[int], weights: Sequence[int]) -> int:
    total = weight_sum = 0
    for p, a, w in zip(per, alloc, weights, strict=True):
        if a != 0:
            total += p * w
            weight_sum += w
    return total // weight_sum if weight_sum > 0 else 0


def least_allocated_one(alloc: list[int], req: list[int], weights: Sequence[int]) -> int:
    """resource_allocation.least_allocated of one node."""
    per = [0 if a == 0 or r > a else (a - r) * MAX_NODE_SCORE // a for a, r in zip(alloc, req, strict=True)]
    return _weighted_one(per, alloc, weights)


def most_allocated_one(alloc: list[int], req: list[int], weights: Sequence[int]) -> int:
    """resource_allocation.most_allocated of one node."""
    per = [0 if a == 0 else min(r, a) * MAX_NODE_SCORE // a for a, r in zip(alloc, req, strict=True)]
    return _weighted_one(per, alloc, weights)


def balanced_one(alloc: list[int], req: list[int]) -> int:
    """resource_allocation.balanced of one node (float64 arithmetic in the same order)."""
    if len(alloc) == 2:
        spread = 0.0
        if alloc[0] != 0 and alloc[1] != 0:
            f0 = min(float(req[0]) / float(alloc[0]), 1.0)
            f1 = min(float(req[1]) / float(alloc[1]), 1.0)
            spread = abs((f0 - f1) / 2)
        return int((1 - spread) * MAX_NODE_SCORE)
    fractions = [min(float(r) / float(a), 1.0) for a, r in zip(alloc, req, strict=True) if a != 0]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = float(np.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions)))
    return int((1 - std) * MAX_NODE_SCORE)


class SlotScores:
    """One plugin's remembered raw scores: per requested-amounts vector, every node's score, kept
    current from the cache's change log (the slots whose node or pods changed are scored again
    when next asked; a reshaped cache or a long change list scores every node afresh)."""

    def __init__(
        self,
        batch: BatchScorer,
        one: OneScorer | None,
        resources: Sequence[ResourceSpec],
        use_requested: bool,
    ) -> None:
        self._batch = batch
        self._one = one
        self._resources = tuple(resources)
        self._use_requested = use_requested
        self._entries: Memo[tuple[int, ...], _Remembered] = Memo("scheduler.slot_scores", _LIMIT)

    def scores(self, cache: Cache, slots: IntArray, pod_req: list[int]) -> IntArray:
        """The raw scores of `slots`, exactly as `batch` computes them now."""
        key = (cache.serial, *pod_req)
        entry = self._entries.get(key)
        if entry is not None and entry.epoch == cache.epoch and entry.columns == len(cache.columns):
            if entry.seen != cache.changes_seen():
                changed = cache.changes_since(entry.seen, MAX_CHANGED)
                if changed is not None:
                    stale = np.array(sorted(set(changed)), np.int64)
                    entry.known[stale] = self._fresh(cache, stale, pod_req)
                    entry.seen = cache.changes_seen()
                else:
                    entry = None
        else:
            entry = None
        if entry is None:
            entry = self._entries.put(key, self._afresh(cache, pod_req))
        out: IntArray = entry.known[slots]
        return out

    def _afresh(self, cache: Cache, pod_req: list[int]) -> _Remembered:
        """Every node's score now."""
        valid = np.flatnonzero(cache.valid)
        known = np.zeros(len(cache.valid), np.int64)
        if len(valid):
            known[valid] = self._batch(cache, valid, pod_req)
        return _Remembered(known, cache.epoch, len(cache.columns), cache.changes_seen())

    def _fresh(self, cache: Cache, stale: IntArray, pod_req: list[int]) -> IntArray | list[int]:
        one = self._one
        if one is not None and len(stale) <= ONE_BY_ONE:
            fresh: list[int] = []
            for slot in stale.tolist():
                inputs = row_inputs(cache, slot, self._resources, pod_req, self._use_requested)
                if inputs is None:
                    break
                fresh.append(one(*inputs))
            else:
                return fresh
        return self._batch(cache, stale, pod_req)


class _Remembered:
    """Every slot's score for one requested-amounts vector, as of the cache's change-log
    position `seen` within its `epoch` (and with `columns` resource columns)."""

    __slots__ = ("columns", "epoch", "known", "seen")

    def __init__(self, known: IntArray, epoch: int, columns: int, seen: int) -> None:
        self.known = known
        self.epoch = epoch
        self.columns = columns
        self.seen = seen
