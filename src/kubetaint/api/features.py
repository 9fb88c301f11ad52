"""Feature gates kubetaint honours, with upstream names and defaults (pkg/features/kube_features.go)."""

from __future__ import annotations

from collections.abc import Mapping

#: Upstream defaults for the gates kubetaint reads (Kubernetes 1.35).
DEFAULT_FEATURE_GATES: dict[str, bool] = {
    "TaintTolerationComparisonOperators": False,  # alpha in 1.35
    "SeparateTaintEvictionController": True,  # GA path since 1.29
    "SchedulerQueueingHints": True,
    "SchedulerPopFromBackoffQ": True,  # beta since 1.33
    "PodLevelResources": True,  # beta since 1.34; QoS and requests read it
    "MaxUnavailableStatefulSet": True,  # beta and on in 1.35.0 (kubernetes#137409 turns it off later)
}

FeatureGates = Mapping[str, bool]


def resolve_gates(overrides: FeatureGates | None = None) -> dict[str, bool]:
    """Upstream defaults with `overrides` applied; unknown gate names are rejected like upstream."""
    gates = dict(DEFAULT_FEATURE_GATES)
    for name, value in (overrides or {}).items():
        if name not in gates:
            raise ValueError(f"unrecognized feature gate: {name}")
        if not isinstance(value, bool):
            raise ValueError(f"invalid value of {name}={value!r}, err: must be true or false")
        gates[name] = value
    return gates


def comparison_operators_enabled(gates: FeatureGates | None) -> bool:
    """Whether `Lt`/`Gt` toleration operators are on (TaintTolerationComparisonOperators)."""
    if not gates:
        return DEFAULT_FEATURE_GATES["TaintTolerationComparisonOperators"]
    return bool(gates.get("TaintTolerationComparisonOperators", False))


def gate_enabled(gates: FeatureGates | None, name: str) -> bool:
    """Whether the gate `name` is on: its value in `gates`, else upstream's default."""
    if gates is not None and name in gates:
        return bool(gates[name])
    return DEFAULT_FEATURE_GATES[name]
