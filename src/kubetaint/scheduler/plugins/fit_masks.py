"""NodeResourcesFit's pass masks remembered per requested amounts (speeds up the filter of the
pods that request what an earlier pod did; off in reference mode, `KUBETAINT_REFERENCE=1`).

Whether a node fits a pod depends only on the amounts the pod requests and on the node's
allocatable, requested and pod-count columns, which change only on the slots the cache logs
(`Cache.changes_since`). So the mask over every slot is remembered per requested amounts with the
change-log position and epoch it holds for, and a later pod asking with the same amounts has the
slots changed since judged again one by one (usually the node the previous pod went to): the
same verdicts as the vectorised filter over every slot, in time that does not grow with the
number of nodes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubetaint.speed.memo import Memo

if TYPE_CHECKING:
    from kubetaint.scheduler.cache import BoolArray, Cache

#: (resource, amount) the pod requests, in the filter's order (amounts > 0, resources not ignored).
Wanted = tuple[tuple[str, int], ...]
#: More changes than this since a mask was taken: every slot is judged afresh (vectorised).
MAX_CHANGES = 64
#: Remembered masks (cleared beyond).
LIMIT = 64


class _Mask:
    __slots__ = ("epoch", "mask", "seen")

    def __init__(self, epoch: int, seen: int, mask: BoolArray) -> None:
        self.epoch, self.seen, self.mask = epoch, seen, mask


class FitMasks:
    """One NodeResourcesFit plugin's remembered masks."""

    def __init__(self) -> None:
        self._masks: Memo[tuple[int, Wanted], _Mask] = Memo("scheduler.fit_masks", LIMIT)

    def mask(self, cache: Cache, wanted: Wanted) -> BoolArray:
        """Per slot, whether the node has room for one more pod and for every wanted amount
        (every column of `wanted` exists in the cache)."""
        key = (cache.serial, wanted)
        known = self._masks.get(key)
        if known is not None and known.epoch == cache.epoch:
            changed = cache.changes_since(known.seen, MAX_CHANGES)
            if changed is not None:
                mask = known.mask
                for slot in set(changed):
                    mask[slot] = fits_one(cache, slot, wanted)
                known.seen = cache.changes_seen()
                return mask
        mask = vectorised(cache, wanted)
        self._masks.put(key, _Mask(cache.epoch, cache.changes_seen(), mask))
        return mask


def vectorised(cache: Cache, wanted: Wanted) -> BoolArray:
    mask: BoolArray = cache.pod_count < cache.allowed_pods
    columns = cache.columns
    for name, amount in wanted:
        col = columns[name]
        mask &= cache.req[:, col] + amount <= cache.alloc[:, col]
    return mask


def fits_one(cache: Cache, slot: int, wanted: Wanted) -> bool:
    """`vectorised(cache, wanted)[slot]` with Python integers."""
    if cache.pod_count.item(slot) >= cache.allowed_pods.item(slot):
        return False
    columns, req, alloc = cache.columns, cache.req, cache.alloc
    for name, amount in wanted:
        col = columns[name]
        if req.item(slot, col) + amount > alloc.item(slot, col):
            return False
    return True
