"""The scheduler cache and snapshot
(mirrors pkg/scheduler/backend/cache: cache.go, node_tree.go, snapshot.go).

Nodes live in stable slots of numpy arrays (allocatable, requested, pod counts, taint-set id, ...), kept
up to date on every informer event, so filters and scores run vectorised over all nodes. Nodes with
identical taints share a taint-set id. Node order follows upstream's node tree: zones round-robin.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from kubetaint.scheduler.nodeinfo import NodeInfo, TaintKey, taint_key
from kubetaint.scheduler.podinfo import PodInfo, make_pod_info, pod_key, same_spec_facts
from kubetaint.scheduler.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, allocatable_source
from kubetaint.speed.reference import reference_mode

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
#: The change log is cleared (its readers then start afresh) when it reaches this length.
CHANGE_LOG_LIMIT = 1 << 16
#: A pod change: (slot, the PodInfo that left the slot or None, the one that arrived or None).
PodChange = tuple[int, "PodInfo | None", "PodInfo | None"]

LABEL_ZONE = "topology.kubernetes.io/zone"
#: Serial numbers of caches (`Cache.serial`), never reused in a process.
_SERIALS = itertools.count(1)
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region"


def zone_key(labels: Mapping[str, str]) -> str:
    """utilnode.GetZoneKey: region + ":\\x00:" + zone, or "" when neither is set."""
    zone = labels.get(LABEL_ZONE, labels.get(LABEL_ZONE_BETA, ""))
    region = labels.get(LABEL_REGION, labels.get(LABEL_REGION_BETA, ""))
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"


class Cache:
    """Nodes and the pods bound or assumed on them, with vectorised per-node columns."""

    def __init__(self) -> None:
        #: This cache's number, unique in the process: what is remembered about a cache is keyed
        #: by it (an object's id may be reused once the object is gone).
        self.serial = next(_SERIALS)
        self.nodes: dict[str, NodeInfo] = {}
        self.columns: dict[str, int] = {CPU: 0, MEMORY: 1, EPHEMERAL_STORAGE: 2}
        self._capacity = 0
        self.slot_nodes: list[NodeInfo | None] = []
        self._free: list[int] = []
        self.alloc: IntArray = np.zeros((0, 3), np.int64)
        self.req: IntArray = np.zeros((0, 3), np.int64)
        self.pod_count: IntArray = np.zeros(0, np.int64)
        self.allowed_pods: IntArray = np.zeros(0, np.int64)
        self.nonzero_cpu: IntArray = np.zeros(0, np.int64)
        self.nonzero_memory: IntArray = np.zeros(0, np.int64)
        self.taint_set: IntArray = np.zeros(0, np.int64)
        self.unschedulable: BoolArray = np.zeros(0, np.bool_)
        self.valid: BoolArray = np.zeros(0, np.bool_)
        #: Per slot, bumped whenever its allocatable or requested columns may change (so what is
        #: computed from them may be remembered until then: plugins.slot_scores.SlotScores).
        self.slot_version: IntArray = np.zeros(0, np.int64)
        self.taint_sets: list[list[dict[str, Any]]] = []
        self._taint_ids: dict[TaintKey, int] = {}
        self._zones: dict[str, list[str]] = {}
        self._order: IntArray | None = None
        self._order_nodes: list[NodeInfo] = []
        self._order_positions: dict[str, int] | None = None
        self.pod_nodes: dict[str, str] = {}
        self.assumed: set[str] = set()
        self._orphans: dict[str, dict[str, PodInfo]] = {}
        self.generation = 0
        #: Bumped whenever the node set, the node order or the columns change shape; between two
        #: bumps `changes_since` a remembered `changes_seen()` lists every slot whose node or pods
        #: changed since (scheduler.filter_memo.FilterMemo).
        self.epoch = 0
        self.changed_slots: list[int] = []
        self.changed_base = 0
        #: The pods that left or arrived on a node slot, in order (bounded like `changed_slots`):
        #: what counts pods per node (scheduler.pod_index) follows these events, as upstream's
        #: snapshot follows the cache's NodeInfo updates.
        self.pod_changes: list[PodChange] = []
        self.pod_changes_base = 0
        #: The slots whose node was added, removed or changed (its labels, taints, images, ...).
        self.node_changed_slots: list[int] = []
        self.node_changed_base = 0
        #: Bumped whenever a node's own scheduling parts (taints, labels, unschedulable,
        #: allocatable) change in place: while it holds still, the slots the change log lists
        #: changed only by their pods (scheduler.filter_memo skips those a node-only filter rejects).
        self.node_changes = 0
        self._slot_positions: dict[int, int] | None = None

    # ---- change log --------------------------------------------------------------------------
    def _reshape(self) -> None:
        """The node set, order or columns changed: what was derived from them is void."""
        self._order = None
        self.epoch += 1

    def _changed(self, slot: int) -> None:
        changed = self.changed_slots
        if len(changed) >= CHANGE_LOG_LIMIT:  # nobody read it for long: start afresh
            self.changed_base += len(changed)
            changed.clear()
        changed.append(slot)

    def _pod_changed(self, slot: int, old: PodInfo | None, new: PodInfo | None) -> None:
        log = self.pod_changes
        if len(log) >= CHANGE_LOG_LIMIT:  # nobody read it for long: start afresh
            self.pod_changes_base += len(log)
            log.clear()
        log.append((slot, old, new))

    def _node_changed(self, slot: int) -> None:
        log = self.node_changed_slots
        if len(log) >= CHANGE_LOG_LIMIT:
            self.node_changed_base += len(log)
            log.clear()
        log.append(slot)

    def pod_changes_seen(self) -> tuple[int, int]:
        """The pod and node change logs' positions now (to pass to `pod_changes_since` later)."""
        return self.pod_changes_base + len(self.pod_changes), self.node_changed_base + len(
            self.node_changed_slots
        )

    def pod_changes_since(
        self, seen: tuple[int, int], limit: int
    ) -> tuple[list[int], list[PodChange]] | None:
        """The slots whose node changed and the pod changes since the positions `seen`, or None
        when a log no longer reaches back that far or holds more than `limit` entries since."""
        at_pods, at_nodes = seen[0] - self.pod_changes_base, seen[1] - self.node_changed_base
        if at_pods < 0 or at_nodes < 0:
            return None
        if len(self.pod_changes) - at_pods > limit or len(self.node_changed_slots) - at_nodes > limit:
            return None
        return self.node_changed_slots[at_nodes:], self.pod_changes[at_pods:]

    def drop_pod_changes(self) -> None:
        """Forget the pod and node changes logged so far (their one reader, scheduler.pod_index,
        has followed them): the PodInfos they name are not held any longer."""
        self.pod_changes_base += len(self.pod_changes)
        self.pod_changes.clear()
        self.node_changed_base += len(self.node_changed_slots)
        self.node_changed_slots.clear()

    def changes_seen(self) -> int:
        """The change log's position now (to pass to `changes_since` later)."""
        return self.changed_base + len(self.changed_slots)

    def changes_since(self, seen: int, limit: int) -> list[int] | None:
        """The slots changed since the log position `seen` (repeats possible), or None when the
        log no longer reaches back that far or holds more than `limit` changes since."""
        at = seen - self.changed_base
        if at < 0 or len(self.changed_slots) - at > limit:
            return None
        return self.changed_slots[at:]

    def slot_position(self, slot: int) -> int:
        """The slot's position in snapshot (node tree) order (the slot of a node in the cache)."""
        if self._order is None:
            self._rebuild_order()
        if self._slot_positions is None:
            self._slot_positions = {ni.slot: i for i, ni in enumerate(self._order_nodes)}
        return self._slot_positions[slot]

    # ---- columns and slots -------------------------------------------------------------------
    def column(self, resource: str) -> int:
        """The array column of a resource, adding one for a new extended resource."""
        col = self.columns.get(resource)
        if col is None:
            col = len(self.columns)
            self.columns[resource] = col
            self._reshape()
            pad = np.zeros((self._capacity, 1), np.int64)
            self.alloc = np.hstack([self.alloc, pad])
            self.req = np.hstack([self.req, pad.copy()])
        return col

    def _grow(self) -> None:
        new = max(64, self._capacity * 2)
        extra = new - self._capacity
        ncol = len(self.columns)
        self.alloc = np.vstack([self.alloc, np.zeros((extra, ncol), np.int64)])
        self.req = np.vstack([self.req, np.zeros((extra, ncol), np.int64)])
        for name in (
            "pod_count",
            "allowed_pods",
            "nonzero_cpu",
            "nonzero_memory",
            "taint_set",
            "slot_version",
        ):
            setattr(self, name, np.concatenate([getattr(self, name), np.zeros(extra, np.int64)]))
        self.unschedulable = np.concatenate([self.unschedulable, np.zeros(extra, np.bool_)])
        self.valid = np.concatenate([self.valid, np.zeros(extra, np.bool_)])
        self._free.extend(range(new - 1, self._capacity - 1, -1))
        self.slot_nodes.extend([None] * extra)
        self._capacity = new
        self._reshape()

    def intern_taints(self, taints: list[dict[str, Any]], key: TaintKey | None = None) -> int:
        """The taint-set id of `taints` (`key`: their taint_key, when the caller has it)."""
        if key is None:
            key = taint_key(taints)
        tid = self._taint_ids.get(key)
        if tid is None:
            tid = len(self.taint_sets)
            self._taint_ids[key] = tid
            self.taint_sets.append(list(taints))
        return tid

    def _sync_node(self, ni: NodeInfo, resized: bool = True) -> None:
        """Copy the node's columns into its slot (`resized`: its allocatable may have changed;
        when not, its allocatable columns are left as they are)."""
        s = ni.slot
        if resized:  # (else the row holds these very amounts already)
            self.alloc[s, :] = 0
            for name, amount in ni.allocatable.items():
                if name != PODS:
                    col = self.column(name)  # may widen self.alloc: index the array after it
                    self.alloc[s, col] = amount
        self.allowed_pods[s] = ni.allowed_pods
        self.taint_set[s] = ni.taint_set
        self.unschedulable[s] = ni.unschedulable
        if resized:
            self.slot_version[s] += 1
        self.node_changes += 1
        self._node_changed(s)
        self._changed(s)

    def _sync_pods(self, ni: NodeInfo) -> None:
        s = ni.slot
        if s < 0:
            return
        # columns first: a new extended resource widens self.req (a row taken before would be stale)
        amounts = [(self.column(name), amount) for name, amount in ni.requested.items() if amount]
        row = self.req[s]
        row[:] = 0
        for col, amount in amounts:
            row[col] = amount
        self.pod_count[s] = len(ni.pods)
        self.nonzero_cpu[s] = ni.nonzero_cpu
        self.nonzero_memory[s] = ni.nonzero_memory
        self.slot_version[s] += 1
        self.generation += 1
        self._changed(s)

    # ---- nodes -------------------------------------------------------------------------------
    def add_node(self, node: Mapping[str, Any]) -> NodeInfo:
        name = (node.get("metadata") or {}).get("name", "")
        if name in self.nodes:
            return self.update_node(node)
        if not self._free:
            self._grow()
        slot = self._free.pop()
        ni = NodeInfo(node, slot)
        ni.taint_set = self.intern_taints(ni.taints, ni.taint_key)
        self.nodes[name] = ni
        self.slot_nodes[slot] = ni
        self.valid[slot] = True
        self._sync_node(ni)
        orphans = self._orphans.pop(name, None)
        if orphans:
            ni.add_pods(orphans.values())  # the pods listed before the node
            for pi in orphans.values():
                self._pod_changed(slot, None, pi)
        self._sync_pods(ni)
        self._zones.setdefault(zone_key(ni.labels), []).append(name)
        self._reshape()
        return ni

    def update_node(self, node: Mapping[str, Any]) -> NodeInfo:
        name = (node.get("metadata") or {}).get("name", "")
        ni = self.nodes.get(name)
        if ni is None:
            return self.add_node(node)
        if _same_scheduling_parts(ni, node):
            # what the generic update leaves: the same taints (interned alike), flags, labels
            # (zone), allocatable (kept parse) and slot columns; only the object is new
            if _images(node) is not _images(ni.node):
                self._node_changed(ni.slot)  # (ImageLocality reads them: scheduler.pod_index)
                self._changed(ni.slot)
            ni.node = node
            self.generation += 1
            return ni
        old_zone = zone_key(ni.labels)
        old_allocatable = ni.allocatable
        ni.set_node(node)
        ni.taint_set = self.intern_taints(ni.taints, ni.taint_key)
        self._sync_node(ni, ni.allocatable is not old_allocatable and ni.allocatable != old_allocatable)
        new_zone = zone_key(ni.labels)
        if new_zone != old_zone:
            self._zone_remove(old_zone, name)
            self._zones.setdefault(new_zone, []).append(name)
            self._reshape()
        self.generation += 1
        return ni

    def remove_node(self, node: Mapping[str, Any] | str) -> None:
        name = node if isinstance(node, str) else (node.get("metadata") or {}).get("name", "")
        ni = self.nodes.pop(name, None)
        if ni is None:
            return
        if ni.pods:
            # Pods outlive their node in the cache until their own deletion arrives (upstream keeps
            # a node-less NodeInfo); they reattach if the node comes back.
            self._orphans[name] = dict(ni.pods)
            for pi in ni.pods.values():
                self._pod_changed(ni.slot, pi, None)
        self._node_changed(ni.slot)
        self.valid[ni.slot] = False
        self.slot_nodes[ni.slot] = None
        self._free.append(ni.slot)
        self._zone_remove(zone_key(ni.labels), name)
        self._reshape()
        self.generation += 1

    def _zone_remove(self, zone: str, name: str) -> None:
        names = self._zones.get(zone)
        if names is not None and name in names:
            names.remove(name)
            if not names:
                del self._zones[zone]

    # ---- snapshot order ----------------------------------------------------------------------
    def _rebuild_order(self) -> None:
        zones = list(self._zones.values())
        ordered: list[NodeInfo] = []
        depth = max((len(z) for z in zones), default=0)
        for i in range(depth):
            for names in zones:
                if i < len(names):
                    ordered.append(self.nodes[names[i]])
        self._order_nodes = ordered
        self._order = np.array([ni.slot for ni in ordered], np.int64)
        self._order_positions = None
        self._slot_positions = None

    def order(self) -> IntArray:
        """Slots in snapshot (node tree) order."""
        if self._order is None:
            self._rebuild_order()
        assert self._order is not None
        return self._order

    def node_list(self) -> list[NodeInfo]:
        """NodeInfos in snapshot (node tree) order."""
        if self._order is None:
            self._rebuild_order()
        return self._order_nodes

    def order_positions(self) -> dict[str, int]:
        """Each node's position in snapshot (node tree) order, by name."""
        if self._order is None:
            self._rebuild_order()
        if self._order_positions is None:
            self._order_positions = {ni.name: i for i, ni in enumerate(self._order_nodes)}
        return self._order_positions

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.node_list())

    # ---- pods --------------------------------------------------------------------------------
    def _attach(self, pi: PodInfo, node_name: str) -> None:
        self.pod_nodes[pi.key] = node_name
        ni = self.nodes.get(node_name)
        if ni is None:  # a pod listed before its node (a start): kept until the node is added
            waiting = self._orphans.get(node_name)
            if waiting is None:  # (setdefault would build a dict for every call)
                waiting = self._orphans[node_name] = {}
            waiting[pi.key] = pi
            return
        ni.add_pod(pi)
        self._pod_changed(ni.slot, None, pi)
        self._sync_pods(ni)

    def _detach(self, key: str) -> PodInfo | None:
        node_name = self.pod_nodes.pop(key, None)
        if node_name is None:
            return None
        ni = self.nodes.get(node_name)
        if ni is None:
            return self._orphans.get(node_name, {}).pop(key, None)
        old = ni.pods.get(key)
        if old is not None:
            ni.remove_pod(old)
            self._pod_changed(ni.slot, old, None)
            self._sync_pods(ni)
        return old

    def assume_pod(self, pi: PodInfo, node_name: str) -> None:
        """Count a pod on the node it was just scheduled to, before the binding is observed."""
        self._detach(pi.key)
        self._attach(pi, node_name)
        self.assumed.add(pi.key)

    def forget_pod(self, key: str) -> None:
        """Undo assume_pod (binding failed)."""
        if key in self.assumed:
            self.assumed.discard(key)
            self._detach(key)

    def add_pod(self, pod: Mapping[str, Any], key: str | None = None) -> PodInfo | None:
        """An assigned pod was observed (confirms an assumed one). Unassigned pods are ignored.
        `key`: pod_key(pod), when the caller has it already."""
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name:
            return None
        if key is None:
            key = pod_key(pod)
        # pod_info(key), keeping the node it found
        prior_node = self.pod_nodes.get(key)
        prior: PodInfo | None = None
        ni: NodeInfo | None = None
        if prior_node is not None:
            ni = self.nodes.get(prior_node)
            prior = ni.pods.get(key) if ni is not None else self._orphans.get(prior_node, {}).get(key)
        if (
            prior is not None
            and prior.pod is not pod
            and same_spec_facts(prior.pod.get("spec"), pod.get("spec"))
        ):
            # a status or owner change (same spec object), or the binding of an assumed pod
            pi = PodInfo.refreshed(prior, pod, key)
            # (pi.key is key, both pod_key(pod): prior_node is pod_nodes[pi.key] and ni its node)
            if prior_node == node_name and ni is not None and ni.slot >= 0:
                return self._refresh_in_place(ni, pi)
        else:
            pi = make_pod_info(pod, key)
        self.assumed.discard(pi.key)
        self._detach(pi.key)
        self._attach(pi, node_name)
        return pi

    def add_unknown(self, pod: Mapping[str, Any], key: str, node_name: str) -> PodInfo:
        """`add_pod(pod, key)` of a pod bound to `node_name` (its spec's nodeName) whose key the
        cache does not hold (`pod_nodes`): nothing to refresh or detach first."""
        pi = make_pod_info(pod, key)
        self.assumed.discard(key)
        self._attach(pi, node_name)
        return pi

    def refresh_kept_spec(self, pod: Mapping[str, Any], key: str, node_name: str) -> PodInfo | None:
        """`add_pod(pod, key)` of a pod bound to `node_name` whose spec is the very spec object of
        the cached version (an owner, label or status change: a ReplicaSet's adoption): when that
        version is cached on the node, as add_pod's same-node refresh; else add_pod itself."""
        ni = self.nodes.get(node_name) if self.pod_nodes.get(key) == node_name else None
        if ni is not None and ni.slot >= 0:
            prior = ni.pods.get(key)
            if prior is not None and prior.pod is not pod and prior.pod.get("spec") is pod.get("spec"):
                # (same_spec_facts holds: the same spec object, not None since bound)
                if self._renews(prior, pod):
                    return self._renew_in_place(ni, prior, pod)
                return self._refresh_in_place(ni, PodInfo.refreshed(prior, pod, key))
        return self.add_pod(pod, key)

    def refresh_kept_specs(self, items: list[tuple[Mapping[str, Any], str, str]]) -> None:
        """`refresh_kept_spec(pod, key, node_name)` of each item in turn (an informer's update
        group: a ReplicaSet's adoptions), the usual item's steps taken inline."""
        nodes, assumed = self.nodes, self.assumed
        refreshed = PodInfo.refreshed
        renewing = not reference_mode()  # (see _renews)
        for pod, key, node_name in items:
            # (a key among the pods of a node the cache holds is cached there: pod_nodes[key] is
            # that node's name)
            ni = nodes.get(node_name)
            prior = ni.pods.get(key) if ni is not None and ni.slot >= 0 else None
            if prior is not None:
                assert ni is not None
                prior_pod = prior.pod
                if prior_pod is not pod and prior_pod.get("spec") is pod.get("spec"):
                    pods = ni.pods
                    if renewing and key not in assumed and not _pod_matching_changed(prior_pod, pod):
                        # _renew_in_place(ni, prior, pod)
                        if prior_pod.get("status") is pod.get("status"):
                            prior.pod = pod  # (what PodInfo.renew does then)
                        else:
                            prior.renew(pod)
                        del pods[key]
                        pods[key] = prior
                        self.generation += 2
                        continue
                    # _refresh_in_place(ni, PodInfo.refreshed(prior, pod, key))
                    pi = refreshed(prior, pod, key)
                    if assumed:
                        assumed.discard(key)
                    del pods[key]
                    pods[key] = pi
                    self.generation += 2
                    if _pod_matching_changed(prior_pod, pod):
                        self._pod_changed(ni.slot, prior, pi)
                        self._changed(ni.slot)
                    continue
            self.add_pod(pod, key)

    def _renews(self, prior: PodInfo, pod: Mapping[str, Any]) -> bool:
        """Whether a newer version `pod` of the cached `prior.pod`, with the very same spec object,
        is taken into `prior` itself (`PodInfo.renew`) instead of a new PodInfo: when nothing
        counted from the pod changes (its labels, whether it is terminating) and `prior` is not an
        assumed pod's (a queued pod's PodInfo). Off with KUBETAINT_REFERENCE=1."""
        return (
            not reference_mode()
            and prior.key not in self.assumed
            and prior.pod.get("spec") is pod.get("spec")
            and not _pod_matching_changed(prior.pod, pod)
        )

    def _renew_in_place(self, ni: NodeInfo, prior: PodInfo, pod: Mapping[str, Any]) -> PodInfo:
        """`_refresh_in_place` of `prior` renewed with `pod` (`_renews` holds): it moves to the end
        of the node's pods, as a remove and add would leave it; nothing counted changes."""
        prior.renew(pod)
        del ni.pods[prior.key]
        ni.pods[prior.key] = prior
        self.generation += 2
        return prior

    def _refresh_in_place(self, ni: NodeInfo, pi: PodInfo) -> PodInfo:
        """Replace the cached version of `pi`'s pod on `ni` (its node, same spec facts): removing
        and re-adding would restore every total (the spec-derived amounts are the prior's), so
        only the pod moves to the end, as a remove and add would leave it."""
        self.assumed.discard(pi.key)
        prior = ni.pods.pop(pi.key)
        ni.pods[pi.key] = pi
        self.generation += 2
        if _pod_matching_changed(prior.pod, pi.pod):
            self._pod_changed(ni.slot, prior, pi)  # what counts pods by labels (scheduler.pod_index)
            self._changed(ni.slot)
        return pi

    def update_pod(self, pod: Mapping[str, Any], key: str | None = None) -> PodInfo | None:
        return self.add_pod(pod, key) if (pod.get("spec") or {}).get("nodeName") else None

    def remove_pod(self, pod: Mapping[str, Any] | str) -> PodInfo | None:
        key = pod if isinstance(pod, str) else pod_key(pod)
        self.assumed.discard(key)
        return self._detach(key)

    def pod_info(self, key: str) -> PodInfo | None:
        node_name = self.pod_nodes.get(key)
        if node_name is None:
            return None
        ni = self.nodes.get(node_name)
        return ni.pods.get(key) if ni is not None else self._orphans.get(node_name, {}).get(key)


def _images(node: Mapping[str, Any]) -> Any:
    status = node.get("status")
    return status.get("images") if type(status) is dict else None


def _pod_matching_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether a bound pod's new version may count differently where pods are matched by labels
    (its labels, or whether it is terminating)."""
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    old_labels, new_labels = old_meta.get("labels"), new_meta.get("labels")
    if old_labels is not new_labels and (old_labels or {}) != (new_labels or {}):
        return True
    return bool(old_meta.get("deletionTimestamp")) != bool(new_meta.get("deletionTimestamp"))


def _same_scheduling_parts(ni: NodeInfo, node: Mapping[str, Any]) -> bool:
    """Whether `node` carries the very spec, labels and allocatable source (status.allocatable,
    else capacity) objects `ni` was set from, as a kubelet's status post that moves only
    condition heartbeat times does: then `NodeInfo.set_node` would set nothing but `node`."""
    known = ni.node
    if node.get("spec") is not known.get("spec"):
        return False
    meta, known_meta = node.get("metadata"), known.get("metadata")
    if type(meta) is not dict or type(known_meta) is not dict:
        return False
    labels = meta.get("labels")
    return (
        labels is known_meta.get("labels")
        and labels is not None
        and meta.get("name") == ni.name
        and allocatable_source(node) is ni.allocatable_source
    )
