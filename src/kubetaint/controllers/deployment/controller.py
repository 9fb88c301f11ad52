"""The Deployment controller (mirrors pkg/controller/deployment/deployment_controller.go:
informer handlers, getReplicaSetsForDeployment's adoption, syncDeployment's dispatch to a
paused/scaling `sync`, rolloutRolling or rolloutRecreate; the rollout itself is in sync.py,
rolling.py, status.py and util.py).
"""

from __future__ import annotations

from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.selectors import label_selector_from_dict
from kubetaint.clock.base import Clock
from kubetaint.controllers.deployment import status, util
from kubetaint.controllers.deployment.sync import Rollout
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.queue_controller import QueueController
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import Store

JSON = dict[str, Any]
Key = tuple[str, str]
RESOURCE = "deployments.apps"
RS_RESOURCE = "replicasets.apps"


class DeploymentController(QueueController[Store]):
    """Keeps one ReplicaSet per Deployment template at the Deployment's scale."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        deployment_informer: Informer | None = None,
        rs_informer: Informer | None = None,
        recorder: EventRecorder | None = None,
    ) -> None:
        super().__init__(store, clock, "deployment-controller", "deployment", recorder)
        self.deployments = self.informers.shared_or_own(deployment_informer, RESOURCE)
        self.replicasets = self.informers.shared_or_own(rs_informer, RS_RESOURCE)
        self.deployments.add_handlers(
            EventHandlers(
                on_add=lambda d: self.queue.add(podutil.key_of(d)),
                on_update=lambda _o, d: self.queue.add(podutil.key_of(d)),
            )
        )
        self.replicasets.add_handlers(
            EventHandlers(
                on_add=self._rs_changed,
                on_update=lambda _o, rs: self._rs_changed(rs),
                on_delete=self._rs_changed,
            )
        )

    def _rs_changed(self, rs: JSON) -> None:
        ref = podutil.controller_of(rs)
        namespace = podutil.key_of(rs)[0]
        if ref is not None:
            if ref.get("kind") == "Deployment":
                self.queue.add((namespace, str(ref.get("name"))))
            return
        labels = (rs.get("metadata") or {}).get("labels") or {}
        for deployment in self.deployments.items():
            if podutil.key_of(deployment)[0] != namespace:
                continue
            selector = label_selector_from_dict((deployment.get("spec") or {}).get("selector"))
            if selector is not None and selector.matches(labels):
                self.queue.add(podutil.key_of(deployment))

    # sync ----------------------------------------------------------------------------------------

    def sync(self, key: Key) -> None:
        """syncDeployment."""
        deployment = self.deployments.get(*key)
        if deployment is None:
            return
        owned = self.claim_replicasets(deployment)
        rollout = Rollout(self.store, self.clock, self.recorder, deployment, owned)
        if (deployment.get("metadata") or {}).get("deletionTimestamp"):
            rollout.sync_status()
            return
        rollout.check_paused_conditions()
        spec = deployment.get("spec") or {}
        if spec.get("paused") or self._scaling_event(rollout):
            new_rs, old = rollout.new_and_old(create=False)
            rollout.scale(new_rs, old)
            if spec.get("paused"):
                rollout.cleanup([rollout.sets.get(rs["metadata"]["name"], rs) for rs in old])
            rollout.sync_status()
        elif util.is_rolling_update(deployment):
            rollout.rolling()
        else:
            rollout.recreate()
        after = status.requeue_after(rollout.d, rollout.d.get("status") or {}, self.clock.now())
        if after is not None:
            self.queue.add_after(key, after)

    @staticmethod
    def _scaling_event(rollout: Rollout) -> bool:
        """isScalingEvent: an active ReplicaSet was sized for another spec.replicas."""
        desired = str(util.replicas(rollout.d))
        for rs in util.active(list(rollout.sets.values())):
            recorded = util.annotations_of(rs).get(util.DESIRED_REPLICAS)
            if recorded is not None and recorded != desired:
                return True
        return False

    def claim_replicasets(self, deployment: JSON) -> list[JSON]:
        uid = str(deployment["metadata"].get("uid") or "")
        namespace = podutil.key_of(deployment)[0]
        selector = label_selector_from_dict((deployment.get("spec") or {}).get("selector"))
        result = []
        for rs in self.replicasets.items():
            if podutil.key_of(rs)[0] != namespace:
                continue
            ref = podutil.controller_of(rs)
            if ref is not None:
                if ref.get("uid") == uid:
                    result.append(rs)
                continue
            labels = (rs.get("metadata") or {}).get("labels") or {}
            if selector is not None and selector.matches(labels):
                adopted = self._adopt(deployment, rs)
                if adopted is not None:
                    result.append(adopted)
        return sorted(result, key=podutil.key_of)

    def _adopt(self, deployment: JSON, rs: JSON) -> JSON | None:
        ref = podutil.controller_ref(deployment, "apps/v1", "Deployment")
        meta = {**rs["metadata"], "ownerReferences": [*(rs["metadata"].get("ownerReferences") or []), ref]}
        try:
            return self.store.update(RS_RESOURCE, {**rs, "metadata": meta})
        except StatusError:
            return None
