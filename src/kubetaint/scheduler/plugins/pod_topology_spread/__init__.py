"""PodTopologySpread (pkg/scheduler/framework/plugins/podtopologyspread): the plugin and its
arguments in plugin.py, PreFilter/Filter in filtering.py, PreScore/Score/NormalizeScore in
scoring.py, what they share in common.py."""

from kubetaint.scheduler.plugins.pod_topology_spread.common import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    SCHEDULE_ANYWAY,
    Constraint,
    filter_constraints,
)
from kubetaint.scheduler.plugins.pod_topology_spread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
)
from kubetaint.scheduler.plugins.pod_topology_spread.plugin import (
    SYSTEM_DEFAULT_CONSTRAINTS,
    PodTopologySpread,
)

__all__ = [
    "DO_NOT_SCHEDULE",
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "LABEL_HOSTNAME",
    "LABEL_TOPOLOGY_ZONE",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "Constraint",
    "PodTopologySpread",
    "filter_constraints",
]
