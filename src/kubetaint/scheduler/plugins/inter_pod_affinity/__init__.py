"""InterPodAffinity (pkg/scheduler/framework/plugins/interpodaffinity): the plugin, its
arguments and queueing hints in plugin.py, PreFilter/Filter in filtering.py,
PreScore/Score/NormalizeScore in scoring.py, what they share in common.py."""

from kubetaint.scheduler.plugins.inter_pod_affinity.plugin import (
    InterPodAffinity,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
)

__all__ = ["InterPodAffinity", "is_schedulable_after_node_change", "is_schedulable_after_pod_change"]
