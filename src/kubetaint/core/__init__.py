"""Pure rules: toleration matching, taint strings, eviction decisions, condition→taint mapping.

Nothing here does I/O or reads a clock; every function is a decision on Kubernetes JSON.
"""

from kubetaint.core.matching import (
    find_untolerated_taint,
    get_matching_tolerations,
    match_taint,
    match_toleration,
    taint_to_string,
    tolerates,
)

__all__ = [
    "find_untolerated_taint",
    "get_matching_tolerations",
    "match_taint",
    "match_toleration",
    "taint_to_string",
    "tolerates",
]
