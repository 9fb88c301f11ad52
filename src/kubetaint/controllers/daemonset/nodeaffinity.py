"""Required node affinity and nodeSelector matching (the DaemonSet controller's placement view).

Mirrors component-helpers/scheduling/corev1/nodeaffinity (GetRequiredNodeAffinity, NodeSelector
match: terms are ORed, requirements within a term ANDed; an empty term list or an empty term
selects nothing). A copy of kubetaint.kubelet.nodeaffinity (sibling layers cannot share it);
dedupe into core on merge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _requirement_matches(req: Mapping[str, Any], value: str | None) -> bool:
    operator = req.get("operator")
    values = [str(v) for v in req.get("values") or []]
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt") and value is not None and len(values) == 1:
        have, want = _int(value), _int(values[0])
        if have is None or want is None:
            return False
        return have > want if operator == "Gt" else have < want
    return False


def _term_matches(term: Mapping[str, Any], labels: Mapping[str, str], name: str) -> bool:
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    for req in expressions:
        if not _requirement_matches(req, labels.get(str(req.get("key", "")))):
            return False
    for req in fields:
        field_value = name if req.get("key") == "metadata.name" else None
        if req.get("key") != "metadata.name" or not _requirement_matches(req, field_value):
            return False
    return True


def node_selector_terms_match(terms: Sequence[Mapping[str, Any]], node: Mapping[str, Any]) -> bool:
    """Whether any NodeSelectorTerm matches the node."""
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    name = str(meta.get("name") or "")
    return any(_term_matches(term, labels, name) for term in terms)


def required_node_affinity_matches(pod: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """nodeSelector (every label equal) and requiredDuringSchedulingIgnoredDuringExecution."""
    spec = pod.get("spec") or {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    for key, wanted in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != wanted:
            return False
    node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    return node_selector_terms_match(required.get("nodeSelectorTerms") or [], node)
