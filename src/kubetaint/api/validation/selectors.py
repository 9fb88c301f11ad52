"""metav1.LabelSelector matching (mirrors apimachinery's LabelSelectorAsSelector + Matches)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """Whether `labels` satisfy every matchLabels pair and matchExpressions requirement."""
    match_labels = selector.get("matchLabels") or {}
    for key, value in match_labels.items():
        if labels.get(key) != value:
            return False
    for requirement in selector.get("matchExpressions") or []:
        if not _requirement_matches(requirement, labels):
            return False
    return True


def _requirement_matches(requirement: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    key = requirement.get("key", "")
    operator = requirement.get("operator", "")
    values = requirement.get("values") or []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False
