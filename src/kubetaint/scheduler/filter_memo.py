"""Filter verdicts remembered per filter signature, in node-tree order, for the sequential search
of findNodesThatPassFilters (pkg/scheduler/schedule_one.go): bookkeeping only, the same verdicts
(speeds up the filters of pods that ask what an earlier pod asked; off in reference mode,
`KUBETAINT_REFERENCE=1`).

The in-tree filter plugins judge a node by the pod's spec (requests, tolerations, node
affinity and selector, host ports, nodeName: the spec facts' `filter_sig`, equal for the pods of
one template and for pods written alike) and by the node's own state (its NodeInfo and cache
columns). The vectorised filters go over every node for each pod; pods of one shape ask the
same question again and again while only a few nodes changed in between (the one the previous
pod was assumed on, a node whose pods were evicted). So the pass mask of a pod's (filter
signature, nodeName, skipped plugins) is remembered with the cache's change-log position and
epoch, and brought up to date by running the filters (one by one, `Framework.run_filter`) on the
nodes changed since. A reshaped cache (node added or removed, node order or columns changed), a
long change list or a framework with a filter plugin not known here takes the vectorised filters
afresh.

An entry also remembers the verdicts of the node-only filters (NodeUnschedulable, NodeName,
TaintToleration, NodeAffinity: they read the node, never its pods). While no node changed in
place (`Cache.node_changes`), the changed slots changed only by their pods, and a node one of
those filters rejects stays rejected: only the others are filtered again (pods of one toleration
class skip the nodes of the other classes the pods in between were placed on).

InterPodAffinity and PodTopologySpread judge a node by other pods too (those in the node's
topology domain): a cycle whose PreFilter did not skip them takes the vectorised filters afresh;
for the pods they skip (no required pod affinity, no spread constraint to enforce, no existing
pod's anti-affinity against them) their filters do not run and the memo holds as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.framework import Framework
from kubetaint.scheduler.plugins.inter_pod_affinity import InterPodAffinity
from kubetaint.scheduler.plugins.node_affinity import NodeAffinity
from kubetaint.scheduler.plugins.node_name import NodeName
from kubetaint.scheduler.plugins.node_ports import NodePorts
from kubetaint.scheduler.plugins.node_resources_fit import NodeResourcesFit
from kubetaint.scheduler.plugins.node_unschedulable import NodeUnschedulable
from kubetaint.scheduler.plugins.node_volume_limits import NodeVolumeLimits
from kubetaint.scheduler.plugins.pod_topology_spread import PodTopologySpread
from kubetaint.scheduler.plugins.taint_toleration import TaintToleration
from kubetaint.scheduler.plugins.volume_binding import VolumeBinding
from kubetaint.scheduler.plugins.volume_restrictions import VolumeRestrictions
from kubetaint.scheduler.plugins.volume_zone import VolumeZone
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.speed.memo import Memo
from kubetaint.speed.reference import reference_mode

if TYPE_CHECKING:
    from kubetaint.scheduler.cache import BoolArray, Cache

#: Filter plugins whose verdicts depend only on the pod's spec facts and the node's NodeInfo
#: and cache columns (whose every change the cache logs).
SPEC_ONLY_FILTERS: tuple[type, ...] = (
    NodeUnschedulable,
    NodeName,
    TaintToleration,
    NodeAffinity,
    NodePorts,
    NodeResourcesFit,
)
#: Filter plugins whose verdicts depend on other pods too: remembered only for the pods their
#: PreFilter skips (their filter then does not run).
POD_AWARE_FILTERS: tuple[type, ...] = (
    InterPodAffinity,
    PodTopologySpread,
    # (these read claims, volumes and CSINodes besides the node: remembered only when skipped)
    VolumeRestrictions,
    NodeVolumeLimits,
    VolumeBinding,
    VolumeZone,
)
#: Spec-only filter plugins that read the node alone, never the pods on it: their verdicts change
#: only when the node itself changes.
NODE_ONLY_FILTERS: tuple[type, ...] = (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity)
#: More changes than this (repeats counted) are not looked through: every node is filtered
#: vectorised instead.
MAX_CHANGES = 256
#: More changed nodes than this are filtered vectorised over every node instead (one node's
#: filters cost about what the vectorised filters over a few hundred nodes do).
MAX_CHANGED_NODES = 16
#: Remembered masks per framework (cleared beyond).
LIMIT = 64


def memo_applies(fw: Framework) -> bool:
    """Whether every filter plugin of `fw` is one whose verdicts may be remembered (the
    pod-aware ones only in cycles that skip them)."""
    return all(type(pl) in SPEC_ONLY_FILTERS + POD_AWARE_FILTERS for pl in fw.filter_plugins)


def pod_aware_filters(fw: Framework) -> frozenset[str]:
    """The names of the filter plugins of `fw` whose verdicts depend on other pods: a cycle
    takes its verdicts from memory only when their PreFilter skipped them all."""
    return frozenset(pl.name for pl in fw.filter_plugins if type(pl) in POD_AWARE_FILTERS)


class _Entry:
    __slots__ = ("epoch", "mask", "node_changes", "node_only", "node_only_slots", "seen")

    def __init__(self, cache: Cache, mask: BoolArray, node_only: BoolArray) -> None:
        self.epoch = cache.epoch
        self.seen = cache.changes_seen()
        self.node_changes = cache.node_changes
        self.mask = mask
        #: the node-only filters' pass mask, in node-tree order
        self.node_only = node_only
        #: the slots of the nodes `node_only` passes (made at the first look that needs them)
        self.node_only_slots: set[int] | None = None

    def passing_slots(self, cache: Cache) -> set[int]:
        """The slots of the nodes the node-only filters pass (the cache at this entry's epoch)."""
        slots = self.node_only_slots
        if slots is None:
            slots = self.node_only_slots = set(cache.order()[self.node_only].tolist())
        return slots


class FilterMemo:
    """One framework's remembered pass masks in node-tree order."""

    def __init__(self, fw: Framework) -> None:
        self.fw = fw
        self.applies = memo_applies(fw)
        self.pod_aware = pod_aware_filters(fw)
        self._entries: Memo[tuple[Any, ...], _Entry] = Memo("scheduler.filter_memo", LIMIT)

    def ordered_mask(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray:
        """`fw.run_filter_batch(state, pi, cache)[cache.order()]`, from memory when it can be.
        The array is shared: read-only to the caller."""
        fw = self.fw
        if not self.applies or not self.pod_aware <= state.skip_filter or reference_mode():
            return fw.run_filter_batch(state, pi, cache)[cache.order()]
        key = (cache.serial, pi.facts.filter_sig, pi.node_name, frozenset(state.skip_filter))
        entry = self._entries.get(key)
        if entry is not None and entry.epoch == cache.epoch:
            changed = cache.changes_since(entry.seen, MAX_CHANGES)
            slots = set(changed) if changed is not None else None
            position = cache.slot_position
            pods_only = entry.node_changes == cache.node_changes
            if slots and pods_only:
                # a node a node-only filter rejects stays rejected while only its pods change
                slots &= entry.passing_slots(cache)
            if slots is not None and len(slots) <= MAX_CHANGED_NODES:
                mask = entry.mask
                nodes, run_filter = cache.slot_nodes, fw.run_filter
                for slot in slots:
                    ni = nodes[slot]
                    assert ni is not None  # a slot emptied reshapes the cache
                    at = position(slot)
                    if not pods_only:
                        passes = fw.run_filter_part(state, pi, ni, NODE_ONLY_FILTERS)
                        entry.node_only[at] = passes
                        if entry.node_only_slots is not None:
                            if passes:
                                entry.node_only_slots.add(slot)
                            else:
                                entry.node_only_slots.discard(slot)
                    mask[at] = run_filter(state, pi, ni).is_success()
                entry.seen = cache.changes_seen()
                entry.node_changes = cache.node_changes
                return entry.mask
        order = cache.order()  # (may reshape: taken before the entry records the epoch)
        mask, node_only = fw.run_filter_batch_split(state, pi, cache, NODE_ONLY_FILTERS)
        mask, node_only = mask[order], node_only[order]
        self._entries.put(key, _Entry(cache, mask, node_only))
        return mask
