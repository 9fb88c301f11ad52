"""metav1.LabelSelector matching (mirrors apimachinery's LabelSelectorAsSelector + Matches)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """Whether `labels` satisfy every matchLabels pair and matchExpressions requirement."""
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, Mapping):
        for key, value in match_labels.items():
            if labels.get(key) != value:
                return False
    expressions = selector.get("matchExpressions")
    for requirement in expressions if isinstance(expressions, list) else []:
        if not isinstance(requirement, Mapping) or not _requirement_matches(requirement, labels):
            return False
    return True


def _requirement_matches(requirement: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    key = requirement.get("key", "")
    operator = requirement.get("operator", "")
    values = requirement.get("values")
    values = values if isinstance(values, list) else []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False
