"""Node lifecycle controller: node health, condition taints, rate-limited NoExecute tainting
(mirrors pkg/controller/nodelifecycle)."""

from kubetaint.controllers.nodelifecycle.controller import CONTROLLER_NAME, NodeLifecycleController
from kubetaint.controllers.nodelifecycle.rate_limited_queue import RateLimitedTimedQueue
from kubetaint.controllers.nodelifecycle.settings import NodeLifecycleSettings
from kubetaint.controllers.nodelifecycle.zones import ZoneState, compute_zone_state, get_zone_key

__all__ = [
    "CONTROLLER_NAME",
    "NodeLifecycleController",
    "NodeLifecycleSettings",
    "RateLimitedTimedQueue",
    "ZoneState",
    "compute_zone_state",
    "get_zone_key",
]
