"""Default tolerations of DaemonSet pods (mirrors pkg/controller/daemon/util/daemonset_util.go,
AddOrUpdateDaemonPodTolerations).

Each toleration is added with AddOrUpdateTolerationInPodSpec, so a user toleration with the same
key/operator/value/effect is replaced, losing any `tolerationSeconds` (it becomes infinite).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.core.matching import add_or_update_toleration

JSONDict = dict[str, Any]

#: (key, effect) in the order upstream adds them; all with operator Exists and no seconds.
DAEMON_POD_TOLERATIONS: tuple[tuple[str, str], ...] = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
#: Added only to pods with `spec.hostNetwork: true`.
HOST_NETWORK_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def add_or_update_daemon_pod_tolerations(pod_spec: Mapping[str, Any]) -> JSONDict:
    """A copy of `pod_spec` carrying the DaemonSet default tolerations (the input is not changed)."""
    wanted = list(DAEMON_POD_TOLERATIONS)
    if pod_spec.get("hostNetwork"):
        wanted.append(HOST_NETWORK_TOLERATION)
    tolerations: list[JSONDict] = list(pod_spec.get("tolerations") or [])
    for key, effect in wanted:
        tolerations = add_or_update_toleration(
            tolerations, {"key": key, "operator": "Exists", "effect": effect}
        )
    return {**pod_spec, "tolerations": tolerations}
