"""Where each engine component comes from. Components still being written on other branches are
looked up here, in one place, so the simulator runs with whatever has landed.

SEAM: each `optional(...)` lookup is replaced by a direct import once the module is on main.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: Modules the simulator wires in when present (the engine's packages on other branches).
VALIDATION = "kubetaint.api.validation"
TAINT_EVICTION = "kubetaint.controllers.tainteviction"
NODE_LIFECYCLE = "kubetaint.controllers.nodelifecycle"
KUBELET_POOL = "kubetaint.kubelet.pool"
KUBELET_NODE_STATUS = "kubetaint.kubelet.node_status"
REPLICASET = "kubetaint.controllers.replicaset"
DEPLOYMENT = "kubetaint.controllers.deployment"
DAEMONSET = "kubetaint.controllers.daemonset"
DISRUPTION = "kubetaint.controllers.disruption"
PODGC = "kubetaint.controllers.podgc"

#: Test hook: module names treated as absent (to exercise the seams).
DISABLED: set[str] = set()


def optional(name: str) -> ModuleType | None:
    """The module, or None when it has not landed (or is disabled)."""
    if name in DISABLED:
        return None
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name is not None and name.startswith(err.name):
            return None
        raise


def available() -> dict[str, bool]:
    """Which optional components are present (for reports and tests)."""
    names = (
        VALIDATION,
        TAINT_EVICTION,
        NODE_LIFECYCLE,
        KUBELET_POOL,
        REPLICASET,
        DEPLOYMENT,
        DAEMONSET,
        DISRUPTION,
        PODGC,
    )
    return {name: optional(name) is not None for name in names}
