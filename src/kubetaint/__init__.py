"""kubetaint: Kubernetes taints, tolerations, scheduling and eviction, faithful to upstream.

The public Python API (docs/api.md) is re-exported here. Heavier entry points are loaded lazily so
that `import kubetaint` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from kubetaint.core.matching import find_untolerated_taint, tolerates

__version__ = "0.1.0"

# name -> module that defines it; resolved on first use.
_LAZY = {
    "parse_taint_spec": "kubetaint.core.taintspec",
    "validate": "kubetaint.api.validation",
    "FieldError": "kubetaint.api.validation",
    "explain": "kubetaint.scheduler.explain",
    "simulate": "kubetaint.sim.api",
    "Simulation": "kubetaint.sim.api",
}

__all__ = [
    "FieldError",
    "Simulation",
    "__version__",
    "explain",
    "find_untolerated_taint",
    "parse_taint_spec",
    "simulate",
    "tolerates",
    "validate",
]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'kubetaint' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
