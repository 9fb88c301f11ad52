"""Controllers of the simulated cluster, built from the scenario settings on the shared informers,
writing through the registry (events straight to the store: they are best effort and unvalidated
writes keep 150,000-pod runs fast).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubetaint.api.features import comparison_operators_enabled
from kubetaint.controllers.daemonset import DaemonSetController
from kubetaint.controllers.deployment import DeploymentController
from kubetaint.controllers.disruption import DisruptionController
from kubetaint.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings
from kubetaint.controllers.podgc import PodGCController
from kubetaint.controllers.replicaset import ReplicaSetController
from kubetaint.controllers.tainteviction import TaintEvictionController
from kubetaint.sim.scenario import ScenarioError
from kubetaint.store.events import EventRecorder

if TYPE_CHECKING:
    from kubetaint.sim.cluster import Cluster

LEASES = "leases.coordination.k8s.io"


def _recorder(cluster: Cluster, component: str) -> EventRecorder:
    return EventRecorder(cluster.store, cluster.clock, component)


def _rng(cluster: Cluster) -> random.Random:
    return random.Random(cluster.controller_rng.getrandbits(64))


def node_lifecycle_settings(cluster: Cluster) -> NodeLifecycleSettings:
    try:
        return NodeLifecycleSettings.from_mapping(cluster.scenario.settings.node_lifecycle)
    except ValueError as err:
        raise ScenarioError(f"spec.settings.{err}") from None


def build_node_lifecycle(cluster: Cluster) -> Any:
    return NodeLifecycleController(
        cluster.registry,
        cluster.clock,
        node_lifecycle_settings(cluster),
        node_informer=cluster.informer("nodes"),
        pod_informer=cluster.informer("pods"),
        lease_informer=cluster.informer(LEASES, "kube-node-lease"),
        recorder=_recorder(cluster, "node-controller"),
    )


def build_taint_eviction(cluster: Cluster) -> Any:
    return TaintEvictionController(
        cluster.registry,
        cluster.clock,
        pod_informer=cluster.informer("pods"),
        node_informer=cluster.informer("nodes"),
        recorder=_recorder(cluster, "taint-eviction-controller"),
        feature_gates=cluster.feature_gates,
    )


def build_replicaset(cluster: Cluster) -> Any:
    return ReplicaSetController(
        cluster.registry,
        cluster.clock,
        _rng(cluster),
        pod_informer=cluster.informer("pods"),
        rs_informer=cluster.informer("replicasets.apps"),
        recorder=_recorder(cluster, "replicaset-controller"),
    )


def build_deployment(cluster: Cluster) -> Any:
    return DeploymentController(
        cluster.registry,
        cluster.clock,
        deployment_informer=cluster.informer("deployments.apps"),
        rs_informer=cluster.informer("replicasets.apps"),
        recorder=_recorder(cluster, "deployment-controller"),
    )


def build_daemonset(cluster: Cluster) -> Any:
    return DaemonSetController(
        cluster.registry,
        cluster.clock,
        _rng(cluster),
        pod_informer=cluster.informer("pods"),
        node_informer=cluster.informer("nodes"),
        ds_informer=cluster.informer("daemonsets.apps"),
        recorder=_recorder(cluster, "daemonset-controller"),
        enable_comparison_operators=comparison_operators_enabled(cluster.feature_gates),
    )


def build_disruption(cluster: Cluster) -> Any:
    return DisruptionController(
        cluster.registry,
        cluster.clock,
        pod_informer=cluster.informer("pods"),
        pdb_informer=cluster.informer("poddisruptionbudgets.policy"),
        recorder=_recorder(cluster, "disruption-controller"),
    )


def build_podgc(cluster: Cluster) -> Any:
    return PodGCController(
        cluster.registry,
        cluster.clock,
        pod_informer=cluster.informer("pods"),
        node_informer=cluster.informer("nodes"),
    )


#: kube-controller-manager's controllers, in start order.
BUILDERS: list[Callable[[Cluster], Any]] = [
    build_node_lifecycle,
    build_taint_eviction,
    build_deployment,
    build_replicaset,
    build_daemonset,
    build_disruption,
    build_podgc,
]


def start_controllers(cluster: Cluster) -> list[Any]:
    """Build and start every available controller; returns them (for inspection)."""
    started: list[Any] = []
    for build in BUILDERS:
        controller = build(cluster)
        if controller is not None:
            controller.start()
            started.append(controller)
    return started
