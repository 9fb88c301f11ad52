"""The columns a `kubetaint.scheduler.pod_index.PodIndex` keeps over the cache's node slots: a
node label's values by slot (`Domains`), per-slot counts of the pods a predicate matches
(`Counter`) or of the pods sharing one set of pod affinity terms (`Group`), and the per-value sums
a cycle reads (`domain_sums`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from kubetaint.api.selectors import LabelSelector
from kubetaint.scheduler.affinity_terms import PodAffinityInfo
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.podinfo import PodInfo

if TYPE_CHECKING:
    from kubetaint.scheduler.cache import BoolArray, IntArray

PodMatch = Callable[[PodInfo], bool]


class Domains:
    """The values of one node label over the cache's slots."""

    __slots__ = ("ids", "key", "value_ids", "values")

    def __init__(self, key: str, size: int) -> None:
        self.key = key
        self.ids: IntArray = np.full(size, -1, np.int64)
        self.values: list[str] = []
        self.value_ids: dict[str, int] = {}

    def set(self, slot: int, ni: NodeInfo | None) -> bool:
        """Record the slot's value; whether it changed."""
        value = None if ni is None else ni.labels.get(self.key)
        vid = -1
        if value is not None:
            known = self.value_ids.get(value)
            if known is None:
                known = self.value_ids[value] = len(self.values)
                self.values.append(value)
            vid = known
        if self.ids[slot] == vid:
            return False
        self.ids[slot] = vid
        return True

    def id_of(self, labels: Mapping[str, str]) -> int:
        """The id of a node's value of the key (-1 without the label or for a value not seen)."""
        value = labels.get(self.key)
        if value is None:
            return -1
        return self.value_ids.get(value, -1)


class Counter:
    """Per-slot pod counts for one predicate (`used`: the index's look it last served; `sums`: the
    counts summed per value of the node labels asked for, kept up to date)."""

    __slots__ = ("counts", "match", "pair", "sums", "used")

    def __init__(self, match: PodMatch, size: int, used: int, pair: tuple[str, str] | None = None) -> None:
        self.match = match
        self.counts: IntArray = np.zeros(size, np.int64)
        self.used = used
        self.pair = pair
        self.sums: dict[str, IntArray] = {}

    def recount(self, slot: int, pods: Iterable[PodInfo]) -> None:
        match = self.match
        self.counts[slot] = sum(1 for p in pods if match(p))


class Group:
    """The pods sharing one set of parsed pod affinity terms."""

    __slots__ = ("counts", "info", "sums", "total")

    def __init__(self, info: PodAffinityInfo, size: int) -> None:
        self.info = info
        self.counts: IntArray = np.zeros(size, np.int64)
        self.total = 0
        self.sums: dict[str, IntArray] = {}


#: What `PodIndex.sums` sums: per-slot counts with their per-value sums.
Holder = Counter | Group


def pad(array: IntArray, size: int, fill: int) -> IntArray:
    """`array` extended to `size` items with `fill` (itself when long enough)."""
    if len(array) >= size:
        return array
    return np.concatenate([array, np.full(size - len(array), fill, np.int64)])


def required_pair(selector: LabelSelector | None) -> tuple[str, str] | None:
    """A label (key, value) every set of labels the selector matches has, if one is pinned."""
    if selector is None:
        return None
    for key, op, values in selector.requirements:
        if op in ("=", "==", "in") and len(values) == 1:
            return (key, values[0])
    return None


def domain_sums(ids: IntArray, weights: IntArray, size: int, where: BoolArray | None = None) -> IntArray:
    """Per value id, the sum of `weights` over the slots with that id (slots without the label,
    id -1, and slots outside the boolean mask `where` left out)."""
    at = np.flatnonzero(weights)  # (most slots hold no matching pod)
    at = at[ids[at] >= 0]
    if where is not None:
        at = at[where[at]]
    sums: IntArray = np.bincount(ids[at], weights=weights[at], minlength=size).astype(np.int64)
    return sums
