"""The Deployment controller (simplified rollout): owns one new ReplicaSet named
`<deployment>-<pod-template-hash>` per template, scales it to spec.replicas and old ones to 0,
and reports status.

Mirrors pkg/controller/deployment (deployment_controller.go syncDeployment, sync.go
getNewReplicaSet/scaleReplicaSet/syncDeploymentStatus, util/deployment_util.go EqualIgnoreHash).
Both strategies behave like Recreate without waiting: maxSurge/maxUnavailable are not applied.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.selectors import label_selector_from_dict
from kubetaint.clock.base import Clock, format_time
from kubetaint.controllers.deployment.hashing import compute_hash
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.workqueue import WorkQueue
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import Store

JSON = dict[str, Any]
Key = tuple[str, str]
RESOURCE = "deployments.apps"
RS_RESOURCE = "replicasets.apps"
HASH_LABEL = "pod-template-hash"
log = logging.getLogger(__name__)


def _without_hash(template: Mapping[str, Any]) -> JSON:
    meta = dict(template.get("metadata") or {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != HASH_LABEL}
    meta["labels"] = labels
    return {**template, "metadata": meta}


def equal_ignore_hash(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return _without_hash(a) == _without_hash(b)


class DeploymentController:
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
        self.store = store
        self.clock = clock
        self.deployments = deployment_informer or Informer(store, RESOURCE)
        self.replicasets = rs_informer or Informer(store, RS_RESOURCE)
        self._own = [
            i for i, g in ((self.deployments, deployment_informer), (self.replicasets, rs_informer)) if not g
        ]
        self.recorder = recorder or EventRecorder(store, clock, "deployment-controller")
        self.queue: WorkQueue[Key] = WorkQueue(clock, self.sync, "deployment")
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

    def start(self) -> None:
        for informer in self._own:
            informer.start()

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
        deployment = self.deployments.get(*key)
        if deployment is None or (deployment.get("metadata") or {}).get("deletionTimestamp"):
            return
        owned = self.claim_replicasets(deployment)
        spec = deployment.get("spec") or {}
        if not spec.get("paused"):
            new_rs = self._new_replicaset(deployment, owned)
            replicas = int(spec.get("replicas", 1))
            if new_rs is not None:
                self._scale(deployment, new_rs, replicas)
            for rs in owned:
                if new_rs is None or podutil.key_of(rs) != podutil.key_of(new_rs):
                    self._scale(deployment, rs, 0)
        current = self.deployments.get(*key) or deployment
        self.sync_status(current, self.claim_replicasets(current))

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

    def _new_replicaset(self, deployment: JSON, owned: list[JSON]) -> JSON | None:
        template = (deployment.get("spec") or {}).get("template") or {}
        for existing in owned:
            if equal_ignore_hash((existing.get("spec") or {}).get("template") or {}, template):
                return existing
        collision = (deployment.get("status") or {}).get("collisionCount")
        pod_hash = compute_hash(template, collision)
        tmeta = dict(template.get("metadata") or {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: pod_hash}
        spec = deployment.get("spec") or {}
        selector = dict(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
        name = f"{deployment['metadata']['name']}-{pod_hash}"
        replicas = int(spec.get("replicas", 1))
        new_rs: JSON = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": podutil.key_of(deployment)[0],
                "labels": dict(tmeta["labels"]),
                "ownerReferences": [podutil.controller_ref(deployment, "apps/v1", "Deployment")],
                "annotations": {"deployment.kubernetes.io/desired-replicas": str(replicas)},
            },
            "spec": {
                "replicas": replicas,
                "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                "selector": selector,
                "template": {**template, "metadata": tmeta},
            },
        }
        try:
            created = self.store.create(RS_RESOURCE, new_rs)
        except StatusError as err:
            log.info("deployment %s: could not create replica set %s: %s", name, name, err.message)
            return None
        self.recorder.event(
            deployment, "Normal", "ScalingReplicaSet", f"Scaled up replica set {name} from 0 to {replicas}"
        )
        return created

    def _scale(self, deployment: JSON, rs: JSON, replicas: int) -> None:
        old = int((rs.get("spec") or {}).get("replicas", 1))
        if old == replicas:
            return
        annotations = {**(rs["metadata"].get("annotations") or {})}
        annotations["deployment.kubernetes.io/desired-replicas"] = str(
            (deployment.get("spec") or {}).get("replicas", 1)
        )
        updated = {
            **rs,
            "metadata": {**rs["metadata"], "annotations": annotations},
            "spec": {**rs["spec"], "replicas": replicas},
        }
        self.store.update(RS_RESOURCE, updated)  # a conflict raises and the queue retries
        direction = "up" if replicas > old else "down"
        message = f"Scaled {direction} replica set {rs['metadata']['name']} to {replicas} from {old}"
        self.recorder.event(deployment, "Normal", "ScalingReplicaSet", message)

    def sync_status(self, deployment: JSON, owned: list[JSON]) -> None:
        spec = deployment.get("spec") or {}
        template = spec.get("template") or {}
        new_rs = next(
            (rs for rs in owned if equal_ignore_hash(rs["spec"].get("template") or {}, template)), None
        )

        def total(field: str, items: list[JSON]) -> int:
            return sum(int((rs.get("status") or {}).get(field) or 0) for rs in items)

        available = total("availableReplicas", owned)
        replicas = int(spec.get("replicas", 1))
        status: JSON = {
            **(deployment.get("status") or {}),
            "observedGeneration": deployment["metadata"].get("generation", 1),
            "replicas": total("replicas", owned),
            "updatedReplicas": total("replicas", [new_rs]) if new_rs is not None else 0,
            "readyReplicas": total("readyReplicas", owned),
            "availableReplicas": available,
            "unavailableReplicas": max(0, replicas - available),
        }
        status["conditions"] = self._available_condition(deployment, available >= replicas)
        if status != deployment.get("status"):
            self.store.update(RESOURCE, {**deployment, "status": status})

    def _available_condition(self, deployment: JSON, available: bool) -> list[JSON]:
        stamp = format_time(self.clock.now())
        conditions = [dict(c) for c in (deployment.get("status") or {}).get("conditions") or []]
        status = "True" if available else "False"
        reason = "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable"
        message = (
            "Deployment has minimum availability."
            if available
            else "Deployment does not have minimum availability."
        )
        for cond in conditions:
            if cond.get("type") == "Available":
                if cond.get("status") != status:
                    cond.update(
                        status=status,
                        reason=reason,
                        message=message,
                        lastTransitionTime=stamp,
                        lastUpdateTime=stamp,
                    )
                return conditions
        conditions.append(
            {
                "type": "Available",
                "status": status,
                "lastUpdateTime": stamp,
                "lastTransitionTime": stamp,
                "reason": reason,
                "message": message,
            }
        )
        return conditions
