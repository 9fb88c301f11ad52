"""The in-tree plugin registry (mirrors pkg/scheduler/framework/plugins/registry.go NewInTreeRegistry)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.api.features import FeatureGates, comparison_operators_enabled
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.plugins.default_binder import DefaultBinder
from kubetaint.scheduler.plugins.default_preemption import DefaultPreemption
from kubetaint.scheduler.plugins.image_locality import ImageLocality
from kubetaint.scheduler.plugins.inter_pod_affinity import InterPodAffinity
from kubetaint.scheduler.plugins.node_affinity import NodeAffinity
from kubetaint.scheduler.plugins.node_name import NodeName
from kubetaint.scheduler.plugins.node_ports import NodePorts
from kubetaint.scheduler.plugins.node_resources_balanced_allocation import NodeResourcesBalancedAllocation
from kubetaint.scheduler.plugins.node_resources_fit import NodeResourcesFit
from kubetaint.scheduler.plugins.node_unschedulable import NodeUnschedulable
from kubetaint.scheduler.plugins.node_volume_limits import NodeVolumeLimits
from kubetaint.scheduler.plugins.pod_topology_spread import PodTopologySpread
from kubetaint.scheduler.plugins.priority_sort import PrioritySort
from kubetaint.scheduler.plugins.scheduling_gates import SchedulingGates
from kubetaint.scheduler.plugins.taint_toleration import TaintToleration
from kubetaint.scheduler.plugins.volume_binding import VolumeBinding
from kubetaint.scheduler.plugins.volume_restrictions import VolumeRestrictions
from kubetaint.scheduler.plugins.volume_zone import VolumeZone

Factory = Callable[[Mapping[str, Any]], Any]


def new_in_tree_registry(feature_gates: FeatureGates | None = None) -> dict[str, Factory]:
    """Plugin name -> factory(args). Feature gates reach the plugins that read them."""
    enable_cmp = comparison_operators_enabled(feature_gates)
    return {
        names.PRIORITY_SORT: lambda _args: PrioritySort(),
        names.SCHEDULING_GATES: lambda _args: SchedulingGates(),
        names.NODE_UNSCHEDULABLE: lambda _args: NodeUnschedulable(),
        names.NODE_NAME: lambda _args: NodeName(),
        names.TAINT_TOLERATION: lambda _args: TaintToleration(enable_cmp),
        names.NODE_AFFINITY: NodeAffinity,
        names.NODE_PORTS: lambda _args: NodePorts(),
        names.NODE_RESOURCES_FIT: NodeResourcesFit,
        names.VOLUME_RESTRICTIONS: lambda _args: VolumeRestrictions(),
        names.NODE_VOLUME_LIMITS: lambda _args: NodeVolumeLimits(),
        names.VOLUME_BINDING: lambda _args: VolumeBinding(),
        names.VOLUME_ZONE: lambda _args: VolumeZone(),
        names.POD_TOPOLOGY_SPREAD: lambda args: PodTopologySpread(args, enable_cmp),
        names.INTER_POD_AFFINITY: InterPodAffinity,
        names.NODE_RESOURCES_BALANCED_ALLOCATION: NodeResourcesBalancedAllocation,
        names.IMAGE_LOCALITY: lambda _args: ImageLocality(),
        names.DEFAULT_PREEMPTION: DefaultPreemption,
        names.DEFAULT_BINDER: lambda _args: DefaultBinder(),
    }
