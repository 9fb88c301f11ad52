"""Pod affinity and anti-affinity checks (mirrors pkg/apis/core/validation/validation.go:
validatePodAffinity, validatePodAntiAffinity, validatePodAffinityTerms, validatePodAffinityTerm,
validateWeightedPodAffinityTerms, ValidatePodAffinityTermSelector,
ValidateMatchLabelKeysAndMismatchLabelKeys, validateLabelKeys).

A pod created through the registry has its terms' matchLabelKeys/mismatchLabelKeys already merged
into their labelSelector (the pod strategy's PrepareForCreate, MatchLabelKeysInPodAffinity:
kubetaint.core.label_keys_merge), so the "exists in both matchLabelKeys and labelSelector" check
sees the merged selector, as upstream's does. Pod templates are checked as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.jsonview import as_list, as_mapping
from kubetaint.api.validation import field as f
from kubetaint.api.validation.labelselector import validate_label_selector
from kubetaint.api.validation.names import name_is_dns_label
from kubetaint.api.validation.objectmeta import validate_label_name

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def validate_pod_affinity(
    affinity: Mapping[str, Any], path: str, *, allow_invalid_values: bool
) -> list[f.FieldError]:
    """validatePodAffinity / validatePodAntiAffinity (the same checks): required terms, then
    weighted preferred terms."""
    errs: list[f.FieldError] = []
    required = affinity.get(_REQUIRED)
    if isinstance(required, list):
        required_path = f.child(path, _REQUIRED)
        for i, term in enumerate(required):
            errs.extend(
                validate_pod_affinity_term(as_mapping(term), f.index(required_path, i), allow_invalid_values)
            )
    preferred = affinity.get(_PREFERRED)
    if isinstance(preferred, list):
        errs.extend(_weighted_terms(preferred, f.child(path, _PREFERRED), allow_invalid_values))
    return errs


def _weighted_terms(terms: list[Any], path: str, allow_invalid_values: bool) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    for j, item in enumerate(terms):
        weighted = as_mapping(item)
        errs.extend(weight_errors(weighted, f.index(path, j)))
        term_path = f.child(f.index(path, j), "podAffinityTerm")
        errs.extend(
            validate_pod_affinity_term(
                as_mapping(weighted.get("podAffinityTerm")), term_path, allow_invalid_values
            )
        )
    return errs


def validate_pod_affinity_term(
    term: Mapping[str, Any], path: str, allow_invalid_values: bool
) -> list[f.FieldError]:
    """validatePodAffinityTerm: both selectors, the namespaces, the label keys, the topology key."""
    errs = validate_label_selector(
        term.get("labelSelector"), f.child(path, "labelSelector"), allow_invalid_values=allow_invalid_values
    )
    errs.extend(
        validate_label_selector(
            term.get("namespaceSelector"),
            f.child(path, "namespaceSelector"),
            allow_invalid_values=allow_invalid_values,
        )
    )
    for name in as_list(term.get("namespaces")):
        text = str(name)
        # (upstream names the field "namespace", singular)
        errs.extend(f.invalid(f.child(path, "namespace"), text, msg) for msg in name_is_dns_label(text))
    errs.extend(_label_keys_errors(term, path))
    topology_key = str(term.get("topologyKey") or "")
    if not topology_key:
        errs.append(f.required(f.child(path, "topologyKey"), "can not be empty"))
    errs.extend(validate_label_name(topology_key, f.child(path, "topologyKey")))
    return errs


def weight_errors(term: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """A preferred term's weight (absent: 0) must be in 1..100 (node and pod affinity alike)."""
    weight = term.get("weight")
    weight = weight if isinstance(weight, int) and not isinstance(weight, bool) else 0
    if 0 < weight <= 100:
        return []
    return [f.invalid(f.child(path, "weight"), weight, "must be in the range 1-100")]


def _label_keys_errors(term: Mapping[str, Any], path: str) -> list[f.FieldError]:
    return validate_match_label_keys_and_mismatch_label_keys(
        path,
        [str(k) for k in as_list(term.get("matchLabelKeys"))],
        [str(k) for k in as_list(term.get("mismatchLabelKeys"))],
        term.get("labelSelector"),
    )


def validate_match_label_keys_and_mismatch_label_keys(
    path: str, match_keys: list[str], mismatch_keys: list[str], selector: Any
) -> list[f.FieldError]:
    """ValidateMatchLabelKeysAndMismatchLabelKeys: the keys are label names and need a
    labelSelector; a matchLabelKeys key met in a matchExpressions requirement after the selector
    already has it (the merged requirement meeting the user's own) is reported at `path[i]`;
    a key may not be both matched and mismatched."""
    has_selector = isinstance(selector, Mapping)
    errs = _label_keys(f.child(path, "matchLabelKeys"), match_keys, has_selector)
    errs.extend(_label_keys(f.child(path, "mismatchLabelKeys"), mismatch_keys, has_selector))
    if isinstance(selector, Mapping):
        index_of = {key: i for i, key in enumerate(match_keys)}
        seen = {str(k) for k in as_mapping(selector.get("matchLabels"))}
        for expression in as_list(selector.get("matchExpressions")):
            key = str(as_mapping(expression).get("key") or "")
            if key in index_of and key in seen:
                # upstream indexes the term's own path here, not matchLabelKeys
                errs.append(
                    f.invalid(
                        f.index(path, index_of[key]), key, "exists in both matchLabelKeys and labelSelector"
                    )
                )
            seen.add(key)
    mismatch = set(mismatch_keys)
    match_path = f.child(path, "matchLabelKeys")
    for i, key in enumerate(match_keys):
        if key in mismatch:
            errs.append(
                f.invalid(f.index(match_path, i), key, "exists in both matchLabelKeys and mismatchLabelKeys")
            )
    return errs


def _label_keys(path: str, keys: list[str], has_selector: bool) -> list[f.FieldError]:
    """validateLabelKeys: label names, and only alongside a labelSelector."""
    if not keys:
        return []
    if not has_selector:
        return [f.forbidden(path, "must not be specified when labelSelector is not set")]
    errs: list[f.FieldError] = []
    for i, key in enumerate(keys):
        errs.extend(validate_label_name(key, f.index(path, i)))
    return errs
