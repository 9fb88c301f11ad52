"""metav1.LabelSelector matching (mirrors apimachinery LabelSelectorAsSelector + Matches)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """True when every matchLabels pair and matchExpressions requirement holds."""
    if not selector:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for req in selector.get("matchExpressions") or ():
        key, op, values = req.get("key", ""), req.get("operator", ""), req.get("values") or ()
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def selector_empty(selector: Mapping[str, Any] | None) -> bool:
    return not selector or (not selector.get("matchLabels") and not selector.get("matchExpressions"))
