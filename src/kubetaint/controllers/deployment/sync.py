"""One sync of one Deployment (mirrors pkg/controller/deployment/sync.go getNewReplicaSet,
getAllReplicaSetsAndSyncRevision, scale, scaleReplicaSet, cleanupDeployment, syncStatusOnly,
checkPausedConditions; rolling.go rolloutRolling; recreate.go rolloutRecreate).

A `Rollout` holds the Deployment and its ReplicaSets as read at the start of the sync and writes
through the store; each write replaces the local copy, as upstream's functions pass the updated
objects on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock
from kubetaint.controllers.deployment import rolling, status, util
from kubetaint.controllers.deployment.hashing import compute_hash
from kubetaint.controllers.replicaset import podutil
from kubetaint.store.events import EventRecorder
from kubetaint.store.interface import Store

JSON = dict[str, Any]
RESOURCE = "deployments.apps"
RS_RESOURCE = "replicasets.apps"


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


class Rollout:
    def __init__(
        self, store: Store, clock: Clock, recorder: EventRecorder, deployment: JSON, sets: list[JSON]
    ) -> None:
        self.store = store
        self.clock = clock
        self.recorder = recorder
        self.d: JSON = {**deployment, "status": dict(deployment.get("status") or {})}
        self.sets = {_name(rs): rs for rs in sets}

    # the ReplicaSets ---------------------------------------------------------------------

    def new_and_old(self, create: bool) -> tuple[JSON | None, list[JSON]]:
        """getAllReplicaSetsAndSyncRevision."""
        found = util.find_new_replica_set(self.d, list(self.sets.values()))
        old = [rs for rs in self.sets.values() if found is None or _name(rs) != _name(found)]
        return self.new_replica_set(found, old, create), old

    def new_replica_set(self, found: Mapping[str, Any] | None, old: list[JSON], create: bool) -> JSON | None:
        new_revision = util.max_revision(old) + 1
        if found is not None:
            rs = dict(found)
            updated = util.new_rs_annotations(self.d, rs, new_revision, exists=True)
            min_ready = int(util.spec_of(self.d).get("minReadySeconds") or 0)
            if updated is not None or int(util.spec_of(rs).get("minReadySeconds") or 0) != min_ready:
                meta = {**rs["metadata"], "annotations": updated or util.annotations_of(rs)}
                rs = self._write_rs(
                    {**rs, "metadata": meta, "spec": {**rs["spec"], "minReadySeconds": min_ready}}
                )
                return rs
            changed = self._set_revision(util.annotations_of(rs).get(util.REVISION, ""))
            if (
                status.progress_deadline(self.d) is not None
                and status.condition(self._status(), status.PROGRESSING) is None
            ):
                message = f'Found new replica set "{_name(rs)}"'
                self._set_condition(status.PROGRESSING, "True", status.FOUND_NEW_RS, message)
                changed = True
            if changed:
                self._update_deployment()
            return rs
        if not create:
            return None
        return self._create_new(old, new_revision)

    def _create_new(self, old: list[JSON], new_revision: int) -> JSON | None:
        spec = util.spec_of(self.d)
        template = spec.get("template") or {}
        pod_hash = compute_hash(template, self._status().get("collisionCount"))
        tmeta = dict(template.get("metadata") or {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), util.HASH_LABEL: pod_hash}
        selector = dict(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), util.HASH_LABEL: pod_hash}
        rs: JSON = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{_name(self.d)}-{pod_hash}",
                "namespace": podutil.key_of(self.d)[0],
                "labels": dict(tmeta["labels"]),
                "ownerReferences": [podutil.controller_ref(self.d, "apps/v1", "Deployment")],
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                "selector": selector,
                "template": {**template, "metadata": tmeta},
            },
        }
        size = util.new_rs_new_replicas(self.d, [*old, rs], rs)
        rs["spec"]["replicas"] = size
        rs["metadata"]["annotations"] = util.new_rs_annotations(self.d, rs, new_revision, exists=False) or {}
        try:
            created = self.store.create(RS_RESOURCE, rs)
        except StatusError as err:
            if err.code != 409:
                raise
            return self._collision(rs)
        self.sets[_name(created)] = created
        if size > 0:
            message = f"Scaled up replica set {_name(created)} from 0 to {size}"
            self.recorder.event(self.d, "Normal", "ScalingReplicaSet", message)
        self._set_revision(str(new_revision))
        if status.progress_deadline(self.d) is not None:
            message = f'Created new replica set "{_name(created)}"'
            self._set_condition(status.PROGRESSING, "True", status.NEW_RS_CREATED, message)
        self._update_deployment()
        return created

    def _collision(self, rs: JSON) -> JSON | None:
        """A ReplicaSet of that name exists: ours with an equal template is the new one; anything
        else is a hash collision, counted in status.collisionCount so the next hash differs."""
        existing = self.store.get(RS_RESOURCE, podutil.key_of(rs)[0], _name(rs))
        ref = podutil.controller_of(existing)
        ours = ref is not None and ref.get("uid") == (self.d.get("metadata") or {}).get("uid")
        if ours and util.equal_ignore_hash(
            util.spec_of(existing).get("template") or {}, util.spec_of(self.d).get("template") or {}
        ):
            return existing
        st = self._status()
        st["collisionCount"] = int(st.get("collisionCount") or 0) + 1
        self._update_deployment()
        raise StatusError(409, "AlreadyExists", f"hash collision for replica set {_name(rs)}")

    # scaling -------------------------------------------------------------------------------

    def scale_rs(self, rs: Mapping[str, Any], size: int, operation: str | None = None) -> bool:
        """scaleReplicaSet (scaleReplicaSetAndRecordEvent when `operation` is None)."""
        old_size = util.replicas(rs)
        if operation is None:
            if old_size == size:
                return False
            operation = "up" if size > old_size else "down"
        desired = util.replicas(self.d)
        max_replicas = desired + util.max_surge(self.d)
        resize = old_size != size
        if not resize and not util.replicas_annotations_need_update(rs, desired, max_replicas):
            return False
        meta = {
            **rs["metadata"],
            "annotations": {**util.annotations_of(rs), **util.replicas_annotations(desired, max_replicas)},
        }
        self._write_rs({**rs, "metadata": meta, "spec": {**rs["spec"], "replicas": size}})
        if resize:
            message = f"Scaled {operation} replica set {_name(rs)} to {size} from {old_size}"
            self.recorder.event(self.d, "Normal", "ScalingReplicaSet", message)
        return resize

    def apply_sizes(self, sizes: Mapping[str, int]) -> int:
        return sum(1 for name, size in sizes.items() if self.scale_rs(self.sets[name], size))

    def scale(self, new_rs: JSON | None, old: list[JSON]) -> None:
        """sync.go `scale`: a size change outside a rollout, or spread over a rollout."""
        only = util.find_active_or_latest(new_rs, old)
        if only is not None:
            if util.replicas(only) != util.replicas(self.d):
                self.scale_rs(only, util.replicas(self.d))
            return
        if util.is_saturated(self.d, new_rs):
            for rs in util.active(old):
                self.scale_rs(rs, 0)
            return
        if util.is_rolling_update(self.d):
            sizes, operation = rolling.proportional(self.d, new_rs, old)
            for name, size in sizes.items():
                self.scale_rs(self.sets[name], size, operation)

    def rolling(self) -> None:
        """rolloutRolling."""
        new_rs, old = self.new_and_old(create=True)
        all_sets = [*old, new_rs]
        if new_rs is not None:
            target = rolling.reconcile_new(self.d, all_sets, new_rs)
            if target is not None and self.scale_rs(new_rs, target):
                return self.rollout_status()
            new_rs = self.sets[_name(new_rs)]
        live_old = util.active(old)
        budget = rolling.max_scaled_down(self.d, all_sets, live_old, new_rs)
        if budget > 0:
            cleaned = rolling.cleanup_unhealthy(live_old, budget)
            scaled = self.apply_sizes(cleaned)
            live_old = [self.sets[_name(rs)] for rs in live_old]
            scaled += self.apply_sizes(rolling.scale_down_old(self.d, [*live_old, new_rs], live_old))
            if scaled:
                return self.rollout_status()
        if status.complete(self.d, self._status()):
            self.cleanup([self.sets[_name(rs)] for rs in old])
        return self.rollout_status()

    def recreate(self) -> None:
        """rolloutRecreate: old ReplicaSets to 0, wait until their pods are gone, then the new one
        to full size. (Old pods count as running while their ReplicaSets report replicas.)"""
        new_rs, old = self.new_and_old(create=False)
        if sum(1 for rs in util.active(old) if self.scale_rs(rs, 0)):
            return self.rollout_status()
        if util.status_sum([self.sets[_name(rs)] for rs in old], "replicas") > 0:
            return self.rollout_status()
        if new_rs is None:
            new_rs, old = self.new_and_old(create=True)
        if new_rs is not None:
            self.scale_rs(new_rs, util.replicas(self.d))
        if status.complete(self.d, self._status()):
            self.cleanup([self.sets[_name(rs)] for rs in old])
        return self.rollout_status()

    def cleanup(self, old: list[JSON]) -> None:
        """cleanupDeployment: delete the oldest idle ReplicaSets beyond revisionHistoryLimit."""
        limit = util.spec_of(self.d).get("revisionHistoryLimit", util.DEFAULT_REVISION_HISTORY_LIMIT)
        if limit is None:
            return
        alive = [rs for rs in old if not (rs.get("metadata") or {}).get("deletionTimestamp")]
        for rs in util.by_revision(alive)[: max(0, len(alive) - int(limit))]:
            meta = rs.get("metadata") or {}
            observed = int((rs.get("status") or {}).get("observedGeneration") or 0)
            if (
                util.status_int(rs, "replicas")
                or util.replicas(rs)
                or int(meta.get("generation") or 0) > observed
            ):
                continue
            try:
                self.store.delete(
                    RS_RESOURCE, podutil.key_of(rs)[0], _name(rs), uid=str(meta.get("uid") or "") or None
                )
            except StatusError as err:
                if err.code != 404:
                    raise
            self.sets.pop(_name(rs), None)

    # status --------------------------------------------------------------------------------

    def sync_status(self) -> None:
        """syncDeploymentStatus (sync and syncStatusOnly)."""
        new_rs = util.find_new_replica_set(self.d, list(self.sets.values()))
        computed = status.calculate(self.d, list(self.sets.values()), new_rs, self.clock.now())
        self._write_status(computed)

    def rollout_status(self) -> None:
        new_rs = util.find_new_replica_set(self.d, list(self.sets.values()))
        computed = status.rollout_status(self.d, list(self.sets.values()), new_rs, self.clock.now())
        self._write_status(computed)

    def check_paused_conditions(self) -> None:
        if status.progress_deadline(self.d) is None:
            return
        cond = status.condition(self._status(), status.PROGRESSING)
        if cond is not None and cond.get("reason") == status.TIMED_OUT:
            return
        paused_recorded = cond is not None and cond.get("reason") == status.PAUSED
        paused = bool(util.spec_of(self.d).get("paused"))
        if paused and not paused_recorded:
            self._set_condition(status.PROGRESSING, "Unknown", status.PAUSED, "Deployment is paused")
        elif not paused and paused_recorded:
            self._set_condition(status.PROGRESSING, "Unknown", status.RESUMED, "Deployment is resumed")
        else:
            return
        self._update_deployment()

    # writes --------------------------------------------------------------------------------

    def _status(self) -> JSON:
        st = self.d.get("status")
        if not isinstance(st, dict):  # a written Deployment without status
            st = {}
            self.d = {**self.d, "status": st}
        return st

    def _set_condition(self, kind: str, state: str, reason: str, message: str) -> None:
        self.d = {**self.d, "status": dict(self._status())}
        status.set_condition(
            self.d["status"], status.new_condition(kind, state, reason, message, self.clock.now())
        )

    def _set_revision(self, revision: str) -> bool:
        """SetDeploymentRevision on the local copy; True when it changed."""
        if util.annotations_of(self.d).get(util.REVISION) == revision:
            return False
        meta = {**self.d["metadata"], "annotations": {**util.annotations_of(self.d), util.REVISION: revision}}
        self.d = {**self.d, "metadata": meta}
        return True

    def _update_deployment(self) -> None:
        self.d = self.store.update(RESOURCE, self.d)

    def _write_status(self, computed: JSON) -> None:
        if computed != (self.d.get("status") or {}):
            self.d = self.store.update(RESOURCE, {**self.d, "status": computed})

    def _write_rs(self, rs: JSON) -> JSON:
        written = self.store.update(RS_RESOURCE, rs)
        self.sets[_name(written)] = written
        return written
