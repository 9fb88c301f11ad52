"""Node taint and pod toleration validation, including the pod-update toleration rule
(mirrors pkg/apis/core/validation/validation.go: validateNodeTaints, ValidateTolerations,
validateTaintEffect, validateOnlyAddedTolerations; pkg/api/pod/util.go for Lt/Gt ratcheting)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.api.content import is_decimal_integer
from kubetaint.api.goquote import go_quote
from kubetaint.api.validation import field as f
from kubetaint.api.validation.names import is_valid_label_value
from kubetaint.api.validation.objectmeta import validate_label_name

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
BASE_OPERATORS = ("Equal", "Exists")
COMPARISON_OPERATORS = ("Lt", "Gt")
EMPTY_KEY_DETAIL = 'operator must be Exists when `key` is empty, which means "match all values and all keys"'
SECONDS_DETAIL = "effect must be 'NoExecute' when `tolerationSeconds` is set"
EXISTS_VALUE_DETAIL = "value must be empty when `operator` is 'Exists'"
DUPLICATE_TAINT_DETAIL = "taints must be unique by key and effect pair"
MODIFIED_TOLERATION_DETAIL = "existing toleration can not be modified except its tolerationSeconds"
#: Where ValidateNode reports spec.taints: upstream builds the path from "metadata" (a long-standing
#: quirk), so kube-apiserver says `metadata.taints[0].effect`, not `spec.taints[0].effect`.
NODE_TAINTS_PATH = "metadata.taints"


def _s(obj: Mapping[str, Any], name: str) -> str:
    value = obj.get(name)
    return "" if value is None else str(value)


def validate_taint_effect(effect: str, allow_empty: bool, path: str) -> list[f.FieldError]:
    """validateTaintEffect: Required when empty (unless allowed), else one of the three effects."""
    if not allow_empty and not effect:
        return [f.required(path)]
    if effect in TAINT_EFFECTS:
        return []
    return [f.not_supported(path, effect, TAINT_EFFECTS)]


def taint_go_repr(taint: Mapping[str, Any]) -> f.GoValue:
    """The `%#v` of core.Taint that upstream prints for a duplicate taint."""
    time_added = taint.get("timeAdded")
    added = "(*v1.Time)(nil)" if time_added is None else f"time.Date({go_quote(str(time_added))})"
    rendered = (
        f"core.Taint{{Key:{go_quote(_s(taint, 'key'))}, Value:{go_quote(_s(taint, 'value'))}, "
        f"Effect:{go_quote(_s(taint, 'effect'))}, TimeAdded:{added}}}"
    )
    return f.GoValue(dict(taint), rendered)


def validate_node_taints(
    taints: Sequence[Mapping[str, Any]], path: str = NODE_TAINTS_PATH
) -> list[f.FieldError]:
    """validateNodeTaints: key, value, effect, then uniqueness by (key, effect) on the later index."""
    errs: list[f.FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        idx = f.index(path, i)
        key, value, effect = _s(taint, "key"), _s(taint, "value"), _s(taint, "effect")
        errs.extend(validate_label_name(key, f.child(idx, "key")))
        msgs = is_valid_label_value(value)
        if msgs:
            errs.append(f.invalid(f.child(idx, "value"), value, ";".join(msgs)))
        errs.extend(validate_taint_effect(effect, False, f.child(idx, "effect")))
        if (key, effect) in seen:
            errs.append(f.duplicate(idx, taint_go_repr(taint), DUPLICATE_TAINT_DETAIL))
            continue
        seen.add((key, effect))
    return errs


def validate_tolerations(
    tolerations: Sequence[Mapping[str, Any]], path: str, *, allow_comparison: bool = False
) -> list[f.FieldError]:
    """ValidateTolerations.

    `allow_comparison` is PodValidationOptions.AllowTaintTolerationComparisonOperators.
    """
    errs: list[f.FieldError] = []
    for i, toleration in enumerate(tolerations):
        idx = f.index(path, i)
        key, operator = _s(toleration, "key"), _s(toleration, "operator")
        value, effect = _s(toleration, "value"), _s(toleration, "effect")
        if key:
            errs.extend(validate_label_name(key, f.child(idx, "key")))
        if not key and operator != "Exists":
            errs.append(f.invalid(f.child(idx, "operator"), operator, EMPTY_KEY_DETAIL))
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(f.invalid(f.child(idx, "effect"), effect, SECONDS_DETAIL))
        errs.extend(_validate_operator(operator, value, idx, allow_comparison))
        if effect:
            errs.extend(validate_taint_effect(effect, True, f.child(idx, "effect")))
    return errs


def _validate_operator(operator: str, value: str, idx: str, allow_comparison: bool) -> list[f.FieldError]:
    if operator in ("", "Equal"):
        msgs = is_valid_label_value(value)
        return [f.invalid(f.child(idx, "operator"), value, ";".join(msgs))] if msgs else []
    if operator == "Exists":
        return [f.invalid(f.child(idx, "operator"), value, EXISTS_VALUE_DETAIL)] if value else []
    if operator in COMPARISON_OPERATORS:
        # [unverified] 1.35 branch: rejected with every operator listed when not allowed; when
        # allowed the value must be a canonical decimal int64 (content.IsDecimalInteger).
        if not allow_comparison:
            return [
                f.not_supported(f.child(idx, "operator"), operator, BASE_OPERATORS + COMPARISON_OPERATORS)
            ]
        return [f.invalid(f.child(idx, "value"), value, msg) for msg in _int64_messages(value)]
    return [f.not_supported(f.child(idx, "operator"), operator, BASE_OPERATORS)]


def _int64_messages(value: str) -> list[str]:
    msgs = is_decimal_integer(value)
    if not msgs and not -(2**63) <= int(value) < 2**63:
        msgs = ["must be a valid decimal integer in canonical form"]
    return msgs


def _without_seconds(toleration: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in toleration.items() if k != "tolerationSeconds" and v not in (None, "")}


def validate_only_added_tolerations(
    new: Sequence[Mapping[str, Any]],
    old: Sequence[Mapping[str, Any]],
    path: str = "spec.tolerations",
    *,
    allow_comparison: bool = False,
) -> list[f.FieldError]:
    """validateOnlyAddedTolerations: every old toleration must survive (tolerationSeconds may change)."""
    new_keys = [_without_seconds(t) for t in new]
    for toleration in old:
        if _without_seconds(toleration) not in new_keys:
            return [f.forbidden(path, MODIFIED_TOLERATION_DETAIL)]
    return validate_tolerations(new, path, allow_comparison=allow_comparison)
