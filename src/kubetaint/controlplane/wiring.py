"""kube-controller-manager's controllers, built from the control-plane settings on the shared
informers, writing through the registry (events straight to the store: they are best effort and
unvalidated writes keep 150,000-pod runs fast).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from kubetaint.api.crd import CRDS
from kubetaint.api.features import comparison_operators_enabled
from kubetaint.controllers.crd import CRDController, CustomResourceOwners
from kubetaint.controllers.cronjob import CronJobController
from kubetaint.controllers.daemonset import DaemonSetController
from kubetaint.controllers.deployment import DeploymentController
from kubetaint.controllers.disruption import DisruptionController
from kubetaint.controllers.garbagecollector import FOLLOWED, GarbageCollector
from kubetaint.controllers.job import JobController
from kubetaint.controllers.namespace import NamespaceController
from kubetaint.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings
from kubetaint.controllers.persistentvolume import PersistentVolumeController
from kubetaint.controllers.podgc import PodGCController
from kubetaint.controllers.replicaset import ReplicaSetController
from kubetaint.controllers.rootcacertpublisher import Publisher
from kubetaint.controllers.serviceaccounts import ServiceAccountsController
from kubetaint.controllers.statefulset import StatefulSetController
from kubetaint.controllers.tainteviction import TaintEvictionController
from kubetaint.controlplane.errors import ControlPlaneError
from kubetaint.store.events import EventRecorder

if TYPE_CHECKING:
    from kubetaint.controlplane.controlplane import ControlPlane

LEASES = "leases.coordination.k8s.io"


class Controller(Protocol):
    """What the control plane asks of each of kube-controller-manager's controllers."""

    def start(self) -> None:
        """Register with the informers and start those the controller owns."""

    def stop(self) -> None:
        """Stop what the controller started: its own informers, its timers and queued work."""


def _recorder(plane: ControlPlane, component: str) -> EventRecorder:
    return EventRecorder(plane.store, plane.clock, component)


def _rng(plane: ControlPlane) -> random.Random:
    return random.Random(plane.controller_rng.getrandbits(64))


def node_lifecycle_settings(plane: ControlPlane) -> NodeLifecycleSettings:
    try:
        return NodeLifecycleSettings.from_mapping(plane.settings.node_lifecycle)
    except ValueError as err:
        raise ControlPlaneError(str(err), key_path=True) from None


def build_node_lifecycle(plane: ControlPlane) -> NodeLifecycleController:
    return NodeLifecycleController(
        plane.controller_writes,
        plane.clock,
        node_lifecycle_settings(plane),
        node_informer=plane.informer("nodes"),
        pod_informer=plane.informer("pods"),
        lease_informer=plane.informer(LEASES),  # (upstream's shared informer of every lease)
        recorder=_recorder(plane, "node-controller"),
    )


def build_taint_eviction(plane: ControlPlane) -> TaintEvictionController:
    return TaintEvictionController(
        plane.controller_writes,
        plane.clock,
        pod_informer=plane.informer("pods"),
        node_informer=plane.informer("nodes"),
        recorder=_recorder(plane, "taint-eviction-controller"),
        feature_gates=plane.feature_gates,
    )


def build_replicaset(plane: ControlPlane) -> ReplicaSetController:
    return ReplicaSetController(
        plane.controller_writes,
        plane.clock,
        _rng(plane),
        pod_informer=plane.informer("pods"),
        rs_informer=plane.informer("replicasets.apps"),
        recorder=_recorder(plane, "replicaset-controller"),
    )


def build_deployment(plane: ControlPlane) -> DeploymentController:
    return DeploymentController(
        plane.controller_writes,
        plane.clock,
        deployment_informer=plane.informer("deployments.apps"),
        rs_informer=plane.informer("replicasets.apps"),
        recorder=_recorder(plane, "deployment-controller"),
    )


def build_daemonset(plane: ControlPlane) -> DaemonSetController:
    return DaemonSetController(
        plane.controller_writes,
        plane.clock,
        _rng(plane),
        pod_informer=plane.informer("pods"),
        node_informer=plane.informer("nodes"),
        ds_informer=plane.informer("daemonsets.apps"),
        revision_informer=plane.informer("controllerrevisions.apps"),
        recorder=_recorder(plane, "daemonset-controller"),
        enable_comparison_operators=comparison_operators_enabled(plane.feature_gates),
    )


def build_statefulset(plane: ControlPlane) -> StatefulSetController:
    return StatefulSetController(
        plane.controller_writes,
        plane.clock,
        pod_informer=plane.informer("pods"),
        sts_informer=plane.informer("statefulsets.apps"),
        revision_informer=plane.informer("controllerrevisions.apps"),
        recorder=_recorder(plane, "statefulset-controller"),
        feature_gates=plane.feature_gates,
    )


def build_job(plane: ControlPlane) -> JobController:
    return JobController(
        plane.controller_writes,
        plane.clock,
        _rng(plane),
        pod_informer=plane.informer("pods"),
        job_informer=plane.informer("jobs.batch"),
        recorder=_recorder(plane, "job-controller"),
    )


def build_cronjob(plane: ControlPlane) -> CronJobController:
    return CronJobController(
        plane.controller_writes,
        plane.clock,
        _rng(plane),
        job_informer=plane.informer("jobs.batch"),
        cronjob_informer=plane.informer("cronjobs.batch"),
        recorder=_recorder(plane, "cronjob-controller"),
    )


def build_disruption(plane: ControlPlane) -> DisruptionController:
    return DisruptionController(
        plane.controller_writes,
        plane.clock,
        pod_informer=plane.informer("pods"),
        pdb_informer=plane.informer("poddisruptionbudgets.policy"),
        recorder=_recorder(plane, "disruption-controller"),
    )


def build_podgc(plane: ControlPlane) -> PodGCController:
    return PodGCController(
        plane.controller_writes,
        plane.clock,
        pod_informer=plane.informer("pods"),
        node_informer=plane.informer("nodes"),
    )


def build_namespace(plane: ControlPlane) -> NamespaceController:
    return NamespaceController(
        plane.controller_writes, plane.clock, namespace_informer=plane.informer("namespaces")
    )


def build_serviceaccounts(plane: ControlPlane) -> ServiceAccountsController:
    return ServiceAccountsController(
        plane.controller_writes,
        plane.clock,
        namespace_informer=plane.informer("namespaces"),
        service_account_informer=plane.informer("serviceaccounts"),
    )


def build_persistent_volume(plane: ControlPlane) -> PersistentVolumeController:
    return PersistentVolumeController(
        plane.controller_writes,
        plane.clock,
        volume_informer=plane.informer("persistentvolumes"),
        claim_informer=plane.informer("persistentvolumeclaims"),
        class_informer=plane.informer("storageclasses.storage.k8s.io"),
    )


def build_crd(plane: ControlPlane) -> CRDController:
    return CRDController(plane.controller_writes, plane.clock, crd_informer=plane.informer(CRDS))


def build_root_ca_publisher(plane: ControlPlane) -> Controller | None:
    """The root-ca-cert-publisher, when the cluster has a CA to publish (`kubetaint up` serving
    HTTPS); none for a simulation or an insecure server."""
    if plane.root_ca is None:
        return None
    return Publisher(
        plane.controller_writes,
        plane.clock,
        plane.root_ca,
        namespace_informer=plane.informer("namespaces"),
        config_map_informer=plane.informer("configmaps"),
    )


def build_crd_owners(plane: ControlPlane) -> CustomResourceOwners:
    return CustomResourceOwners(plane.controller_writes, plane.clock, crd_informer=plane.informer(CRDS))


def build_garbage_collector(plane: ControlPlane) -> GarbageCollector:
    resources = [r.store_resource for r in FOLLOWED]
    return GarbageCollector(plane.controller_writes, plane.clock, {r: plane.informer(r) for r in resources})


#: kube-controller-manager's controllers, in start order.
BUILDERS: list[Callable[[ControlPlane], Controller | None]] = [
    build_node_lifecycle,
    build_taint_eviction,
    build_deployment,
    build_replicaset,
    build_daemonset,
    build_statefulset,
    build_job,
    build_cronjob,
    build_disruption,
    build_podgc,
    build_serviceaccounts,
    build_root_ca_publisher,
    build_persistent_volume,
    build_namespace,
    build_garbage_collector,
    build_crd,
    build_crd_owners,
]


def start_controllers(plane: ControlPlane) -> list[Controller]:
    """Build and start every controller; returns them (for inspection, and to stop them)."""
    started: list[Controller] = []
    for build in BUILDERS:
        controller = build(plane)
        if controller is None:
            continue
        controller.start()
        started.append(controller)
    return started
