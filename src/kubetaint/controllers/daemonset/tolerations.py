"""DaemonSet pod tolerations (pkg/controller/daemon/util/daemonset_util.go,
AddOrUpdateDaemonPodTolerations), applied to every pod template copy the controller creates.

Local stand-in for `kubetaint.core.daemonset.add_or_update_daemon_pod_tolerations`, written on
another branch; dedupe on merge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.core.matching import NO_EXECUTE, NO_SCHEDULE, add_or_update_toleration

JSON = dict[str, Any]

_ALWAYS = (
    ("node.kubernetes.io/not-ready", NO_EXECUTE),
    ("node.kubernetes.io/unreachable", NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
)
_HOST_NETWORK = ("node.kubernetes.io/network-unavailable", NO_SCHEDULE)


def _daemon_pod_tolerations(spec: Mapping[str, Any]) -> list[JSON]:
    """The spec's tolerations with the DaemonSet defaults added or overwritten (operator Exists,
    no tolerationSeconds), in upstream's order; network-unavailable only for hostNetwork pods."""
    tolerations: list[JSON] = [dict(t) for t in spec.get("tolerations") or []]
    wanted = list(_ALWAYS)
    if spec.get("hostNetwork"):
        wanted.append(_HOST_NETWORK)
    for key, effect in wanted:
        tolerations = add_or_update_toleration(
            tolerations, {"key": key, "operator": "Exists", "effect": effect}
        )
    return tolerations
