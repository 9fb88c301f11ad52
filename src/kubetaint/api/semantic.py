"""apimachinery's semantic equality (`apiequality.Semantic.DeepEqual`) for Kubernetes JSON.

Upstream compares decoded Go structs, where an absent field equals its zero value, a nil slice or
map equals an empty one, and resource quantities compare by value (`1` == `1000m`). The JSON
analogue: drop null, "", false, 0, [] and {} members, and turn the quantities of `requests` and
`limits` into numbers. (Go tells a nil pointer from a pointer to a zero value; JSON cannot, so
this is lenient there, never stricter.) Used by pod update validation and the Deployment
controller's template comparison.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.quantity import QuantityError, parse_quantity

_QUANTITY_MAPS = ("requests", "limits")


def semantic(value: Any) -> Any:
    """`value` in a form where == is semantic equality."""
    if isinstance(value, Mapping):
        out = {}
        for key, raw in value.items():
            item = _quantities(raw) if key in _QUANTITY_MAPS else semantic(raw)
            if item not in (None, "", False, 0, [], {}):
                out[key] = item
        return out
    if isinstance(value, list):
        return [semantic(v) for v in value]
    return value


def _quantities(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return semantic(value)
    out: dict[str, Any] = {}
    for name, raw in value.items():
        try:
            out[name] = parse_quantity(raw)
        except (QuantityError, TypeError, ValueError):
            out[name] = raw
    return out
