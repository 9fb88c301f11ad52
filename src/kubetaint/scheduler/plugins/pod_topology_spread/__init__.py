"""PodTopologySpread (pkg/scheduler/framework/plugins/podtopologyspread): the plugin and its
arguments in plugin.py, PreFilter/Filter in filtering.py, PreScore/Score/NormalizeScore in
scoring.py, what they share in common.py."""

from kubetaint.scheduler.plugins.pod_topology_spread.plugin import PodTopologySpread

__all__ = ["PodTopologySpread"]
