"""The DaemonSet controller: one pod per eligible node, pinned with a `metadata.name` node
affinity term and left to the scheduler; pods on nodes they no longer fit are deleted, except
that a running pod stays while it tolerates every NoExecute taint.

Mirrors pkg/controller/daemon/daemon_controller.go (manage, podsShouldBeOnNode, syncNodes,
updateDaemonSetStatus) with util/daemonset_util.go (CreatePodTemplate), and its ControllerRevisions
as update.go's constructHistory and cleanupHistory (revisions.py). With `updateStrategy`
RollingUpdate, pods of an older revision are replaced as update.go's rollingUpdate (update.py:
maxUnavailable, maxSurge, minReadySeconds); with OnDelete, only once they are deleted.

Before managing, a sync claims its pods as getDaemonPods does with ClaimPods
(controller_ref_manager.go): an owned pod its selector no longer matches is released, and an
orphan it matches is adopted (after a fresh read shows the DaemonSet is not being deleted), then
counted on its node like any other daemon pod (on a node the DaemonSet should not run on, it is
deleted as an excess pod). A DaemonSet being deleted claims nothing.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.selectors import label_selector_from_dict
from kubetaint.clock.base import Clock
from kubetaint.controllers.daemonset import revisions, update
from kubetaint.controllers.daemonset.bynode import PodsByNode
from kubetaint.controllers.daemonset.claiming import RESOURCE, UNSET, Key, PodClaims, labels_of, string_labels
from kubetaint.controllers.daemonset.placement import (
    PlacementMemo,
    node_should_run_daemon_pod,
    unscheduled_pods_without_node,
)
from kubetaint.controllers.daemonset.podcontrol import DaemonPodControl
from kubetaint.controllers.daemonset.revision_events import RevisionEvents
from kubetaint.controllers.daemonset.status import Placement, StatusUpdates
from kubetaint.controllers.daemonset.statuscounts import NodeCounts, creation_and_phase
from kubetaint.controllers.history import History
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.controllers.replicaset.owners import OwnerSelectorIndex
from kubetaint.controllers.replicaset.queue_controller import QueueController
from kubetaint.speed.reference import reference_mode
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import Store

JSON = dict[str, Any]
BURST_REPLICAS = 250
#: failedPodsBackoff: 1 s initial, doubling, at most 15 minutes.
FAILED_BACKOFF_INITIAL = 1.0
FAILED_BACKOFF_MAX = 900.0
log = logging.getLogger(__name__)


class DaemonSetController(QueueController[Store], PodClaims, DaemonPodControl, StatusUpdates, RevisionEvents):
    """Runs each DaemonSet's pod on every node it should run on."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        rng: random.Random,
        *,
        pod_informer: Informer | None = None,
        node_informer: Informer | None = None,
        ds_informer: Informer | None = None,
        revision_informer: Informer | None = None,
        recorder: EventRecorder | None = None,
        enable_comparison_operators: bool = False,
    ) -> None:
        self.rng = rng
        super().__init__(store, clock, "daemonset-controller", "daemonset", recorder)
        self.pods = self.informers.shared_or_own(pod_informer, "pods")
        self.nodes = self.informers.shared_or_own(node_informer, "nodes")
        self.daemonsets = self.informers.shared_or_own(ds_informer, RESOURCE)
        self.revisions = self.informers.shared_or_own(revision_informer, revisions.RESOURCE)
        self.history = History(store, self.revisions)
        self.enable_comparison = enable_comparison_operators
        # per DaemonSet uid: its pods by node (before the index: a running informer replays at once)
        self._by_node: dict[str, PodsByNode] = {}
        #: the DaemonSets by selector, to queue those an orphan's labels match
        self.owners = OwnerSelectorIndex(self.daemonsets)
        #: the orphan pods (no controller reference) by namespace
        self._orphans: dict[str, set[Key]] = {}
        #: per DaemonSet key: the orphans seen matching it since its last sync (adoption candidates)
        self._wanted: dict[Key, set[Key]] = {}
        #: the DaemonSets to look for candidates among every orphan of their namespace (added, or
        #: their selector changed, since their last sync)
        self._rescan: set[Key] = set()
        #: per DaemonSet uid: (index version, selector object) when every owned pod last matched
        self._claim_checked: dict[str, tuple[int, object]] = {}
        # owned pods only, and those a DaemonSet controls only (in reference mode, those of every
        # controller kind, filed by uid); orphans are kept in `_orphans`
        self.index = PodOwnerIndex(
            self.pods,
            self._pod_changed,
            orphans=False,
            owner_kind=None if reference_mode() else "DaemonSet",
            on_changes=self._pods_changed,
            on_adds=self._pods_added,
        )
        # per DaemonSet uid: where its pods should run, per node
        self._placement: dict[str, PlacementMemo] = {}
        # per DaemonSet uid: each node's share of its status counts
        self._counts: dict[str, NodeCounts] = {}
        self._node_keys: list[Key] | None = None  # by name, while no node is added or deleted
        #: the last `_sorted_nodes` list and the node keys it holds every one of (else None)
        self._sorted_last: tuple[list[JSON], list[Key] | None] = ([], None)
        self._backoff: dict[tuple[str, str], tuple[float, float]] = {}  # (ds uid, node) -> (delay, until)
        self.init_pod_control()
        self.daemonsets.add_handlers(
            EventHandlers(
                on_add=self._ds_added,
                on_update=self._ds_updated,
                on_delete=self._forget,
            )
        )
        self.nodes.add_handlers(
            EventHandlers(on_add=self._node_added, on_update=self._node_updated, on_delete=self._node_deleted)
        )
        self.revisions.add_handlers(
            EventHandlers(
                on_add=self._history_added, on_update=self._history_updated, on_delete=self._history_deleted
            )
        )

    def _ds_added(self, ds: JSON) -> None:
        key = podutil.key_of(ds)
        self._rescan.add(key)
        self.queue.add(key)

    def _ds_updated(self, old: JSON, ds: JSON) -> None:
        key = podutil.key_of(ds)
        old_selector = (old.get("spec") or {}).get("selector")
        selector = (ds.get("spec") or {}).get("selector")
        if old_selector is not selector and old_selector != selector:
            self._rescan.add(key)
        self.queue.add(key)

    # event intake --------------------------------------------------------------------------------

    def _pod_changed(self, old: JSON | None, new: JSON | None) -> None:
        """Queue the DaemonSet owning the old or new pod, and note the pod for its owner's pods
        by node (the pods by node of a DaemonSet's uid). An orphan queues the DaemonSets its
        labels match when it is added or its labels or owner references change (addPod,
        updatePod)."""
        if new is None:
            if old is not None:
                self._orphan_gone(podutil.key_of(old))
        elif podutil.controller_ref_of(new) is None:
            if old is None or not _same_refs(old, new) or labels_of(old) != labels_of(new):
                self._orphan_seen(podutil.key_of(new), new)
        elif old is None or podutil.controller_ref_of(old) is None:
            self._orphan_gone(podutil.key_of(new))
        same = old is not None and new is not None and _same_refs(old, new)
        for pod in (old, new):
            ref = podutil.controller_ref_of(pod) if pod is not None else None
            if pod is None or ref is None:
                continue
            grouped = self._by_node.get(str(ref.get("uid") or ""))
            if grouped is not None:
                grouped.dirty.add(podutil.key_of(pod))
            if ref.get("kind") == "DaemonSet":
                self.queue.add((podutil.key_of(pod)[0], str(ref.get("name"))))
            if same:
                break  # the same owner references object (and key): the same marks and key again

    def _pods_changed(self, pairs: list[tuple[JSON, JSON]], keys: list[Key]) -> None:
        """`_pod_changed` of each update of a group in turn. A pod that had no owner references
        (an adopted orphan: only its new controller reference marks and queues) is marked by
        `_mark_owned` with the pods around it. `keys[i]`: key_of of the new pod of `pairs[i]`."""
        self._mark_owned(self._adopted_orphans(pairs, keys))

    def _adopted_orphans(self, pairs: list[tuple[JSON, JSON]], keys: list[Key]) -> Iterator[tuple[Key, JSON]]:
        """(key, new pod) of each update whose old pod had no owner references, in turn; any other
        update is told to `_pod_changed` where it comes."""
        for (old, new), key in zip(pairs, keys, strict=True):
            old_meta, new_meta = old.get("metadata"), new.get("metadata")
            if type(old_meta) is not dict or type(new_meta) is not dict or old_meta.get("ownerReferences"):
                self._pod_changed(old, new)
                continue
            if not new_meta.get("ownerReferences"):
                # an orphan still: queued again only when its labels change
                if old_meta.get("labels") is not new_meta.get("labels") and (
                    old_meta.get("labels") != new_meta.get("labels")
                ):
                    self._orphan_seen(key, new)
                continue
            yield key, new

    def _pods_added(self, items: list[tuple[Key, JSON]]) -> None:
        """`_pod_changed(None, pod)` of each (key, pod) in turn (an index replay; key: key_of(pod)).
        A pod without owner references (a start's listed orphans) has nothing to mark or queue."""
        self._mark_owned(self._with_owner_references(items))

    def _with_owner_references(self, items: list[tuple[Key, JSON]]) -> Iterator[tuple[Key, JSON]]:
        """Each (key, pod) whose metadata is an object holding owner references; a pod whose
        metadata is not an object is told to `_pod_changed`, a pod without owner references to
        `_orphan_seen`. Consecutive orphans of one namespace with equal string labels (one
        template's pods) share the DaemonSets matching them (no DaemonSet changes while a replay
        is told)."""
        last_labels: object = UNSET  # string-only labels matched last, else UNSET
        last_space = ""
        ds_keys: list[Key] = []
        for key, pod in items:
            meta = pod.get("metadata")
            if type(meta) is not dict:
                self._pod_changed(None, pod)
                continue
            if meta.get("ownerReferences"):
                yield key, pod
                continue
            labels = meta.get("labels")
            if key[0] != last_space or (labels is not last_labels and labels != last_labels):
                if type(labels) is not dict or not string_labels(labels):
                    last_labels = UNSET
                    self._orphan_seen(key, pod)
                    continue
                ds_keys = self.owners.matching_keys(key[0], labels)
                last_labels, last_space = labels, key[0]
            self._orphan_matched(key, ds_keys)

    def _mark_owned(self, entries: Iterable[tuple[Key, JSON]]) -> None:
        """Mark each (key, pod) in its controller's pods by node and queue its DaemonSet, as
        `_pod_changed` does for a new pod. Pods sharing their owner reference list object (or
        having none: bare pods) share what depends only on it: their controller's pods by node and
        DaemonSet name (none changes while a group or replay is told)."""
        add = self.queue.add
        last_refs: object = UNSET
        grouped: PodsByNode | None = None
        owner_name: str | None = None  # the owning DaemonSet's name
        orphan = False  # whether the references hold no controller reference
        orphans = self._orphans
        for key, pod in entries:
            refs = pod["metadata"].get("ownerReferences")
            if refs is not last_refs:
                last_refs = refs
                grouped, owner_name = self._controller_of(pod)
                orphan = podutil.controller_ref_of(pod) is None
            if orphan:
                self._orphan_seen(key, pod)
                continue
            if orphans:
                self._orphan_gone(key)
            if grouped is not None:
                grouped.dirty.add(key)
            if owner_name is not None:
                add((key[0], owner_name))

    def _controller_of(self, pod: JSON) -> tuple[PodsByNode | None, str | None]:
        """The pods by node of `pod`'s controller and, when that is a DaemonSet, its name (what the
        group handlers share between pods holding one owner reference list)."""
        ref = podutil.controller_ref_of(pod)
        if ref is None:
            return None, None
        grouped = self._by_node.get(str(ref.get("uid") or ""))
        return grouped, str(ref.get("name")) if ref.get("kind") == "DaemonSet" else None

    def _orphan_seen(self, key: Key, pod: JSON) -> None:
        """Note `pod` (key `key`) as an orphan and queue the DaemonSets its labels match."""
        labels = labels_of(pod)
        if type(labels) is not dict:
            orphans = self._orphans.get(key[0])
            if orphans is None:
                orphans = self._orphans[key[0]] = set()
            orphans.add(key)
            return
        self._orphan_matched(key, self.owners.matching_keys(key[0], labels))

    def _orphan_matched(self, key: Key, ds_keys: list[Key]) -> None:
        """Note the pod under `key` as an orphan and queue `ds_keys`, the DaemonSets its labels
        match."""
        orphans = self._orphans.get(key[0])
        if orphans is None:
            orphans = self._orphans[key[0]] = set()
        orphans.add(key)
        for ds_key in ds_keys:
            wanted = self._wanted.get(ds_key)
            if wanted is None:
                wanted = self._wanted[ds_key] = set()
            wanted.add(key)
            self.queue.add(ds_key)

    def _orphan_gone(self, key: Key) -> None:
        """The pod under `key` is no orphan (any more)."""
        orphans = self._orphans.get(key[0])
        if orphans is not None:
            orphans.discard(key)
            if not orphans:
                del self._orphans[key[0]]

    def _forget(self, ds: JSON) -> None:
        uid = str((ds.get("metadata") or {}).get("uid") or "")
        key = podutil.key_of(ds)
        self._wanted.pop(key, None)
        self._rescan.discard(key)
        self._claim_checked.pop(uid, None)
        self._by_node.pop(uid, None)
        self._placement.pop(uid, None)
        self._counts.pop(uid, None)

    def _memo(self, ds: JSON) -> PlacementMemo:
        uid = str(ds["metadata"].get("uid") or "")
        memo = self._placement.get(uid)
        if memo is None:
            memo = self._placement[uid] = PlacementMemo()
        return memo

    def _should_run(self, node: JSON, ds: JSON) -> tuple[bool, bool]:
        """node_should_run_daemon_pod, remembered while the node and the template stay the same."""
        return self._memo(ds).should_run(node, ds, enable_comparison=self.enable_comparison)

    def _sorted_nodes(self) -> list[JSON]:
        """The nodes by name (the order is kept until a node is added or deleted)."""
        if self._node_keys is None:
            keys = [podutil.key_of(n) for n in self.nodes.items()]
            self._node_keys = sorted(keys, key=lambda key: key[1])
        nodes = [self.nodes.get(*key) for key in self._node_keys]
        found = [n for n in nodes if n is not None]
        self._sorted_last = (found, self._node_keys if len(found) == len(nodes) else None)
        return found

    def _node_deleted(self, node: JSON) -> None:
        """Forgets the node; syncs nothing (upstream's node informer has no delete handler: a
        DaemonSet notices a deleted node at its next sync, for another reason)."""
        name = str((node.get("metadata") or {}).get("name") or "")
        for memo in self._placement.values():
            memo.forget(name)
        self._node_keys = None

    def _node_added(self, node: JSON) -> None:
        self._node_keys = None
        for ds in self.daemonsets.items():
            self.queue.add(podutil.key_of(ds))

    def _node_updated(self, old: JSON, new: JSON) -> None:
        """shouldIgnoreNodeUpdate: only labels, taints and the rest of spec can change placement."""
        old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
        if old_meta.get("labels") == new_meta.get("labels") and old.get("spec") == new.get("spec"):
            return
        for ds in self.daemonsets.items():
            if node_should_run_daemon_pod(old, ds, enable_comparison=self.enable_comparison) != (
                node_should_run_daemon_pod(new, ds, enable_comparison=self.enable_comparison)
            ):
                self.queue.add(podutil.key_of(ds))

    # sync ----------------------------------------------------------------------------------------

    def sync(self, key: Key) -> None:
        ds = self.daemonsets.get(*key)
        if ds is None:
            return
        selector = label_selector_from_dict((ds.get("spec") or {}).get("selector"))
        if selector is None:
            return
        if (ds.get("metadata") or {}).get("deletionTimestamp"):
            # syncDaemonSet: the history a DaemonSet being deleted owned may be gone or orphaned
            # already, so its status cannot be told reliably: nothing is claimed, placed or updated
            return
        if not self._claim_pods(ds, selector):
            return
        by_node = self._pods_by_node(ds)
        old = self._construct_history(ds)
        if old is None:
            return
        placed = self._placement_of(ds)
        if not self._manage(ds, by_node, placed) and update.strategy_type(ds) == "RollingUpdate":
            # expectations satisfied: what manage created or deleted is seen before updating
            self._rolling_update(ds, placed)
        if old:
            pods = [pod for node_pods in self._pods_by_node(ds).values() for pod in node_pods]
            try:
                revisions.cleanup_history(self.history, ds, old, pods)
            except StatusError as err:
                log.info("daemonset controller: history of %s/%s: %s", *key, err.message)
        current = self.daemonsets.get(*key) or ds
        # the same DaemonSet (no node changes while it syncs: handlers only record work): the
        # same verdicts for the same nodes, which status counts in any order
        self.update_status(current, self._pods_by_node(current), placed if current is ds else None)

    def _construct_history(self, ds: JSON) -> list[JSON] | None:
        """constructHistory: the old revisions (the current one created or renumbered); None
        when it failed (the DaemonSet is synced again in a second)."""
        template = (ds.get("spec") or {}).get("template") or {}
        hash_ = self._template_hash(template, (ds.get("status") or {}).get("collisionCount"))
        try:
            _current, old = revisions.construct_history(self.store, self.history, ds, hash_)
        except (StatusError, revisions.StaleCollisionCountError) as err:
            log.info("daemonset controller: revisions of %s: %s", podutil.key_of(ds), err)
            self.queue.add_after(podutil.key_of(ds), 1.0)
            return None
        return old

    def _pods_by_node(self, ds: JSON) -> dict[str, list[JSON]]:
        """The DaemonSet's pods by target node (in key order); READ-ONLY, kept until one of its
        pods changes, then regrouped for the changed pods only."""
        uid = str(ds["metadata"].get("uid") or "")
        version = self.index.version(uid)
        grouped = self._by_node.get(uid)
        if grouped is None:
            grouped = PodsByNode(version, self.index.pods_owned_by(uid), podutil.key_of)
            self._by_node[uid] = grouped
        elif grouped.version != version or grouped.dirty:
            grouped.refresh(version, lambda key: self.index.owned_pod(uid, key))
        return grouped.result

    def _placement_of(self, ds: JSON) -> Placement:
        """The nodes by name and `_should_run(node, ds)` of each."""
        nodes = self._sorted_nodes()
        return nodes, self._memo(ds).verdicts(nodes, ds, enable_comparison=self.enable_comparison)

    def manage(self, ds: JSON, by_node: Mapping[str, list[JSON]]) -> None:
        self._manage(ds, by_node, self._placement_of(ds))

    def _manage(self, ds: JSON, by_node: Mapping[str, list[JSON]], placed: Placement) -> bool:
        """manage over `placed` (`_placement_of(ds)`); whether it created or deleted a pod."""
        to_create: list[str] = []
        to_delete: list[JSON] = []
        nodes, verdicts = placed
        surge = update.allows_surge(ds)
        nodes_with_pods = 0
        for node, verdict in zip(nodes, verdicts, strict=True):
            name = str(node["metadata"]["name"])
            pods = by_node.get(name)
            if not pods:  # podsShouldBeOnNode of a node without pods: create when it should run
                if verdict[0]:
                    to_create.append(name)
                continue
            nodes_with_pods += 1
            if verdict[1] and len(pods) == 1:
                pod = pods[0]  # _keeps_running(pod), inline: most nodes have their one pod
                deleting = pod["metadata"].get("deletionTimestamp")
                if (deleting and not surge) or (
                    not deleting and (pod.get("status") or {}).get("phase") not in _FINISHED
                ):
                    continue  # podsShouldBeOnNode: its one pod stays, nothing to create or delete
            create, delete = self.pods_should_be_on_node(node, ds, pods, placement=verdict)
            to_create.extend(create)
            to_delete.extend(delete)
        if nodes_with_pods < sum(1 for pods in by_node.values() if pods):
            to_delete.extend(unscheduled_pods_without_node(nodes, by_node))
        for name in to_create[:BURST_REPLICAS]:
            self._create_pod(ds, name)
        for pod in to_delete[:BURST_REPLICAS]:
            self._delete_pod(ds, pod)
        return bool(to_create or to_delete)

    def _rolling_update(self, ds: JSON, placed: Placement) -> None:
        """rollingUpdate: replace pods of older revisions as update.rolling_update plans."""
        hash_ = self._template_hash(
            (ds.get("spec") or {}).get("template") or {}, (ds.get("status") or {}).get("collisionCount")
        )
        by_node = self._pods_by_node(ds)
        try:
            nodes, verdicts = placed
            should_run = {str(n["metadata"]["name"]): v[0] for n, v in zip(nodes, verdicts, strict=True)}
            plan = update.rolling_update(ds, by_node, should_run, hash_, self.clock.now())
        except ValueError as err:
            log.info("daemonset controller: rolling update of %s: %s", podutil.key_of(ds), err)
            return
        for name in plan.create[:BURST_REPLICAS]:
            self._create_pod(ds, name)
        for pod in plan.delete[:BURST_REPLICAS]:
            self._delete_pod(ds, pod)

    def pods_should_be_on_node(
        self, node: JSON, ds: JSON, pods: list[JSON], *, placement: tuple[bool, bool] | None = None
    ) -> tuple[list[str], list[JSON]]:
        """podsShouldBeOnNode: the nodes needing a pod and the pods to delete on this node
        (`placement`: `_should_run(node, ds)` when the caller has it)."""
        node_name = str(node["metadata"]["name"])
        should_run, should_continue = placement if placement is not None else self._should_run(node, ds)
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        if should_run and not pods:
            return [node_name], []
        if should_continue:
            delete: list[JSON] = []
            running: list[JSON] = []
            for pod in live:
                phase = (pod.get("status") or {}).get("phase")
                if phase == "Failed":
                    if self._failed_pod_may_be_deleted(ds, node_name):
                        message = (
                            f"Found failed daemon pod {podutil.key_of(pod)[0]}/{pod['metadata']['name']} "
                            f"on node {node_name}, will try to kill it"
                        )
                        self.recorder.event(ds, "Warning", "FailedDaemonPod", message)
                        delete.append(pod)
                elif phase == "Succeeded":
                    delete.append(pod)
                else:
                    running.append(pod)
            if not update.allows_surge(ds):
                if len(running) > 1:
                    running.sort(key=creation_and_phase)
                    delete.extend(running[1:])
                return [], delete
            if len(running) <= 1:
                # surging: the node keeps at least one pod not being deleted
                return ([node_name] if not running and should_run else []), delete
            running.sort(key=creation_and_phase)
            hash_ = self._template_hash(
                (ds.get("spec") or {}).get("template") or {}, (ds.get("status") or {}).get("collisionCount")
            )
            min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
            delete.extend(update.surge_pods_to_delete(running, hash_, min_ready, self.clock.now()))
            return [], delete
        if pods:
            return [], live
        return [], []

    def _failed_pod_may_be_deleted(self, ds: JSON, node_name: str) -> bool:
        """failedPodsBackoff: deleting a node's failed pods is rate limited (1 s doubling to 15 m)."""
        key = (str(ds["metadata"].get("uid") or ""), node_name)
        now = self.clock.now()
        delay, until = self._backoff.get(key, (0.0, float("-inf")))
        if now < until:
            self.queue.add_after(podutil.key_of(ds), until - now)
            return False
        delay = FAILED_BACKOFF_INITIAL if delay == 0 else min(delay * 2, FAILED_BACKOFF_MAX)
        self._backoff[key] = (delay, now + delay)
        return True


_FINISHED = ("Failed", "Succeeded")


def _keeps_running(pod: JSON) -> bool:
    """Whether podsShouldBeOnNode, where the DaemonSet should continue running and `pod` is the
    node's only pod, neither creates nor deletes: the pod is being deleted (not live) or not
    terminal (the one running pod, kept)."""
    return (
        bool(pod["metadata"].get("deletionTimestamp"))
        or (pod.get("status") or {}).get("phase") not in _FINISHED
    )


def _same_refs(old: JSON, new: JSON) -> bool:
    """Whether the pods share their (read-only) ownerReferences object."""
    return bool(
        (old.get("metadata") or {}).get("ownerReferences")
        is (new.get("metadata") or {}).get("ownerReferences")
    )
