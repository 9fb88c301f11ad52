"""The label keys a created pod's selectors take from its own labels (mirrors
pkg/registry/core/pod/strategy.go: mutatePodAffinity, applyMatchLabelKeysAndMismatchLabelKeys,
mutateTopologySpreadConstraints, applyMatchLabelKeys, applyLabelKeysToLabelSelector).

The pod strategy's PrepareForCreate appends to each pod (anti-)affinity term's labelSelector a
`key In [value]` requirement per matchLabelKeys key and a `key NotIn [value]` one per
mismatchLabelKeys key (MatchLabelKeysInPodAffinity, GA in 1.33), and to each topology spread
constraint's labelSelector a `key In [value]` one per matchLabelKeys key
(MatchLabelKeysInPodTopologySpread with MatchLabelKeysInPodTopologySpreadSelectorMerge, both on by
default in 1.35), the value being the pod's own label; a key the pod has no label for adds
nothing, and a term or constraint without a labelSelector (which selects nothing) is left alone.
The keys themselves stay in the spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

JSON = dict[str, Any]

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _requirements(keys: Any, operator: str, labels: Mapping[str, Any]) -> list[JSON]:
    if not isinstance(keys, list):
        return []
    return [
        {"key": key, "operator": operator, "values": [labels[key]]}
        for key in keys
        if isinstance(key, str) and key in labels
    ]


def _merged(holder: Any, labels: Mapping[str, Any], *, mismatch: bool) -> Any:
    """`holder` (a term or a constraint) with its keys' requirements appended to its
    labelSelector's matchExpressions; `holder` itself when nothing is added."""
    if not isinstance(holder, dict):
        return holder
    selector = holder.get("labelSelector")
    if not isinstance(selector, dict):
        return holder
    extra = _requirements(holder.get("matchLabelKeys"), "In", labels)
    if mismatch:
        extra += _requirements(holder.get("mismatchLabelKeys"), "NotIn", labels)
    if not extra:
        return holder
    expressions = selector.get("matchExpressions")
    current = list(expressions) if isinstance(expressions, list) else []
    return {**holder, "labelSelector": {**selector, "matchExpressions": current + extra}}


def _merged_affinity(kind: Any, labels: Mapping[str, Any]) -> Any:
    if not isinstance(kind, dict):
        return kind
    out = dict(kind)
    preferred = kind.get(_PREFERRED)
    if isinstance(preferred, list):
        out[_PREFERRED] = [
            {**w, "podAffinityTerm": _merged(w.get("podAffinityTerm"), labels, mismatch=True)}
            if isinstance(w, dict) and "podAffinityTerm" in w
            else w
            for w in preferred
        ]
    required = kind.get(_REQUIRED)
    if isinstance(required, list):
        out[_REQUIRED] = [_merged(term, labels, mismatch=True) for term in required]
    return out


def with_label_keys_merged(pod: JSON) -> JSON:
    """mutatePodAffinity then mutateTopologySpreadConstraints on `pod` (not changed: the parts
    that change are copied); `pod` itself when it has neither pod affinity nor spread constraints."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return pod
    raw_affinity = spec.get("affinity")
    affinity = raw_affinity if isinstance(raw_affinity, dict) else {}
    constraints = spec.get("topologySpreadConstraints")
    has_pod_affinity = affinity.get("podAffinity") is not None or affinity.get("podAntiAffinity") is not None
    if not has_pod_affinity and not isinstance(constraints, list):
        return pod
    meta = pod.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    if not isinstance(labels, dict) or not labels:
        return pod  # no label: no key has a value to add
    new_spec = dict(spec)
    if has_pod_affinity:
        new_affinity = dict(affinity)
        for name in ("podAffinity", "podAntiAffinity"):
            if name in affinity:
                new_affinity[name] = _merged_affinity(affinity[name], labels)
        new_spec["affinity"] = new_affinity
    if isinstance(constraints, list):
        new_spec["topologySpreadConstraints"] = [_merged(c, labels, mismatch=False) for c in constraints]
    return {**pod, "spec": new_spec}
