"""InterPodAffinity (pkg/scheduler/framework/plugins/interpodaffinity): the plugin, its
arguments and queueing hints in plugin.py, PreFilter/Filter in filtering.py,
PreScore/Score/NormalizeScore in scoring.py, what they share in common.py."""

from kubetaint.scheduler.plugins.inter_pod_affinity.common import matches_all, term_counter
from kubetaint.scheduler.plugins.inter_pod_affinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
)
from kubetaint.scheduler.plugins.inter_pod_affinity.plugin import (
    DEFAULT_HARD_POD_AFFINITY_WEIGHT,
    InterPodAffinity,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
)

__all__ = [
    "DEFAULT_HARD_POD_AFFINITY_WEIGHT",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "InterPodAffinity",
    "is_schedulable_after_node_change",
    "is_schedulable_after_pod_change",
    "matches_all",
    "term_counter",
]
