"""Pod spec affinity checks, node affinity part
(mirrors pkg/apis/core/validation/validation.go: validateAffinity, validateNodeAffinity,
ValidateNodeSelector, ValidateNodeSelectorTerm, ValidateNodeSelectorRequirement,
ValidateNodeFieldSelectorRequirement, ValidatePreferredSchedulingTerms); pod affinity and
anti-affinity terms are checked in podaffinity.py.

registry/bulk.py relies on this: of a `metadata.name` field requirement's values, only
ValidateNodeName (a DNS subdomain) is read; the key, operator and value count are checked apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.jsonview import as_list, as_mapping
from kubetaint.api.validation import field as f
from kubetaint.api.validation.names import name_is_dns_subdomain
from kubetaint.api.validation.objectmeta import validate_label_name
from kubetaint.api.validation.podaffinity import validate_pod_affinity, weight_errors

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
#: metav1.ObjectNameField, the only key a node field selector supports (ValidateNodeName).
_OBJECT_NAME_FIELD = "metadata.name"


def validate_affinity(affinity: Any, path: str, *, allow_invalid_values: bool = False) -> list[f.FieldError]:
    """validateAffinity: node affinity, pod affinity, pod anti-affinity. `allow_invalid_values`
    is upstream's AllowInvalidLabelValueInSelector (old invalid data kept on update)."""
    if not isinstance(affinity, Mapping):
        return []
    errs: list[f.FieldError] = []
    node_affinity = affinity.get("nodeAffinity")
    if isinstance(node_affinity, Mapping):
        errs.extend(validate_node_affinity(node_affinity, f.child(path, "nodeAffinity")))
    for name in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(name)
        if isinstance(terms, Mapping):
            errs.extend(
                validate_pod_affinity(terms, f.child(path, name), allow_invalid_values=allow_invalid_values)
            )
    return errs


def validate_node_affinity(node_affinity: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """validateNodeAffinity: the required node selector, then the preferred terms."""
    errs: list[f.FieldError] = []
    required = node_affinity.get(_REQUIRED)
    if isinstance(required, Mapping):
        errs.extend(validate_node_selector(required, f.child(path, _REQUIRED)))
    preferred = as_list(node_affinity.get(_PREFERRED))
    if preferred:
        errs.extend(validate_preferred_scheduling_terms(preferred, f.child(path, _PREFERRED)))
    return errs


def validate_node_selector(selector: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """ValidateNodeSelector: at least one term, each term checked."""
    terms_path = f.child(path, "nodeSelectorTerms")
    terms = as_list(selector.get("nodeSelectorTerms"))
    if not terms:
        return [f.required(terms_path, "must have at least one node selector term")]
    errs: list[f.FieldError] = []
    for i, term in enumerate(terms):
        errs.extend(validate_node_selector_term(as_mapping(term), f.index(terms_path, i)))
    return errs


def validate_node_selector_term(term: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """ValidateNodeSelectorTerm: every matchExpressions requirement, then every matchFields one."""
    errs: list[f.FieldError] = []
    for j, req in enumerate(as_list(term.get("matchExpressions"))):
        errs.extend(
            validate_node_selector_requirement(as_mapping(req), f.index(f.child(path, "matchExpressions"), j))
        )
    for j, req in enumerate(as_list(term.get("matchFields"))):
        errs.extend(
            validate_node_field_selector_requirement(
                as_mapping(req), f.index(f.child(path, "matchFields"), j)
            )
        )
    return errs


def _strings(value: Any) -> list[str]:
    return [str(v) for v in as_list(value)]


def validate_node_selector_requirement(req: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """ValidateNodeSelectorRequirement: the operator's value count, then the key (a qualified name).
    Values are not checked as label values here (upstream checks them only where its
    AllowInvalidLabelValueInRequiredNodeAffinity option is off, not for pods)."""
    errs: list[f.FieldError] = []
    operator = req.get("operator") or ""
    values = as_list(req.get("values"))
    values_path = f.child(path, "values")
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(f.required(values_path, "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                f.forbidden(values_path, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            )
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                f.required(values_path, "must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
    else:
        errs.append(f.invalid(f.child(path, "operator"), operator, "not a valid selector operator"))
    errs.extend(validate_label_name(str(req.get("key") or ""), f.child(path, "key")))
    return errs


def validate_node_field_selector_requirement(req: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """ValidateNodeFieldSelectorRequirement: In/NotIn with exactly one value, key metadata.name,
    every value a valid node name."""
    errs: list[f.FieldError] = []
    operator = req.get("operator") or ""
    values = _strings(req.get("values"))
    values_path = f.child(path, "values")
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            detail = "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
            errs.append(f.required(values_path, detail))
    else:
        errs.append(f.invalid(f.child(path, "operator"), operator, "not a valid selector operator"))
    key = req.get("key") or ""
    if key != _OBJECT_NAME_FIELD:
        errs.append(f.invalid(f.child(path, "key"), key, "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            errs.extend(f.invalid(f.index(values_path, i), value, m) for m in name_is_dns_subdomain(value))
    return errs


def validate_preferred_scheduling_terms(terms: list[Any], path: str) -> list[f.FieldError]:
    """ValidatePreferredSchedulingTerms: each weight in 1..100, then its preference term."""
    errs: list[f.FieldError] = []
    for i, item in enumerate(terms):
        term = as_mapping(item)
        errs.extend(weight_errors(term, f.index(path, i)))
        errs.extend(
            validate_node_selector_term(
                as_mapping(term.get("preference")), f.child(f.index(path, i), "preference")
            )
        )
    return errs
