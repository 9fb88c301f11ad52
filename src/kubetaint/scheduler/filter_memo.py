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

For a pod no node fits, the diagnosis (each node's first failing filter, RunFilterPlugins'
status) is remembered the same way, per filter signature: the filters run again on the nodes
changed since it was made (the replicas of a template retried after a pod was deleted, pods
written alike, ask it of a cluster where a few nodes changed).

InterPodAffinity and PodTopologySpread judge a node by other pods too (those in the node's
topology domain): a cycle whose PreFilter did not skip them takes the vectorised filters afresh;
for the pods they skip (no required pod affinity, no spread constraint to enforce, no existing
pod's anti-affinity against them) their filters do not run and the memo holds as before.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.fit_error import NodeToStatus
from kubetaint.scheduler.framework import Framework
from kubetaint.scheduler.nodeinfo import NodeInfo
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
from kubetaint.scheduler.status import Code, Status
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
    __slots__ = (
        "epoch",
        "mask",
        "node_changes",
        "node_only",
        "node_only_slots",
        "seen",
        "statuses",
        "statuses_seen",
    )

    def __init__(self, cache: Cache, mask: BoolArray, node_only: BoolArray) -> None:
        self.epoch = cache.epoch
        self.seen = cache.changes_seen()
        self.node_changes = cache.node_changes
        self.mask = mask
        #: the node-only filters' pass mask, in node-tree order
        self.node_only = node_only
        #: the slots of the nodes `node_only` passes (made at the first look that needs them)
        self.node_only_slots: set[int] | None = None
        #: every node's RunFilterPlugins status (made at the first cycle no node fits), as of
        #: the change log position `statuses_seen` in this epoch
        self.statuses: NodeStatuses | None = None
        self.statuses_seen = 0

    def keep_statuses(self, old: _Entry | None) -> None:
        """Take over the statuses of the entry this one replaces, when of the same epoch."""
        if old is not None and old.statuses is not None and old.epoch == self.epoch:
            self.statuses, self.statuses_seen = old.statuses, old.statuses_seen

    def passing_slots(self, cache: Cache) -> set[int]:
        """The slots of the nodes the node-only filters pass (the cache at this entry's epoch)."""
        slots = self.node_only_slots
        if slots is None:
            slots = self.node_only_slots = set(cache.order()[self.node_only].tolist())
        return slots


class NodeStatuses:
    """Every node's RunFilterPlugins status for one filter signature, with their summary: the
    plugins they name, how many nodes give each reason, the nodes whose status is Unschedulable."""

    __slots__ = ("_made", "_plugins", "by_name", "reasons", "unschedulable")

    def __init__(self, by_name: dict[str, Status]) -> None:
        #: by node name, in node-tree order
        self.by_name = by_name
        self.reasons: Counter[str] = Counter()
        self.unschedulable: set[str] = set()
        for name, status in by_name.items():
            self._count(name, status, 1)
        self._plugins: frozenset[str] | None = None
        #: the NodeToStatus made of them last (handed out again while they hold)
        self._made: NodeToStatus | None = None

    def _count(self, name: str, status: Status, step: int) -> None:
        reasons = self.reasons
        for reason in status.reasons:
            left = reasons[reason] + step
            if left:
                reasons[reason] = left
            else:
                del reasons[reason]
        if status.code == Code.Unschedulable:
            if step > 0:
                self.unschedulable.add(name)
            else:
                self.unschedulable.discard(name)

    def set(self, name: str, status: Status) -> None:
        """A node's status judged again."""
        self._count(name, self.by_name[name], -1)
        self.by_name[name] = status
        self._count(name, status, 1)
        self._plugins = None
        self._made = None

    def plugins(self) -> frozenset[str]:
        """The plugins the statuses name."""
        plugins = self._plugins
        if plugins is None:
            plugins = self._plugins = frozenset(st.plugin for st in self.by_name.values())
        return plugins

    def node_to_status(self, nodes: list[NodeInfo], first: tuple[str, Status] | None) -> NodeToStatus:
        """A Diagnosis's NodeToStatus of these statuses (`nodes`: the cache's, in node-tree order;
        `first`: a status set before them, which theirs replaces). Without `first`, the one made
        last while no status changed since: read-only to the caller."""
        if first is None and self._made is not None:
            return self._made
        wanted = self.unschedulable
        unschedulable = [ni.name for ni in nodes if ni.name in wanted] if wanted else []
        made = NodeToStatus(self.by_name, Counter(self.reasons), unschedulable, first=first)
        if first is None:
            self._made = made
        return made


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
        key = _key(state, pi, cache)
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
        fresh = _Entry(cache, mask, node_only)
        fresh.keep_statuses(entry)
        self._entries.put(key, fresh)
        return mask

    def node_statuses(self, state: CycleState, pi: PodInfo, cache: Cache) -> NodeStatuses | None:
        """Every node's RunFilterPlugins status, for a pod no node fits, from memory when it can
        be: the statuses of the pod's filter signature, the filters run again on the nodes
        changed since. None when the cycle's verdicts are not remembered (the caller then runs
        the filters on every node). Shared: read-only to the caller."""
        if not self.applies or not self.pod_aware <= state.skip_filter or reference_mode():
            return None
        entry = self._entries.get(_key(state, pi, cache))
        if entry is None or entry.epoch != cache.epoch:
            return None
        run_filter = self.fw.run_filter
        statuses = entry.statuses
        nodes = cache.node_list()
        if statuses is not None:
            changed = cache.changes_since(entry.statuses_seen, max(MAX_CHANGES, len(nodes) // 4))
            if changed is None:
                statuses = None
            else:
                slot_nodes = cache.slot_nodes
                for slot in set(changed):
                    ni = slot_nodes[slot]
                    assert ni is not None  # a slot emptied reshapes the cache
                    statuses.set(ni.name, run_filter(state, pi, ni))
        if statuses is None:
            statuses = NodeStatuses({ni.name: run_filter(state, pi, ni) for ni in nodes})
        entry.statuses, entry.statuses_seen = statuses, cache.changes_seen()
        return statuses


def _key(state: CycleState, pi: PodInfo, cache: Cache) -> tuple[Any, ...]:
    """What a remembered mask is kept by: the filters read nothing else of the pod."""
    return (cache.serial, pi.facts.filter_sig, pi.node_name, frozenset(state.skip_filter))
