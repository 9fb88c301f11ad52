"""Per-node counts of pods, kept up to date from the cache's change log, for the plugins whose
verdicts depend on other pods (InterPodAffinity, PodTopologySpread).

Upstream's PreFilter/PreScore go over every NodeInfo (or those with pods with affinity) each
cycle and sum per topology pair. Here the per-node part is remembered between cycles, in numpy
columns over the cache's node slots, and brought up to date by recounting only the slots the
cache logged as changed since (a pod assumed, bound, removed; a node added or relabelled):

- `domains(key)`: each slot's value of the node label `key`, as an id (-1 without the label);
- `count(key, match)`: each slot's number of pods for which `match(pod_info)` holds;
- `groups`: the pods with pod (anti-)affinity terms, grouped by their parsed terms, each group
  with its per-slot pod count.

A cycle then sums a column per topology value with one `np.bincount`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from kubetaint.scheduler.affinity_terms import PodAffinityInfo, pod_affinity_info_or_none, raw_pod_affinity
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.podinfo import PodInfo

if TYPE_CHECKING:
    from kubetaint.scheduler.cache import BoolArray, Cache, IntArray

PodMatch = Callable[[PodInfo], bool]
#: More logged changes than this since the last look: every slot is recounted.
MAX_CHANGES = 4096
#: Remembered pod counters (cleared beyond).
COUNTERS_LIMIT = 512


class Domains:
    """The values of one node label over the cache's slots."""

    __slots__ = ("ids", "key", "value_ids", "values")

    def __init__(self, key: str, size: int) -> None:
        self.key = key
        self.ids: IntArray = np.full(size, -1, np.int64)
        self.values: list[str] = []
        self.value_ids: dict[str, int] = {}

    def set(self, slot: int, ni: NodeInfo | None) -> None:
        value = None if ni is None else ni.labels.get(self.key)
        if value is None:
            self.ids[slot] = -1
            return
        vid = self.value_ids.get(value)
        if vid is None:
            vid = self.value_ids[value] = len(self.values)
            self.values.append(value)
        self.ids[slot] = vid

    def id_of(self, labels: Mapping[str, str]) -> int:
        """The id of a node's value of the key (-1 without the label or for a value not seen)."""
        value = labels.get(self.key)
        if value is None:
            return -1
        return self.value_ids.get(value, -1)


class Counter:
    """Per-slot pod counts for one predicate."""

    __slots__ = ("counts", "match")

    def __init__(self, match: PodMatch, size: int) -> None:
        self.match = match
        self.counts: IntArray = np.zeros(size, np.int64)

    def recount(self, slot: int, pods: Iterable[PodInfo]) -> None:
        match = self.match
        self.counts[slot] = sum(1 for p in pods if match(p))


class Group:
    """The pods sharing one set of parsed pod affinity terms."""

    __slots__ = ("counts", "info", "total")

    def __init__(self, info: PodAffinityInfo, size: int) -> None:
        self.info = info
        self.counts: IntArray = np.zeros(size, np.int64)
        self.total = 0


def _pad(array: IntArray, size: int, fill: int) -> IntArray:
    if len(array) >= size:
        return array
    return np.concatenate([array, np.full(size - len(array), fill, np.int64)])


class PodIndex:
    """The remembered per-slot columns of one cache."""

    def __init__(self, cache: Cache) -> None:
        self._cache = weakref.ref(cache)
        self._size = 0
        self._seen = -1
        self._epoch = -1
        self._nodes: list[NodeInfo | None] = []
        self._slot_groups: list[dict[PodAffinityInfo, int]] = []
        self.groups: dict[PodAffinityInfo, Group] = {}
        self._domains: dict[str, Domains] = {}
        self._counters: dict[Hashable, Counter] = {}
        #: Pods with required anti-affinity terms on the cache's nodes.
        self.required_anti_pods = 0

    # ---- bringing up to date -------------------------------------------------------------------
    def refresh(self) -> None:
        cache = self._cache()
        assert cache is not None
        if cache.epoch == self._epoch and cache.changes_seen() == self._seen:
            return  # (a second plugin's look in the same cycle)
        size = len(cache.slot_nodes)
        slots: set[int]
        if size != self._size:
            self._grow(size)
        changed = cache.changes_since(self._seen, MAX_CHANGES) if self._seen >= 0 else None
        slots = set(range(size)) if changed is None else set(changed)
        if cache.epoch != self._epoch:
            nodes = self._nodes
            slots.update(s for s, ni in enumerate(cache.slot_nodes) if nodes[s] is not ni)
        if slots:
            slot_nodes = cache.slot_nodes
            for slot in slots:
                self._update_slot(slot, slot_nodes[slot])
        self._seen = cache.changes_seen()
        self._epoch = cache.epoch

    def _grow(self, size: int) -> None:
        old = self._size
        self._nodes.extend([None] * (size - old))
        self._slot_groups.extend({} for _ in range(size - old))
        for d in self._domains.values():
            d.ids = _pad(d.ids, size, -1)
        for c in self._counters.values():
            c.counts = _pad(c.counts, size, 0)
        for g in self.groups.values():
            g.counts = _pad(g.counts, size, 0)
        self._size = size

    def _update_slot(self, slot: int, ni: NodeInfo | None) -> None:
        self._nodes[slot] = ni
        for d in self._domains.values():
            d.set(slot, ni)
        pods: Iterable[PodInfo] = ni.pods.values() if ni is not None else ()
        for c in self._counters.values():
            c.recount(slot, pods)
        new: dict[PodAffinityInfo, int] = {}
        for p in pods:
            affinity = p.pod["spec"].get("affinity") if type(p.pod.get("spec")) is dict else None
            if not affinity or raw_pod_affinity(p.pod) is None:
                continue
            info = pod_affinity_info_or_none(p.pod)
            if info.has_any:
                new[info] = new.get(info, 0) + 1
        old = self._slot_groups[slot]
        if not old and not new:
            return
        for info, count in old.items():
            group = self.groups[info]
            group.counts[slot] -= count
            group.total -= count
            if info.required_anti_affinity:
                self.required_anti_pods -= count
        for info, count in new.items():
            known = self.groups.get(info)
            if known is None:
                known = self.groups[info] = Group(info, self._size)
            group = known
            group.counts[slot] += count
            group.total += count
            if info.required_anti_affinity:
                self.required_anti_pods += count
        for info in old:
            if self.groups[info].total <= 0:
                del self.groups[info]
        self._slot_groups[slot] = new

    # ---- columns -------------------------------------------------------------------------------
    def domains(self, key: str) -> Domains:
        """The label `key`'s value ids per slot (the index is up to date: `refresh` first)."""
        d = self._domains.get(key)
        if d is None:
            d = self._domains[key] = Domains(key, self._size)
            for slot, ni in enumerate(self._nodes):
                d.set(slot, ni)
        return d

    def count(self, key: Hashable, match: PodMatch) -> IntArray:
        """Per-slot counts of the pods `match` accepts; `key` names the predicate (equal keys:
        the same predicate)."""
        c = self._counters.get(key)
        if c is None:
            if len(self._counters) >= COUNTERS_LIMIT:
                self._counters.clear()
            c = self._counters[key] = Counter(match, self._size)
            for slot, ni in enumerate(self._nodes):
                if ni is not None and ni.pods:
                    c.recount(slot, ni.pods.values())
        return c.counts

    def node_at(self, slot: int) -> NodeInfo | None:
        return self._nodes[slot]


_INDEXES: weakref.WeakKeyDictionary[Cache, PodIndex] = weakref.WeakKeyDictionary()


def pod_index(cache: Cache) -> PodIndex:
    """The cache's PodIndex, brought up to date."""
    index = _INDEXES.get(cache)
    if index is None:
        index = _INDEXES[cache] = PodIndex(cache)
    index.refresh()
    return index


def domain_sums(ids: IntArray, weights: IntArray, size: int, where: BoolArray | None = None) -> IntArray:
    """Per value id, the sum of `weights` over the slots with that id (slots without the label,
    id -1, and slots outside the boolean mask `where` left out)."""
    keep = ids >= 0
    if where is not None:
        keep &= where
    sums: IntArray = np.bincount(ids[keep], weights=weights[keep], minlength=size).astype(np.int64)
    return sums
