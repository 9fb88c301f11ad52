"""The StatefulSet spec checks ValidateStatefulSetSpec (pkg/apis/apps/validation) runs before
the selector and the template: podManagementPolicy, updateStrategy (with
validateRollingUpdateStatefulSet: a non-negative partition, a maxUnavailable that is a positive
integer or a percentage from 1% to 100%), persistentVolumeClaimRetentionPolicy, replicas,
minReadySeconds and ordinals.start (the selector and the template are the other apps/v1 workloads'
checks). A field left unset or empty is one kube-apiserver defaults before validating, so it
passes here too (`kubetaint validate` checks manifests as written)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.goquote import go_quote
from kubetaint.api.validation import field as f
from kubetaint.api.validation.intstr import go_int_or_string, int_or_percent, int_or_percent_value
from kubetaint.api.validation.objectmeta import IS_NEGATIVE_ERROR

ROLLING_UPDATE = "spec.updateStrategy.rollingUpdate"
RETENTION_POLICIES = ("Retain", "Delete")
#: a pointer's `%#v`: upstream prints an address, which varies
_POINTER = "0xc000000000"


def validate_spec_policies(spec: Mapping[str, Any]) -> list[f.FieldError]:
    """ValidateStatefulSetSpec's checks before the selector and the template, in its order."""
    errs = _pod_management_policy(spec.get("podManagementPolicy"))
    errs.extend(_update_strategy(spec.get("updateStrategy")))
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(retention, Mapping):
        path = "spec.persistentVolumeClaimRetentionPolicy"
        for name in ("whenDeleted", "whenScaled"):  # unset or empty is defaulted to Retain
            value = retention.get(name)
            if value not in (None, "", *RETENTION_POLICIES):
                errs.append(f.not_supported(f.child(path, name), value, RETENTION_POLICIES))
    errs.extend(_non_negative(spec.get("replicas"), "spec.replicas"))
    errs.extend(_non_negative(spec.get("minReadySeconds"), "spec.minReadySeconds"))
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, Mapping):
        errs.extend(_non_negative(ordinals.get("start"), "spec.ordinals.start"))
    return errs


def _pod_management_policy(policy: Any) -> list[f.FieldError]:
    # unset or empty is defaulted (OrderedReady) before validation: upstream's Required never shows
    if policy in (None, "", "OrderedReady", "Parallel"):
        return []
    return [f.invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")]


def _update_strategy(strategy: Any) -> list[f.FieldError]:
    path = "spec.updateStrategy"
    strategy = strategy if isinstance(strategy, Mapping) else {}
    kind = strategy.get("type") or "RollingUpdate"  # defaulted before validation, as podManagementPolicy
    rolling = strategy.get("rollingUpdate")
    if kind == "OnDelete":
        if rolling is None:
            return []
        shown = f.GoValue(rolling, _go_rolling_update(rolling))
        return [
            f.invalid(
                f.child(path, "rollingUpdate"), shown, "only allowed for updateStrategy 'RollingUpdate'"
            )
        ]
    if kind == "RollingUpdate":
        return validate_rolling_update(rolling, ROLLING_UPDATE) if isinstance(rolling, Mapping) else []
    pointer = "(nil)" if rolling is None else f"({_POINTER})"
    shown = f.GoValue(
        strategy,
        f"apps.StatefulSetUpdateStrategy{{Type:{go_quote(str(kind))}, "
        f"RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy){pointer}}}",
    )
    return [f.invalid(path, shown, "must be 'RollingUpdate' or 'OnDelete'")]


def _go_rolling_update(rolling: Any) -> str:
    """`%#v` of the internal apps.RollingUpdateStatefulSetStrategy."""
    fields = rolling if isinstance(rolling, Mapping) else {}
    partition = fields.get("partition")
    partition = partition if isinstance(partition, int) and not isinstance(partition, bool) else 0
    pointer = "(nil)" if fields.get("maxUnavailable") is None else f"({_POINTER})"
    return (
        f"apps.RollingUpdateStatefulSetStrategy{{Partition:{partition}, "
        f"MaxUnavailable:(*intstr.IntOrString){pointer}}}"
    )


def _non_negative(value: Any, path: str) -> list[f.FieldError]:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [f.invalid(path, value, IS_NEGATIVE_ERROR)]
    return []


def validate_rolling_update(rolling: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """validateRollingUpdateStatefulSet: partition >= 0; maxUnavailable, when set, a valid int or
    percentage, not 0, not above 100%."""
    errs = _non_negative(rolling.get("partition"), f.child(path, "partition"))
    value = rolling.get("maxUnavailable")
    if value is None:
        return errs
    max_path = f.child(path, "maxUnavailable")
    found = int_or_percent(value, max_path)
    if isinstance(value, int | str) and not isinstance(value, bool) and int_or_percent_value(value) == 0:
        # ValidatePositiveIntOrPercent's errors, "cannot be 0", then IsNotMoreThan100Percent's
        # (a value above 100% is never 0, so the two last never meet)
        found.append(f.invalid(max_path, go_int_or_string(value), "cannot be 0"))
    errs.extend(found)
    return errs
