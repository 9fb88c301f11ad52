"""Per-node counts of pods, kept up to date from the cache's change log, for the plugins whose
verdicts depend on other pods (InterPodAffinity, PodTopologySpread) or on every node
(ImageLocality).

Upstream's PreFilter/PreScore go over every NodeInfo (or those with pods with affinity) each
cycle and sum per topology pair. Here the per-node part is remembered between cycles, in numpy
columns over the cache's node slots, and brought up to date from the cache's events since: the
pods that left or arrived on a slot (assumed, bound, relabelled, removed: `Cache.pod_changes`)
and the slots whose node was added, removed, relabelled or reports other images. When the
cache's logs no longer reach back (or hold too much), and at every look in reference mode
(`KUBETAINT_REFERENCE=1`), the slots the cache logged as changed are compared with the pods
counted there instead (every slot after a long pause):

- `domains(key)`: each slot's value of the node label `key`, as an id (-1 without the label);
- `count(key, match)`: each slot's number of pods for which `match(pod_info)` holds;
- `groups`: the pods with pod (anti-)affinity terms, grouped by their parsed terms, each group
  with its per-slot pod count;
- `image_states`: per image name listed in nodes' `status.images`, its size and node count.

A cycle reads per topology value sums (`sums(holder, key)`): a counter's or group's counts summed
per value of a node label, kept up to date with the counts (a pod counted or uncounted adds to its
node's value; a node relabelled moves its count), as upstream's PreFilter state keeps
per-topology-pair counts up to date through AddPod/RemovePod. The first ask sums the column with
one `np.bincount`; in reference mode (`KUBETAINT_REFERENCE=1`) every ask does.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from kubetaint.scheduler.affinity_terms import PodAffinityInfo, pod_affinity_info_or_none, raw_pod_affinity
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.pod_columns import (
    Counter,
    Domains,
    Group,
    Holder,
    PodMatch,
    domain_sums,
    pad,
    required_pair,
)
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.speed.memo import Memo
from kubetaint.speed.reference import reference_mode

if TYPE_CHECKING:
    from kubetaint.scheduler.cache import BoolArray, Cache, IntArray

__all__ = ["Counter", "Holder", "PodIndex", "domain_sums", "pod_index", "required_pair"]

#: More logged changes than this since the last look: every slot is recounted.
MAX_CHANGES = 4096
#: Remembered pod counters (cleared beyond).
COUNTERS_LIMIT = 512
#: A counter no cycle asked for in this many looks is dropped (every counter is recounted on
#: each changed node: those of pods long scheduled would cost every cycle for nothing).
COUNTER_IDLE_LOOKS = 256


def _pod_labels(p: PodInfo) -> Mapping[str, str]:
    meta = p.pod.get("metadata")
    labels = meta.get("labels") if type(meta) is dict else None
    if type(labels) is dict:  # (the usual: no abstract class check)
        return labels
    return labels if isinstance(labels, Mapping) else {}


class PodIndex:
    """The remembered per-slot columns of one cache."""

    def __init__(self, cache: Cache) -> None:
        self._cache = weakref.ref(cache)
        self._size = 0
        self._seen = -1
        self._epoch = -1
        #: the cache's pod and node change log positions last followed, None before the first look
        self._pod_seen: tuple[int, int] | None = None
        self._nodes: list[NodeInfo | None] = []
        #: The pods each slot's counts were last taken from.
        self._slot_pods: list[dict[str, PodInfo]] = []
        #: Per label (key, value), the pods counted that carry it, with their slot (kept from the
        #: first count of a predicate that names a label pair on: a new counter then looks only
        #: at the pods that may match instead of every pod).
        self._pods_by_pair: dict[tuple[str, str], dict[tuple[int, str], PodInfo]] | None = None
        #: Per slot, the node's `status.images` object and the names it lists.
        self._slot_images: list[tuple[Any, frozenset[str]]] = []
        #: Image name -> [size in bytes, number of nodes listing it].
        self.image_states: dict[str, list[int]] = {}
        self.groups: dict[PodAffinityInfo, Group] = {}
        self._domains: dict[str, Domains] = {}
        self._counters: dict[Hashable, Counter] = {}
        self._by_pair: dict[tuple[str, str], list[Counter]] | None = None
        self._generic: list[Counter] = []
        self._anti_by_pair: dict[tuple[str, str], list[Group]] | None = None
        self._scoring: list[Group] | None = None
        self._anti_generic: list[Group] = []
        self._looks = 0
        #: Bumped whenever a slot's node or one of its remembered label values changes.
        self.layout = 0
        #: answers about the node labels, each with the layout it was worked out at (a changed
        #: layout makes it stale)
        self._with_keys: Memo[tuple[str, ...], tuple[int, BoolArray]] = Memo(
            "scheduler.pod_index.with_keys", limit=64
        )
        self._present: Memo[str, tuple[int, BoolArray]] = Memo("scheduler.pod_index.values_present", limit=64)
        self._same_nodes: Memo[tuple[tuple[str, ...], str], tuple[int, bool]] = Memo(
            "scheduler.pod_index.same_nodes", limit=64
        )
        self._every_node_has: Memo[str, tuple[int, bool]] = Memo(
            "scheduler.pod_index.every_node_has", limit=64
        )
        #: Pods with required anti-affinity terms on the cache's nodes.
        self.required_anti_pods = 0

    # ---- bringing up to date -------------------------------------------------------------------
    def refresh(self) -> None:
        cache = self._cache()
        assert cache is not None
        if cache.epoch == self._epoch and cache.changes_seen() == self._seen:
            return  # (a second plugin's look in the same cycle)
        self._looks += 1
        if self._looks % 64 == 0 and self._counters:
            idle = self._looks - COUNTER_IDLE_LOOKS
            kept = {k: c for k, c in self._counters.items() if c.used >= idle}
            if len(kept) != len(self._counters):
                self._counters, self._by_pair = kept, None
        size = len(cache.slot_nodes)
        slots: set[int]
        if size != self._size:
            self._grow(size)
        # (in reference mode every look compares the changed slots' pods instead)
        seen = self._pod_seen
        events = (
            cache.pod_changes_since(seen, MAX_CHANGES) if seen is not None and not reference_mode() else None
        )
        cache.drop_pod_changes()  # (followed below, or counted afresh from the slots)
        self._pod_seen = cache.pod_changes_seen()
        if events is not None:
            node_slots, pod_changes = events
            slot_nodes = cache.slot_nodes
            for slot in set(node_slots):
                self._update_node(slot, slot_nodes[slot])
            for slot, gone, came in pod_changes:
                self._pod_moved(slot, gone, came)
            self._seen = cache.changes_seen()
            self._epoch = cache.epoch
            return
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
        self._slot_pods.extend({} for _ in range(size - old))
        self._slot_images.extend((None, frozenset()) for _ in range(size - old))
        for d in self._domains.values():
            d.ids = pad(d.ids, size, -1)
        for c in self._counters.values():
            c.counts = pad(c.counts, size, 0)
        for g in self.groups.values():
            g.counts = pad(g.counts, size, 0)
        self._size = size

    def _pod_moved(self, slot: int, gone: PodInfo | None, came: PodInfo | None) -> None:
        """A pod change of the cache: `gone` left the slot, `came` arrived (the version counted
        before leaves, whichever object the cache names: they count alike)."""
        pods = self._slot_pods[slot]
        left = [] if gone is None else [p for p in (pods.pop(gone.key, None),) if p is not None]
        arrived: list[PodInfo] = []
        if came is not None:
            before = pods.get(came.key)
            if before is not None:
                left.append(before)
            pods[came.key] = came
            arrived.append(came)
        if left or arrived:
            self._count(slot, left, arrived)

    def _update_node(self, slot: int, ni: NodeInfo | None) -> None:
        """Bring one slot's node up to date: its presence, labels and images."""
        if self._nodes[slot] is not ni:
            self.layout += 1
        self._nodes[slot] = ni
        status = ni.node.get("status") if ni is not None else None
        images = status.get("images") if type(status) is dict else None
        if images is not self._slot_images[slot][0]:
            self._set_images(slot, images)
        for d in self._domains.values():
            before = int(d.ids[slot])
            if d.set(slot, ni):
                self.layout += 1
                self._move_sums(d, slot, before)

    def _update_slot(self, slot: int, ni: NodeInfo | None) -> None:
        """Bring one slot up to date: its labels, and the counts by the pods that left or
        arrived since its last look (a refreshed PodInfo counts as leaving and arriving)."""
        self._update_node(slot, ni)
        old = self._slot_pods[slot]
        new: dict[str, PodInfo] = ni.pods if ni is not None else {}
        if not old and not new:
            return
        if old:
            gone = [p for key, p in old.items() if new.get(key) is not p]
            came = [p for key, p in new.items() if old.get(key) is not p]
        else:  # (a first count: every pod came)
            gone, came = [], list(new.values())
        if not gone and not came:
            return
        self._slot_pods[slot] = dict(new)
        self._count(slot, gone, came)

    def _count(self, slot: int, gone: list[PodInfo], came: list[PodInfo]) -> None:
        """The counts of `slot` without the pods `gone` and with the pods `came`."""
        if self._pods_by_pair is not None:
            self._index_pairs(slot, gone, came)
        if self._counters:
            by_pair, generic = self._counter_index()
            for sign, pods in ((1, came), (-1, gone)):
                for p in pods:
                    # only the counters whose required label pair the pod has can accept it
                    labels = (p.pod.get("metadata") or {}).get("labels") or {}
                    candidates = list(generic)
                    for pair in labels.items():
                        found = by_pair.get(pair)
                        if found:
                            candidates += found
                    for c in candidates:
                        if c.match(p):
                            c.counts[slot] += sign
                            if c.sums:
                                self._add_sums(c, slot, sign)
        for sign, pods in ((-1, gone), (1, came)):
            for p in pods:
                spec = p.pod.get("spec")
                if type(spec) is not dict or not spec.get("affinity") or raw_pod_affinity(p.pod) is None:
                    continue
                info = pod_affinity_info_or_none(p.pod, p.facts.pod_affinity_sig)
                if info.has_any:
                    self._add_to_group(info, slot, sign)

    def _set_images(self, slot: int, images: Any) -> None:
        """The node's `status.images` (the cache's imageStates: a name's size is the one first
        reported; its node count how many nodes list it now)."""
        states = self.image_states
        for name in self._slot_images[slot][1]:
            state = states[name]
            state[1] -= 1
            if state[1] <= 0:
                del states[name]
        names: dict[str, int] = {}
        for image in images if isinstance(images, list) else ():
            if not isinstance(image, Mapping):
                continue
            size = image.get("sizeBytes")
            for name in image.get("names") or ():
                if isinstance(name, str) and name not in names:
                    names[name] = size if isinstance(size, int) and not isinstance(size, bool) else 0
        for name, size in names.items():
            known = states.get(name)
            if known is None:
                states[name] = [size, 1]
            else:
                known[1] += 1
        self._slot_images[slot] = (images, frozenset(names))

    def images_at(self, slot: int) -> frozenset[str]:
        """The image names the slot's node lists in `status.images`."""
        return self._slot_images[slot][1]

    def anti_affinity_groups(self, labels: Mapping[str, str]) -> list[Group]:
        """The groups with a required anti-affinity term that may match a pod with `labels` (those
        whose term needs a label pair the pod has, and those whose terms pin none)."""
        if self._anti_by_pair is None:
            by_pair: dict[tuple[str, str], list[Group]] = {}
            generic: list[Group] = []
            for group in self.groups.values():
                terms = group.info.required_anti_affinity
                if not terms:
                    continue
                pairs = [required_pair(t.selector) for t in terms]
                if any(pair is None for pair in pairs):
                    generic.append(group)
                    continue
                for pair in dict.fromkeys(pairs):
                    assert pair is not None
                    by_pair.setdefault(pair, []).append(group)
            self._anti_by_pair, self._anti_generic = by_pair, generic
        found = list(self._anti_generic)
        seen: set[int] = set()
        for pair in labels.items():
            for group in self._anti_by_pair.get(pair, ()):
                if id(group) not in seen:
                    seen.add(id(group))
                    found.append(group)
        return found

    def scoring_groups(self) -> list[Group]:
        """The groups whose terms can score an incoming pod, so that PreScore skips the others
        (off with KUBETAINT_REFERENCE=1: every group).

        Those with required affinity (hardPodAffinityWeight), preferred affinity or preferred
        anti-affinity terms (InterPodAffinity's PreScore), in the order of `groups` (read-only)."""
        if reference_mode():
            return list(self.groups.values())
        if self._scoring is None:
            self._scoring = [
                g
                for g in self.groups.values()
                if g.info.required_affinity or g.info.preferred_affinity or g.info.preferred_anti_affinity
            ]
        return self._scoring

    def _add_to_group(self, info: PodAffinityInfo, slot: int, count: int) -> None:
        group = self.groups.get(info)
        if group is None:
            self._anti_by_pair = self._scoring = None
            group = self.groups[info] = Group(info, self._size)
        group.counts[slot] += count
        group.total += count
        if group.sums:
            self._add_sums(group, slot, count)
        if info.required_anti_affinity:
            self.required_anti_pods += count
        if group.total <= 0:
            del self.groups[info]
            self._anti_by_pair = self._scoring = None

    # ---- per-value sums ------------------------------------------------------------------------
    def _add_sums(self, holder: Holder, slot: int, count: int) -> None:
        """`count` pods more (or fewer) counted on `slot`: its value's sum of each key follows."""
        for key in holder.sums:
            vid = int(self._domains[key].ids[slot])
            if vid < 0:
                continue
            sums = holder.sums[key]
            if vid >= len(sums):
                sums = holder.sums[key] = pad(sums, len(self._domains[key].values), 0)
            sums[vid] += count

    def _move_sums(self, d: Domains, slot: int, before: int) -> None:
        """The slot's value of `d.key` changed from the id `before`: its counts move along."""
        after = int(d.ids[slot])
        holders: list[Holder] = [*self._counters.values(), *self.groups.values()]
        for holder in holders:
            sums = holder.sums.get(d.key)
            count = int(holder.counts[slot]) if sums is not None else 0
            if not count:
                continue
            assert sums is not None
            if before >= 0:
                sums[before] -= count
            if after >= 0:
                if after >= len(sums):
                    sums = holder.sums[d.key] = pad(sums, len(d.values), 0)
                sums[after] += count

    def sums(self, holder: Holder, key: str) -> IntArray:
        """Per-topology-value counts kept up to date instead of summed over every node per cycle
        (off with KUBETAINT_REFERENCE=1: summed afresh at every ask).

        Per value id of the node label `key`, the holder's counts summed over the slots with that
        value (a fresh array, one entry per value seen), kept up to date from the first ask on."""
        d = self.domains(key)
        if reference_mode():
            return domain_sums(d.ids, holder.counts, len(d.values))
        known = holder.sums.get(key)
        if known is None:
            known = holder.sums[key] = domain_sums(d.ids, holder.counts, len(d.values))
        elif len(known) < len(d.values):
            known = holder.sums[key] = pad(known, len(d.values), 0)
        return known.copy()

    def values_present(self, key: str) -> BoolArray:
        """Per value id of the node label `key`, whether a node in the cache has it now (read-only;
        remembered until the layout changes, worked out at every ask with KUBETAINT_REFERENCE=1)."""
        known = self._present.get(key)
        if known is not None and known[0] == self.layout:
            return known[1]
        d = self.domains(key)
        present: BoolArray = np.zeros(len(d.values), np.bool_)
        ids = d.ids[d.ids >= 0]
        present[ids] = True
        self._present.put(key, (self.layout, present))
        return present

    def every_node_has(self, key: str) -> bool:
        """Whether every node in the cache has the label `key` (remembered until the layout
        changes, worked out at every ask with KUBETAINT_REFERENCE=1)."""
        known = self._every_node_has.get(key)
        if known is not None and known[0] == self.layout:
            return known[1]
        with_key = self.with_keys((key,))
        present = sum(ni is not None for ni in self._nodes)
        every = int(np.count_nonzero(with_key)) == present
        self._every_node_has.put(key, (self.layout, every))
        return every

    def same_nodes(self, keys: tuple[str, ...], key: str) -> bool:
        """Whether the nodes with every label of `keys` are the nodes with the label `key`
        (remembered until the layout changes, worked out at every ask with KUBETAINT_REFERENCE=1)."""
        known = self._same_nodes.get((keys, key))
        if known is not None and known[0] == self.layout:
            return known[1]
        same = keys == (key,) or bool(np.array_equal(self.with_keys(keys), self.with_keys((key,))))
        self._same_nodes.put((keys, key), (self.layout, same))
        return same

    # ---- columns -------------------------------------------------------------------------------
    def domains(self, key: str) -> Domains:
        """The label `key`'s value ids per slot (the index is up to date: `refresh` first)."""
        d = self._domains.get(key)
        if d is None:
            d = self._domains[key] = Domains(key, self._size)
            for slot, ni in enumerate(self._nodes):
                d.set(slot, ni)
        return d

    def _counter_index(self) -> tuple[dict[tuple[str, str], list[Counter]], list[Counter]]:
        """The counters by the label pair a pod needs to be accepted, and those without one."""
        if self._by_pair is None:
            by_pair: dict[tuple[str, str], list[Counter]] = {}
            generic: list[Counter] = []
            for c in self._counters.values():
                if c.pair is None:
                    generic.append(c)
                else:
                    by_pair.setdefault(c.pair, []).append(c)
            self._by_pair, self._generic = by_pair, generic
        return self._by_pair, self._generic

    def _index_pairs(self, slot: int, gone: Iterable[PodInfo], came: Iterable[PodInfo]) -> None:
        """Bring the label-pair index up to date with the pods that left or arrived on `slot`."""
        index = self._pods_by_pair
        assert index is not None
        for p in gone:
            for pair in _pod_labels(p).items():
                held = index.get(pair)
                if held is not None:
                    held.pop((slot, p.key), None)
                    if not held:
                        del index[pair]
        for p in came:
            for pair in _pod_labels(p).items():
                held = index.get(pair)
                if held is None:
                    held = index[pair] = {}
                held[(slot, p.key)] = p

    def _pair_index(self) -> dict[tuple[str, str], dict[tuple[int, str], PodInfo]]:
        if self._pods_by_pair is None:
            # _index_pairs(slot, (), pods.values()) of every slot, inlined (every pod counted)
            index: dict[tuple[str, str], dict[tuple[int, str], PodInfo]] = {}
            for slot, pods in enumerate(self._slot_pods):
                for key, p in pods.items():  # (key is p.key)
                    labels = _pod_labels(p)
                    for pair in labels.items():
                        held = index.get(pair)
                        if held is None:
                            held = index[pair] = {}
                        held[(slot, key)] = p
            self._pods_by_pair = index
        return self._pods_by_pair

    def known_counter(self, key: Hashable) -> Counter | None:
        """The counter of the predicate named `key` if one is kept (None: ask `counter`)."""
        c = self._counters.get(key)
        if c is not None:
            c.used = self._looks
        return c

    def counter(self, key: Hashable, match: PodMatch, pair: tuple[str, str] | None = None) -> Counter:
        """The per-slot counts (`counts`) and per-value `sums` of the pods `match` accepts; `key`
        names the predicate (equal keys: the same predicate); `pair`: a label (key, value) every
        pod it accepts has, if any (then `match` is asked only about pods with that label)."""
        c = self._counters.get(key)
        if c is None:
            if len(self._counters) >= COUNTERS_LIMIT:
                self._counters.clear()
                self._by_pair = None
            c = self._counters[key] = Counter(match, self._size, self._looks, pair)
            if self._by_pair is not None:  # (what _counter_index would now make of the counters)
                if pair is None:
                    self._generic.append(c)
                else:
                    self._by_pair.setdefault(pair, []).append(c)
            if pair is None:
                for slot, pods in enumerate(self._slot_pods):
                    if pods:
                        c.recount(slot, pods.values())
            else:  # only the pods with the pair may match
                slots = [slot for (slot, _), p in self._pair_index().get(pair, {}).items() if match(p)]
                if slots:
                    c.counts = np.bincount(slots, minlength=self._size).astype(np.int64, copy=False)
        c.used = self._looks
        return c

    def with_keys(self, keys: tuple[str, ...]) -> BoolArray:
        """Per slot, whether a node is there with every label of `keys` (read-only)."""
        known = self._with_keys.get(keys)
        if known is not None and known[0] == self.layout:
            return known[1]
        mask: BoolArray = np.fromiter((ni is not None for ni in self._nodes), np.bool_, self._size)
        for key in keys:
            mask &= self.domains(key).ids >= 0
        self._with_keys.put(keys, (self.layout, mask))
        return mask

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
