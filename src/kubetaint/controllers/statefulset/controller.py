"""The StatefulSet controller: pods named `<set>-<ordinal>`, created in order (OrderedReady: each
waits for its predecessor to be Running and Ready) or all at once (Parallel), removed from the
highest ordinal down, recreated under the same name when deleted, evicted or finished, and
replaced from the highest ordinal down to the partition on a RollingUpdate (up to
maxUnavailable at once, rolling.py).

Mirrors pkg/controller/statefulset/stateful_set_control.go (updateStatefulSet, processReplica,
processCondemned, the rolling update, computeReplicaStatus, completeRollingUpdate) and
stateful_pod_control.go (its events), with its ControllerRevisions in revisions.py and the pods
it claims (adopts and releases) in claims.py. Difference, reported: the claims of
`volumeClaimTemplates` are created and kept (a retention policy that deletes them gets a Warning
event `NotModelled` on the StatefulSet).
"""

from __future__ import annotations

import logging
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.features import FeatureGates, gate_enabled
from kubetaint.clock.base import Clock
from kubetaint.controllers import history
from kubetaint.controllers.history import History, sort_revisions
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.kind_owned import KindOwnedPods
from kubetaint.controllers.replicaset.owners import SelectorCache
from kubetaint.controllers.replicaset.queue_controller import QueueController
from kubetaint.controllers.statefulset import claims, revisions, rolling
from kubetaint.controllers.statefulset import pods as stspods
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import Store

JSON = dict[str, Any]
Key = tuple[str, str]
RESOURCE = "statefulsets.apps"
CLAIMS = "persistentvolumeclaims"
#: Pods a Parallel StatefulSet creates in one sync at most (the rest in the next ones).
BURST_REPLICAS = 500
log = logging.getLogger(__name__)


class StatefulSetController(QueueController[Store]):
    """Keeps each StatefulSet's ordinal pods and its status."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        pod_informer: Informer | None = None,
        sts_informer: Informer | None = None,
        revision_informer: Informer | None = None,
        recorder: EventRecorder | None = None,
        feature_gates: FeatureGates | None = None,
    ) -> None:
        super().__init__(store, clock, "statefulset-controller", "statefulset", recorder)
        self.pods = self.informers.shared_or_own(pod_informer, "pods")
        self.sets = self.informers.shared_or_own(sts_informer, RESOURCE)
        self.revisions = self.informers.shared_or_own(revision_informer, history.RESOURCE)
        self.history = History(store, self.revisions)
        #: MaxUnavailableStatefulSet: a rolling update takes down up to maxUnavailable pods at once
        self.max_unavailable_gate = gate_enabled(feature_gates, "MaxUnavailableStatefulSet")
        self._reported: set[str] = set()  # uids whose NotModelled warning was recorded
        # (no pod event matters while no StatefulSet exists: the indexes stop following them then)
        self.owned = KindOwnedPods(self.pods, "StatefulSet", self._pod_changed, owners=self.sets)
        self.orphans = claims.OrphanPods(self.pods, self._orphan_changed, owners=self.sets)
        self.selectors = SelectorCache()
        #: the error of this sync's pod creation whose name was taken, raised after its status
        self._failed: StatusError | None = None
        self.sets.add_handlers(
            EventHandlers(
                on_add=lambda sts: self.queue.add(podutil.key_of(sts)),
                on_update=lambda _old, sts: self.queue.add(podutil.key_of(sts)),
                on_delete=self._forget,
            )
        )

    def _pod_changed(self, namespace: str, name: str, old: JSON | None, new: JSON | None) -> None:
        self.queue.add((namespace, name))

    def _forget(self, sts: JSON) -> None:
        uid = str((sts.get("metadata") or {}).get("uid") or "")
        self._reported.discard(uid)

    # sync ----------------------------------------------------------------------------------------

    def sync(self, key: Key) -> None:
        sts = self.sets.get(*key)
        if sts is None:
            return
        uid = str(sts["metadata"].get("uid") or "")
        self._report_not_modelled(sts, uid)
        deleting = bool(sts["metadata"].get("deletionTimestamp"))
        selector = (sts.get("spec") or {}).get("selector")
        if not deleting:
            self._adopt_orphan_revisions(sts, selector)
        owned = self._claim_pods(sts, uid)
        listed = sort_revisions(self.history.list(sts, selector))
        try:
            current, update, collisions = revisions.statefulset_revisions(self.history, sts, listed)
        except StatusError as err:
            log.info("statefulset controller: revisions of %s/%s: %s", *key, err.message)
            self.queue.add_after(key, 1.0)
            return
        self._failed = None
        if not deleting:
            self._update(sts, uid, owned, current, update)
        latest = self.sets.get(*key) or sts
        owned = [p for p in self.owned.pods(uid) if stspods.is_member(latest, p)]
        current_name = str(current["metadata"].get("name") or "")
        update_name = str(update["metadata"].get("name") or "")
        self._update_status(latest, owned, current_name, update_name, collisions)
        try:
            revisions.truncate_history(self.history, latest, owned, listed, current, update)
        except StatusError as err:
            log.info("statefulset controller: history of %s/%s: %s", *key, err.message)
        if self._failed is not None:
            raise self._failed  # the queue retries the set with back-off

    def _claim_pods(self, sts: JSON, uid: str) -> list[JSON]:
        """getPodsForStatefulSet: the pods it controls that match its selector and name, orphans
        that do adopted, the others released."""
        try:
            selector = self.selectors.parsed(sts)
        except StatusError:
            selector = None
        if selector is None:
            return []
        return claims.claim_pods(
            self.store,
            sts,
            selector,
            owned=self.owned.pods(uid),
            orphans=self.orphans.pods(str(sts["metadata"].get("namespace") or "default")),
            can_adopt=lambda: self._can_adopt(sts),
        )

    def _can_adopt(self, sts: JSON) -> bool:
        """RecheckDeletionTimestamp: the set as stored now is the same one and not being deleted."""
        try:
            fresh = self.store.get(RESOURCE, *podutil.key_of(sts))
        except StatusError:
            return False
        meta = fresh.get("metadata") or {}
        return meta.get("uid") == sts["metadata"].get("uid") and not meta.get("deletionTimestamp")

    def _orphan_changed(self, pod: JSON) -> None:
        """getPodStatefulSets: the sets of the pod's namespace whose (non-empty) selector matches
        it sync (they may adopt it)."""
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        for sts in self.sets.items():
            if (sts.get("metadata") or {}).get("namespace") != meta.get("namespace"):
                continue
            selector = self.selectors.matching(sts)
            if not selector.empty and selector.matches(labels):
                self.queue.add(podutil.key_of(sts))

    def _adopt_orphan_revisions(self, sts: JSON, selector: JSON | None) -> None:
        """adoptOrphanRevisions: the set becomes the controller of the revisions matching its
        selector that have none."""
        for revision in self.history.list(sts, selector):
            if podutil.controller_ref_of(revision) is None:
                self.history.adopt(sts, revisions.API_VERSION, revisions.KIND, revision)

    def _template_for(self, sts: JSON, ordinal: int, current: JSON, update: JSON) -> tuple[JSON, str]:
        """newVersionedStatefulSetPod: the current revision's template below the partition (below
        currentReplicas without a rollingUpdate), the set's (update revision) otherwise."""
        spec = sts.get("spec") or {}
        strategy = spec.get("updateStrategy") or {}
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        use_current = False
        if strategy.get("type", "RollingUpdate") == "RollingUpdate":
            rolling = strategy.get("rollingUpdate")
            if rolling is None:
                use_current = ordinal < start + int((sts.get("status") or {}).get("currentReplicas") or 0)
            else:
                use_current = ordinal < start + int(rolling.get("partition") or 0)
        if use_current:
            return revisions.template_of(current), str(current["metadata"].get("name") or "")
        return spec.get("template") or {}, str(update["metadata"].get("name") or "")

    def _update(self, sts: JSON, uid: str, owned: list[JSON], current: JSON, update: JSON) -> None:
        """updateStatefulSet without its status: create, recreate, scale down, roll. With
        OrderedReady each step waits for the pods before it to be Running, Ready and available
        (Ready for minReadySeconds), as processReplica and processCondemned."""
        spec = sts.get("spec") or {}
        replica_count = int(spec.get("replicas") or 0) if spec.get("replicas") is not None else 1
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        monotonic = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        replicas: dict[int, JSON | None] = {}  # by index from the start ordinal (missing: none)
        condemned: list[JSON] = []
        for pod in owned:
            ordinal = stspods.ordinal_of(pod)
            if start <= ordinal < start + replica_count:
                replicas[ordinal - start] = pod
            elif ordinal >= 0:
                condemned.append(pod)
        condemned.sort(key=stspods.ordinal_of, reverse=True)
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = self.clock.now()
        unhealthy = None  # the first unavailable pod, by ordinal (replicas first, then condemned)
        ordered = [replicas[i] for i in sorted(replicas)]
        for pod in [*[p for p in ordered if p is not None], *sorted(condemned, key=stspods.ordinal_of)]:
            if rolling.is_unavailable(pod, min_ready, now):
                unhealthy = pod
                break
        created = 0
        for i in range(replica_count):
            ordinal = start + i
            replica = replicas.get(i)
            if replica is not None and stspods.phase(replica) in ("Failed", "Succeeded"):
                if not stspods.is_terminating(replica):
                    self._recreate_terminated(sts, replica)
                replica = replicas[i] = None if self._gone(replica) else replica
                if replica is not None:
                    if monotonic:
                        return
                    continue
            if replica is None:
                template, revision = self._template_for(sts, ordinal, current, update)
                self._create(sts, stspods.new_pod(sts, template, ordinal, revision))
                created += 1
                if monotonic:
                    return
                if created >= BURST_REPLICAS:  # the rest in a later sync
                    self.queue.add(podutil.key_of(sts))
                    return
                continue
            if stspods.is_terminating(replica) and monotonic:
                return
            if not stspods.is_running_and_ready(replica) and monotonic:
                return
            if not stspods.is_running_and_available(replica, min_ready, now) and monotonic:
                return  # each predecessor available (Ready for minReadySeconds) first
        for pod in condemned:
            if stspods.is_terminating(pod):
                if monotonic:
                    return
                continue
            if not stspods.is_running_and_ready(pod) and monotonic and pod is not unhealthy:
                return
            if (
                not stspods.is_running_and_available(pod, min_ready, now)
                and monotonic
                and pod is not unhealthy
            ):
                return
            self._delete(sts, pod)
            if monotonic:
                return
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type") == "OnDelete":
            return
        self._roll(sts, [replicas.get(i) for i in range(replica_count)], str(update["metadata"].get("name")))

    def _roll(self, sts: JSON, replicas: list[JSON | None], update_revision: str) -> None:
        """The RollingUpdate's deletions (rolling.py): up to maxUnavailable at once with the
        MaxUnavailableStatefulSet gate, one at a time without it."""
        spec = sts.get("spec") or {}
        rolling_update = (spec.get("updateStrategy") or {}).get("rollingUpdate")
        partition = int((rolling_update or {}).get("partition") or 0)
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = self.clock.now()
        if not self.max_unavailable_gate:
            targets = rolling.one_at_a_time(
                replicas, update_revision, partition, min_ready_seconds=min_ready, now=now
            )
        else:
            most = 1
            if isinstance(rolling_update, dict):
                try:
                    most = rolling.max_unavailable(rolling_update.get("maxUnavailable"), len(replicas))
                except ValueError as err:  # upstream's sync returns the error: retried with back-off
                    log.info("statefulset controller: maxUnavailable of %s/%s: %s", *podutil.key_of(sts), err)
                    self.queue.add_after(podutil.key_of(sts), 1.0)
                    return
            targets = rolling.with_max_unavailable(
                replicas, update_revision, partition, most=most, min_ready_seconds=min_ready, now=now
            )
        for pod in targets:
            if not self._delete(sts, pod):
                return  # upstream returns the deletion's error and deletes no more

    def _gone(self, pod: JSON) -> bool:
        return self.pods.get(*podutil.key_of(pod)) is None

    def _recreate_terminated(self, sts: JSON, pod: JSON) -> None:
        meta = sts["metadata"]
        name = pod["metadata"]["name"]
        if stspods.phase(pod) == "Failed":
            message = (
                f"StatefulSet {meta.get('namespace')}/{meta.get('name')} is recreating failed Pod {name}"
            )
            self.recorder.event(sts, "Warning", "RecreatingFailedPod", message)
        else:
            message = (
                f"StatefulSet {meta.get('namespace')}/{meta.get('name')} is recreating terminated Pod {name}"
            )
            self.recorder.event(sts, "Normal", "RecreatingTerminatedPod", message)
        self._delete(sts, pod)

    def _create(self, sts: JSON, pod: JSON) -> None:
        """CreateStatefulPod: the pod's claims first, then the pod. A name already taken (a pod
        the set could not claim) gives no event: the sync fails and is retried with back-off."""
        name = pod["metadata"]["name"]
        set_name = sts["metadata"].get("name")
        if not self._create_claims(sts, pod):
            return
        try:
            self.store.create("pods", pod)
        except StatusError as err:
            if err.reason == "AlreadyExists":
                self._failed = err
                return
            self.recorder.event(
                sts,
                "Warning",
                "FailedCreate",
                f"create Pod {name} in StatefulSet {set_name} failed error: {err.message}",
            )
            return
        self.recorder.event(
            sts, "Normal", "SuccessfulCreate", f"create Pod {name} in StatefulSet {set_name} successful"
        )

    def _create_claims(self, sts: JSON, pod: JSON) -> bool:
        """createPersistentVolumeClaims: each claim of the pod that does not exist, with its event;
        False when one could not be created."""
        ok = True
        pod_name = pod["metadata"]["name"]
        set_name = sts["metadata"].get("name")
        for claim in stspods.claims_for(sts, stspods.ordinal_of(pod)):
            namespace, claim_name = podutil.key_of(claim)
            try:
                self.store.get(CLAIMS, namespace, claim_name)
                continue
            except StatusError as err:
                if err.code != 404:
                    return False
            try:
                self.store.create(CLAIMS, claim)
            except StatusError as err:
                if err.reason == "AlreadyExists":
                    continue
                ok = False
                self.recorder.event(
                    sts,
                    "Warning",
                    "FailedCreate",
                    f"create Claim {claim_name} for Pod {pod_name} in StatefulSet {set_name} failed error: "
                    f"failed to create PVC {claim_name}: {err.message}",
                )
                continue
            self.recorder.event(
                sts,
                "Normal",
                "SuccessfulCreate",
                f"create Claim {claim_name} Pod {pod_name} in StatefulSet {set_name} success",
            )
        return ok

    def _delete(self, sts: JSON, pod: JSON) -> bool:
        """DeleteStatefulPod with its event; False when the deletion failed (not for a pod
        already gone)."""
        namespace, name = podutil.key_of(pod)
        set_name = sts["metadata"].get("name")
        try:
            self.store.delete("pods", namespace, name, uid=str(pod["metadata"].get("uid") or "") or None)
        except StatusError as err:
            if err.code == 404:
                return True
            self.recorder.event(
                sts,
                "Warning",
                "FailedDelete",
                f"delete Pod {name} in StatefulSet {set_name} failed error: {err.message}",
            )
            return False
        self.recorder.event(
            sts, "Normal", "SuccessfulDelete", f"delete Pod {name} in StatefulSet {set_name} successful"
        )
        return True

    def _update_status(
        self, sts: JSON, owned: list[JSON], current: str, update: str, collisions: int
    ) -> None:
        """computeReplicaStatus and completeRollingUpdate, written when it changed."""
        spec = sts.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = self.clock.now()
        replicas = ready = available = current_count = updated = 0
        for pod in owned:
            replicas += 1
            if stspods.is_running_and_ready(pod):
                ready += 1
                if stspods.is_running_and_available(pod, min_ready, now):
                    available += 1
            if stspods.is_terminating(pod):
                continue
            revision = stspods.revision_of(pod)
            if revision == current:
                current_count += 1
            if revision == update:
                updated += 1
        old = sts.get("status") or {}
        status: JSON = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": replicas,
            "readyReplicas": ready,
            "currentReplicas": current_count,
            "updatedReplicas": updated,
            "currentRevision": current,
            "updateRevision": update,
            "collisionCount": collisions,
            "availableReplicas": available,
        }
        strategy = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate")
        if strategy == "RollingUpdate" and updated == replicas and ready == replicas:
            status["currentReplicas"] = updated
            status["currentRevision"] = update
        for field in ("readyReplicas", "currentReplicas", "updatedReplicas"):  # omitempty
            if not status[field]:
                del status[field]
        if old.get("conditions"):
            status["conditions"] = old["conditions"]
        if status != old:
            try:
                self.store.update(RESOURCE, {**sts, "status": status})
            except StatusError as err:
                if err.code == 409:
                    self.queue.add_after(podutil.key_of(sts), 0.001)
        if min_ready > 0 and ready != available:
            self.queue.add_after(podutil.key_of(sts), float(min_ready))

    def _report_not_modelled(self, sts: JSON, uid: str) -> None:
        """A Warning event NotModelled, once, for a claim retention policy other than Retain."""
        retention = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
        deleting = [f"{k}: {v}" for k, v in sorted(retention.items()) if v not in (None, "Retain")]
        if uid in self._reported or not deleting:
            return
        self._reported.add(uid)
        self.recorder.event(
            sts,
            "Warning",
            "NotModelled",
            f"spec.persistentVolumeClaimRetentionPolicy ({', '.join(deleting)}): not modelled: "
            "kubetaint's statefulset controller retains the claims it creates",
        )
