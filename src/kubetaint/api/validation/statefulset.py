"""A StatefulSet's rolling update parameters (mirrors validateRollingUpdateStatefulSet of
pkg/apis/apps/validation, which ValidateStatefulSetSpec runs for a RollingUpdate strategy with a
rollingUpdate): a non-negative partition, a maxUnavailable that is a positive integer or a
percentage from 1% to 100%."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.validation import field as f
from kubetaint.api.validation.intstr import go_int_or_string, int_or_percent, int_or_percent_value
from kubetaint.api.validation.objectmeta import IS_NEGATIVE_ERROR

ROLLING_UPDATE = "spec.updateStrategy.rollingUpdate"


def validate_update_strategy(spec: Mapping[str, Any]) -> list[f.FieldError]:
    """The updateStrategy checks of ValidateStatefulSetSpec for a RollingUpdate strategy with a
    rollingUpdate (the strategy's type is defaulted before validation)."""
    strategy = spec.get("updateStrategy")
    if not isinstance(strategy, Mapping) or strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return []
    rolling = strategy.get("rollingUpdate")
    if not isinstance(rolling, Mapping):
        return []
    return validate_rolling_update(rolling, ROLLING_UPDATE)


def validate_rolling_update(rolling: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """validateRollingUpdateStatefulSet: partition >= 0; maxUnavailable, when set, a valid int or
    percentage, not 0, not above 100%."""
    errs: list[f.FieldError] = []
    partition = rolling.get("partition")
    if isinstance(partition, int) and not isinstance(partition, bool) and partition < 0:
        errs.append(f.invalid(f.child(path, "partition"), partition, IS_NEGATIVE_ERROR))
    value = rolling.get("maxUnavailable")
    if value is None:
        return errs
    max_path = f.child(path, "maxUnavailable")
    found = int_or_percent(value, max_path)
    if isinstance(value, int | str) and not isinstance(value, bool) and int_or_percent_value(value) == 0:
        zero = f.invalid(max_path, go_int_or_string(value), "cannot be 0")
        # ValidatePositiveIntOrPercent's errors, "cannot be 0", then IsNotMoreThan100Percent's
        # (a value above 100% is never 0, so the two last never meet)
        found.append(zero)
    errs.extend(found)
    return errs
