"""Controllers of the simulated cluster, built from the scenario settings on the shared informers.

Each builder returns None when its component has not landed (see `components`); `start_controllers`
starts what exists, in kube-controller-manager's usual order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubetaint.sim import components

if TYPE_CHECKING:
    from kubetaint.sim.cluster import Cluster


def start_controllers(cluster: Cluster) -> list[Any]:
    """Build and start every available controller; returns them (for inspection)."""
    started: list[Any] = []
    for build in BUILDERS:
        controller = build(cluster)
        if controller is not None:
            controller.start()
            started.append(controller)
    return started


def _none(cluster: Cluster) -> Any:
    return None


#: SEAM: builders for the taint eviction, node lifecycle, workload, disruption and pod GC
#: controllers are added here as they land on main (components.TAINT_EVICTION, ...).
BUILDERS: list[Any] = []
_ = components
