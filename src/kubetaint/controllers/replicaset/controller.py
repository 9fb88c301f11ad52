"""The ReplicaSet controller: adopts matching orphan pods, creates pods from the template up to
spec.replicas, deletes extras in upstream's ranking, and keeps status current.

Mirrors pkg/controller/replicaset/replica_set.go (syncReplicaSet, manageReplicas,
getPodsToDelete, claimPods) and replica_set_utils.go (calculateStatus). Work runs from the clock;
informer handlers only enqueue keys. Expectations are unnecessary: in-process informers see each
write before the next sync.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.selectors import LabelSelector
from kubetaint.clock.base import Clock
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.claim import commit_owners
from kubetaint.controllers.replicaset.claim import with_controller as _with_controller
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.controllers.replicaset.owners import OwnerSelectorIndex
from kubetaint.controllers.replicaset.podcontrol import create_owned_pod, delete_owned_pod
from kubetaint.controllers.replicaset.queue_controller import QueueController
from kubetaint.controllers.replicaset.view import OwnedPodsView, OwnedPodViews
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import Store

JSON = dict[str, Any]
Key = tuple[str, str]
RESOURCE = "replicasets.apps"
#: burstReplicas: creations or deletions per sync.
BURST_REPLICAS = 500
_NO_LABELS: Mapping[str, str] = {}  # shared: the same object for every pod without labels
_UNSET = object()
log = logging.getLogger(__name__)


class ReplicaSetController(QueueController[Store]):
    """Keeps each ReplicaSet's active pods at spec.replicas."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        rng: random.Random,
        *,
        pod_informer: Informer | None = None,
        rs_informer: Informer | None = None,
        recorder: EventRecorder | None = None,
    ) -> None:
        self.rng = rng
        super().__init__(store, clock, "replicaset-controller", "replicaset", recorder)
        self.pods = self.informers.shared_or_own(pod_informer, "pods")
        self.replicasets = self.informers.shared_or_own(rs_informer, RESOURCE)
        self.owners = OwnerSelectorIndex(self.replicasets)
        # Views first: an informer that is already running replays its pods into the index at once,
        # and each replayed pod marks the views.
        self.views = OwnedPodViews(self._pods_owned_by, self._owned_pod, self._owned_pod_lookup)
        self.index = PodOwnerIndex(
            self.pods, self._pod_changed, on_changes=self._pods_changed, on_adds=self._pods_added
        )
        self.replicasets.add_handlers(
            EventHandlers(
                on_add=lambda rs: self.queue.add(podutil.key_of(rs)),
                on_update=lambda _old, rs: self.queue.add(podutil.key_of(rs)),
                on_delete=lambda rs: self.views.forget(_uid(rs)),
            )
        )

    # event intake --------------------------------------------------------------------------------

    def _pods_owned_by(self, uid: str) -> list[JSON]:
        return self.index.pods_owned_by(uid)

    def _owned_pod(self, uid: str, key: Key) -> JSON | None:
        return self.index.owned_pod(uid, key)

    def _owned_pod_lookup(self, uid: str) -> Callable[[Key], JSON | None]:
        return self.index.owned_pod_lookup(uid)

    def _pod_changed(self, old: JSON | None, new: JSON | None) -> None:
        old_ref = None if old is None else podutil.controller_ref_of(old)
        if old is not None:
            self._pod_seen(old, old_ref)
        if new is None or (old is not None and _same_marks(old, new)):
            return  # _same_claim would hold: the owner references and labels are the same objects
        new_ref = podutil.controller_ref_of(new)
        if old is not None and _same_claim(old, old_ref, new, new_ref):
            return  # the same marks and keys again: nothing new
        self._pod_seen(new, new_ref)

    def _pods_changed(self, pairs: list[tuple[JSON, JSON]], keys: list[Key]) -> None:
        """`_pod_changed` of each update of a group in turn. An orphan taking owner references
        and keeping its labels object (an adoption) shares with the pods before it what depends
        only on the (read-only) labels or reference list objects: the owners matching those
        labels (or equal ones: no owner changes while a pod group is told) and the controller
        reference. `keys[i]`: key_of of the new pod of `pairs[i]` (the old one's too when it has
        the very namespace and name objects)."""
        add, views = self.queue.add, self.views
        last_labels: object = None
        last_space = ""
        owner_keys: list[Key] = []
        last_refs: object = _UNSET
        ref: Mapping[str, Any] | None = None
        # what the pods before this one queued (`add` of a queued key does nothing: nothing
        # leaves the queue while a group is told), and the controller reference's parts: the
        # marks of its owner's view (`mark` of its uid), its ReplicaSet's name and key queued last
        queued_owners = False
        ref_owner: str | None = None
        marks: set[Key] | None = None
        last_owner_key: Key | None = None
        for (old, new), new_key in zip(pairs, keys, strict=True):
            old_meta, new_meta = old.get("metadata"), new.get("metadata")
            if (
                type(old_meta) is not dict
                or type(new_meta) is not dict
                or old_meta.get("ownerReferences")
                or old_meta.get("labels") is not new_meta.get("labels")
            ):
                self._pod_changed(old, new)
                continue
            key = (
                new_key
                if old_meta.get("name") is new_meta.get("name")
                and old_meta.get("namespace") is new_meta.get("namespace")
                else podutil.key_of(old)
            )
            # _pod_seen(old, None): an orphan queues the owners its labels match
            labels = old_meta.get("labels") or _NO_LABELS
            if key[0] != last_space or (labels is not last_labels and labels != last_labels):
                owner_keys = self.owners.matching_keys(key[0], labels)
                last_labels, last_space = labels, key[0]
                queued_owners = False
            if not queued_owners:
                for owner_key in owner_keys:
                    add(owner_key)
                queued_owners = True
            refs = new_meta.get("ownerReferences")
            if refs is not last_refs:
                last_refs, ref = refs, podutil.controller_ref_of(new)
                if ref is not None:
                    marks = views.marks_of(str(ref.get("uid") or ""))
                    ref_owner = str(ref.get("name")) if ref.get("kind") == "ReplicaSet" else None
                    last_owner_key = None
            if ref is None:
                continue  # _same_marks or _same_claim: no controller and the same labels again
            if marks is not None:
                marks.add(new_key)  # views.mark(uid, new_key)
            if ref_owner is not None and (
                last_owner_key is None or last_owner_key[0] != new_key[0]
            ):  # else queued just before
                last_owner_key = (new_key[0], ref_owner)
                add(last_owner_key)

    def _pods_added(self, items: list[tuple[Key, JSON]]) -> None:
        """`_pod_changed(None, pod)` of each (key, pod) in turn (an index replay; key: key_of(pod)).
        Pods sharing their owner reference list object share its controller reference; orphans
        with equal labels in one namespace (one template's) share the owners matching them (no
        owner changes while a replay is told)."""
        add, mark = self.queue.add, self.views.mark
        last_refs: object = _UNSET
        ref: Mapping[str, Any] | None = None
        last_labels: object = None
        last_space = ""
        owner_keys: list[Key] = []
        for key, pod in items:
            meta = pod.get("metadata")
            if type(meta) is not dict:
                self._pod_changed(None, pod)
                continue
            refs = meta.get("ownerReferences")
            if refs is not last_refs:
                last_refs, ref = refs, podutil.controller_ref_of(pod)
            if ref is not None:  # _pod_seen of an owned pod
                mark(str(ref.get("uid") or ""), key)
                if ref.get("kind") == "ReplicaSet":
                    add((key[0], str(ref.get("name"))))
                continue
            labels = meta.get("labels") or _NO_LABELS
            if key[0] != last_space or (labels is not last_labels and labels != last_labels):
                owner_keys = self.owners.matching_keys(key[0], labels)
                last_labels, last_space = labels, key[0]
            for owner_key in owner_keys:
                add(owner_key)

    def _pod_seen(self, pod: JSON, ref: Mapping[str, Any] | None) -> None:
        """Mark the owner's view and queue the owner; an orphan queues every ReplicaSet of its
        namespace whose selector matches it (any of them may adopt it)."""
        key = podutil.key_of(pod)
        if ref is not None:
            self.views.mark(str(ref.get("uid") or ""), key)
            if ref.get("kind") == "ReplicaSet":
                self.queue.add((key[0], str(ref.get("name"))))
            return
        labels = (pod.get("metadata") or {}).get("labels") or _NO_LABELS
        for rs_key in self.owners.matching_keys(key[0], labels):
            self.queue.add(rs_key)

    # sync ----------------------------------------------------------------------------------------

    def sync(self, key: Key) -> None:
        rs = self.replicasets.get(*key)
        if rs is None:
            return
        selector = self.owners.selectors.parsed(rs)
        if selector is None:
            return
        uid = _uid(rs)
        template_labels = _template_labels(rs)
        view = self.views.view(uid, selector, template_labels)
        deleting = bool((rs.get("metadata") or {}).get("deletionTimestamp"))
        active: list[JSON] | None = None
        if view.unmatched:  # some owned pod may have to be released: the full claim
            active = [p for p in self.claim_pods(rs, selector) if podutil.is_active(p)]
            count = len(active)
        else:  # every owned pod matches: only orphans may change the claim
            adopted = [] if deleting else self._adopt_orphans(rs, selector)
            adopted_active = [p for p in adopted if podutil.is_active(p)]
            count = view.active_matched + len(adopted_active)
            owned_active = [f.pod for f in view.sorted_facts() if f.active and f.matches] if adopted else []
            if adopted:
                active = owned_active + adopted_active
        if not deleting:
            snapshot = view
            self._manage(
                rs,
                count,
                lambda: (
                    active
                    if active is not None
                    else [f.pod for f in snapshot.sorted_facts() if f.active and f.matches]
                ),
            )
        current = self.replicasets.get(*key) or rs
        if current is not rs:
            template_labels = _template_labels(current)
        self._update_status(current, self.views.view(uid, selector, template_labels))

    def claim_pods(self, rs: JSON, selector: LabelSelector) -> list[JSON]:
        """ClaimPods: keep owned matching pods, release owned non-matching ones (a pod being deleted
        too), adopt matching orphans; a ReplicaSet being deleted neither releases nor adopts
        (ClaimObject)."""
        uid = _uid(rs)
        deleting = bool((rs.get("metadata") or {}).get("deletionTimestamp"))
        claimed: list[JSON] = []
        for pod in self.index.pods_owned_by(uid):
            if selector.matches((pod.get("metadata") or {}).get("labels")):
                claimed.append(pod)
            elif not deleting:
                self._patch_owner(pod, None)
        if deleting:
            return claimed
        return claimed + self._adopt_orphans(rs, selector)

    def _adopt_orphans(self, rs: JSON, selector: LabelSelector) -> list[JSON]:
        if not self.index.orphans:
            return []  # no orphan in any namespace: no candidate
        namespace = podutil.key_of(rs)[0]
        candidates = self.index.orphan_candidates(namespace, selector)
        if not candidates:
            return []
        ref = podutil.controller_ref(rs, "apps/v1", "ReplicaSet")
        only_ref = [ref]  # the references of each adopted pod that had none (read-only, shared)
        matched: list[JSON] = []
        last_labels: object = _UNSET  # the labels matched last and the answer (equal labels: equal)
        last_match = False
        for pod in candidates:
            meta = pod.get("metadata") or {}
            if meta.get("deletionTimestamp"):
                continue
            labels = meta.get("labels")
            if labels is not last_labels and labels != last_labels:
                last_labels, last_match = labels, selector.matches(labels)
            if last_match:
                matched.append(pod)
        return self._write_owners([_with_controller(pod, ref, only_ref) for pod in matched])

    def _write_owners(self, patched: list[JSON]) -> list[JSON]:
        """AdoptPod of each pod in turn (one update each, in order, committed together; a failure
        is logged and the others go on): the stored pods."""
        return self._adopted(patched, commit_owners(self.store, patched))

    @staticmethod
    def _adopted(pods: list[JSON], results: list[JSON | StatusError]) -> list[JSON]:
        """The stored pods of `results` (one per pod of `pods`), each refusal logged."""
        adopted: list[JSON] = []
        for pod, result in zip(pods, results, strict=True):
            if isinstance(result, StatusError):
                _log_owner_failure(pod, result)
            else:
                adopted.append(result)
        return adopted

    def _patch_owner(self, pod: JSON, ref: JSON | None) -> JSON | None:
        return self._write_owner(_with_controller(pod, ref, None if ref is None else [ref]))

    def _write_owner(self, pod: JSON) -> JSON | None:
        try:
            return self.store.update("pods", pod)
        except StatusError as err:
            _log_owner_failure(pod, err)
            return None

    def _manage(self, rs: JSON, count: int, active: Callable[[], list[JSON]]) -> None:
        """manageReplicas with `count` active pods (`active()` lists them, built only to delete)."""
        want = int((rs.get("spec") or {}).get("replicas", 1))
        diff = count - want
        if diff < 0:
            for _ in range(min(-diff, BURST_REPLICAS)):
                self._create_pod(rs)
        elif diff > 0:
            for pod in self.pods_to_delete(active(), min(diff, BURST_REPLICAS)):
                self._delete_pod(rs, pod)

    def pods_to_delete(self, active: list[JSON], count: int) -> list[JSON]:
        ranks = podutil.ranks_by_colocation(active, active)
        return podutil.rank_for_deletion(active, ranks, self.clock.now())[:count]

    def _create_pod(self, rs: JSON) -> None:
        template = (rs.get("spec") or {}).get("template") or {}
        create_owned_pod(self.store, self.recorder, self.rng, rs, kind="ReplicaSet", template=template)

    def _delete_pod(self, rs: JSON, pod: JSON) -> None:
        delete_owned_pod(self.store, self.recorder, rs, pod)

    def _update_status(self, rs: JSON, view: OwnedPodsView) -> None:
        """calculateStatus and updateReplicaSetStatus over the owned active pods a view counts."""
        min_ready = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
        available = view.ready
        if min_ready > 0:  # availability depends on the time: counted afresh
            now = self.clock.now()
            available = sum(
                1 for f in view.facts.values() if f.active and podutil.is_available(f.pod, min_ready, now)
            )
        self._write_status(rs, view.active, view.labeled, view.ready, available)

    def _write_status(self, rs: JSON, replicas: int, labeled: int, ready: int, available: int) -> None:
        """updateReplicaSetStatus; requeue to see pods become available."""
        spec = rs.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        generation = (rs.get("metadata") or {}).get("generation", 1)
        if not _status_holds(rs.get("status"), (replicas, labeled, ready, available), generation):
            status = {
                **(rs.get("status") or {}),
                "replicas": replicas,
                "fullyLabeledReplicas": labeled,
                "readyReplicas": ready,
                "availableReplicas": available,
                "observedGeneration": generation,
            }
            try:
                self.store.update(RESOURCE, {**rs, "status": status})
            except StatusError as err:
                if err.code == 409:
                    raise  # retried by the queue with the latest object
                return
        want = int(spec.get("replicas", 1))
        if min_ready > 0 and ready == want and available != want:
            self.queue.add_after(podutil.key_of(rs), float(min_ready))


def _status_holds(status: object, counts: tuple[int, int, int, int], generation: object) -> bool:
    """Whether the status `_write_status` would write for `counts` (replicas, fully labeled,
    ready, available) equals `status` (a dict holding each count and observedGeneration,
    equal): then it writes nothing."""
    replicas, labeled, ready, available = counts
    return (
        type(status) is dict
        and status.get("replicas", _UNSET) == replicas
        and status.get("fullyLabeledReplicas", _UNSET) == labeled
        and status.get("readyReplicas", _UNSET) == ready
        and status.get("availableReplicas", _UNSET) == available
        and status.get("observedGeneration", _UNSET) == generation
    )


def _log_owner_failure(pod: JSON, err: StatusError) -> None:
    name = (pod.get("metadata") or {}).get("name")
    log.info("replicaset: could not update owner of pod %s: %s", name, err.message)


def _same_claim(
    old: JSON, old_ref: Mapping[str, Any] | None, new: JSON, new_ref: Mapping[str, Any] | None
) -> bool:
    """Whether `_pod_seen` of the new pod would repeat that of the old one (the same key, owner
    reference, or for an orphan the same labels), so that it can only mark and queue again what
    is marked and queued already."""
    if old_ref is not None or new_ref is not None:
        return old_ref == new_ref
    old_labels = (old.get("metadata") or {}).get("labels") or {}
    new_labels = (new.get("metadata") or {}).get("labels") or {}
    return bool(old_labels == new_labels)


def _same_marks(old: JSON, new: JSON) -> bool:
    """Whether the pods share their ownerReferences and labels objects (read-only, so equal)."""
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    return old_meta.get("ownerReferences") is new_meta.get("ownerReferences") and (
        old_meta.get("labels") is new_meta.get("labels")
    )


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _template_labels(rs: Mapping[str, Any]) -> Mapping[str, str]:
    template = (rs.get("spec") or {}).get("template") or {}
    labels: Mapping[str, str] = (template.get("metadata") or {}).get("labels") or {}
    return labels
