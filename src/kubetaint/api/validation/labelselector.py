"""metav1.LabelSelector checks (mirrors staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation's
ValidateLabelSelector and ValidateLabelSelectorRequirement, and whether
metav1.LabelSelectorAsSelector accepts a selector).

A selector's matchLabels are checked as labels (every error at the `matchLabels` path, as upstream
reports them), then each matchExpressions requirement: the operator's value count, the key (a
qualified name) and, unless old invalid data is being kept (`allow_invalid_values`), each value
as a label value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.goquote import go_quote
from kubetaint.api.jsonview import as_list, as_mapping
from kubetaint.api.validation import field as f
from kubetaint.api.validation.names import is_qualified_name, is_valid_label_value
from kubetaint.api.validation.objectmeta import validate_label_name, validate_labels

_SET_OPERATORS = ("In", "NotIn")
_EXISTENCE_OPERATORS = ("Exists", "DoesNotExist")


def validate_label_selector(
    selector: Any, path: str, *, allow_invalid_values: bool = False
) -> list[f.FieldError]:
    """ValidateLabelSelector: nothing for an absent selector."""
    if not isinstance(selector, Mapping):
        return []
    errs: list[f.FieldError] = []
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, Mapping):
        errs.extend(validate_labels(match_labels, f.child(path, "matchLabels")))
    expressions_path = f.child(path, "matchExpressions")
    for i, requirement in enumerate(as_list(selector.get("matchExpressions"))):
        errs.extend(
            validate_label_selector_requirement(
                as_mapping(requirement),
                f.index(expressions_path, i),
                allow_invalid_values=allow_invalid_values,
            )
        )
    return errs


def validate_label_selector_requirement(
    requirement: Mapping[str, Any], path: str, *, allow_invalid_values: bool = False
) -> list[f.FieldError]:
    """ValidateLabelSelectorRequirement: operator and value count, key, then the values."""
    errs: list[f.FieldError] = []
    operator = requirement.get("operator") or ""
    values = as_list(requirement.get("values"))
    values_path = f.child(path, "values")
    if operator in _SET_OPERATORS:
        if not values:
            errs.append(f.required(values_path, "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in _EXISTENCE_OPERATORS:
        if values:
            errs.append(
                f.forbidden(values_path, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            )
    else:
        errs.append(f.invalid(f.child(path, "operator"), operator, "not a valid selector operator"))
    errs.extend(validate_label_name(str(requirement.get("key") or ""), f.child(path, "key")))
    if not allow_invalid_values:
        for i, value in enumerate(values):
            text = str(value)
            errs.extend(f.invalid(f.index(values_path, i), text, msg) for msg in is_valid_label_value(text))
    return errs


def selector_converts(selector: Any) -> bool:
    """Whether metav1.LabelSelectorAsSelector accepts `selector` (an absent one converts to a
    selector that matches nothing): every matchLabels pair a valid label, every requirement a
    known operator with the value count it needs, a valid key and valid values."""
    if not isinstance(selector, Mapping):
        return True
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, Mapping):
        for key, value in match_labels.items():
            if is_qualified_name(str(key)) or is_valid_label_value("" if value is None else str(value)):
                return False
    for item in as_list(selector.get("matchExpressions")):
        requirement = as_mapping(item)
        operator = requirement.get("operator") or ""
        values = [str(v) for v in as_list(requirement.get("values"))]
        if operator in _SET_OPERATORS:
            if not values:
                return False
        elif operator in _EXISTENCE_OPERATORS:
            if values:
                return False
        else:
            return False
        if is_qualified_name(str(requirement.get("key") or "")):
            return False
        if any(is_valid_label_value(v) for v in values):
            return False
    return True


def has_invalid_label_value(selector: Any) -> bool:
    """hasInvalidLabelValueInLabelSelector: whether any requirement value is not a valid label
    value (such old data is kept valid on update)."""
    if not isinstance(selector, Mapping):
        return False
    return any(
        is_valid_label_value(str(value))
        for requirement in as_list(selector.get("matchExpressions"))
        for value in as_list(as_mapping(requirement).get("values"))
    )


def go_label_selector(selector: Mapping[str, Any]) -> str:
    """A selector as Go's `%#v` prints a `*metav1.LabelSelector` (map keys sorted, as fmt does)."""
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, Mapping):
        pairs = ", ".join(f"{go_quote(str(k))}:{go_quote(str(v))}" for k, v in sorted(match_labels.items()))
        labels_text = f"map[string]string{{{pairs}}}"
    else:
        labels_text = "map[string]string(nil)"
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list):
        items = ", ".join(_go_requirement(as_mapping(r)) for r in expressions)
        expressions_text = f"[]v1.LabelSelectorRequirement{{{items}}}"
    else:
        expressions_text = "[]v1.LabelSelectorRequirement(nil)"
    return f"&v1.LabelSelector{{MatchLabels:{labels_text}, MatchExpressions:{expressions_text}}}"


def _go_requirement(requirement: Mapping[str, Any]) -> str:
    values = requirement.get("values")
    if isinstance(values, list):
        values_text = "[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}"
    else:
        values_text = "[]string(nil)"
    key = go_quote(str(requirement.get("key") or ""))
    operator = go_quote(str(requirement.get("operator") or ""))
    return f"v1.LabelSelectorRequirement{{Key:{key}, Operator:{operator}, Values:{values_text}}}"
