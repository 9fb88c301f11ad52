"""Control-plane settings (a scenario's `settings`): upstream flag names in camelCase, split by the
component that reads them, checked before anything runs. Absent settings keep upstream defaults
(each component's own)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetaint.core.durations import DurationError, parse_duration

#: kube-controller-manager node lifecycle flags (durations).
NODE_LIFECYCLE_DURATIONS = ("nodeMonitorPeriod", "nodeMonitorGracePeriod", "nodeStartupGracePeriod")
#: kube-controller-manager node lifecycle flags (numbers).
NODE_LIFECYCLE_NUMBERS = (
    "nodeEvictionRate",
    "secondaryNodeEvictionRate",
    "unhealthyZoneThreshold",
    "largeClusterSizeThreshold",
)
#: kube-apiserver admission flags.
ADMISSION_KEYS = (
    "defaultNotReadyTolerationSeconds",
    "defaultUnreachableTolerationSeconds",
    "enableAdmissionPlugins",
    "disableAdmissionPlugins",
    "podTolerationRestrictionConfig",
)
#: kube-scheduler configuration.
SCHEDULER_KEYS = ("percentageOfNodesToScore", "schedulerConfiguration")
#: kube-controller-manager pod GC.
PODGC_KEYS = ("terminatedPodGCThreshold",)

KNOWN_KEYS = frozenset(
    (*NODE_LIFECYCLE_DURATIONS, *NODE_LIFECYCLE_NUMBERS, *ADMISSION_KEYS, *SCHEDULER_KEYS, *PODGC_KEYS)
)


class SettingsError(ValueError):
    """A setting the control plane cannot use; `key` names it."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass
class ControlPlaneSettings:
    """The settings, grouped by component (raw upstream names and values)."""

    node_lifecycle: dict[str, Any] = field(default_factory=dict)
    admission: dict[str, Any] = field(default_factory=dict)
    scheduler_config: dict[str, Any] | None = None
    podgc: dict[str, Any] = field(default_factory=dict)


def _number(key: str, value: Any, *, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SettingsError(key, f"expected a number, got {value!r}")
    if integer and value != int(value):
        raise SettingsError(key, f"expected an integer, got {value!r}")
    if value < 0:
        raise SettingsError(key, f"must not be negative, got {value!r}")
    return float(value)


def parse_settings(raw: Mapping[str, Any] | None) -> ControlPlaneSettings:
    """Check and group settings; SettingsError names the first bad key."""
    result, problems = check_settings(raw)
    if problems:
        raise problems[0]
    return result


def check_settings(raw: Mapping[str, Any] | None) -> tuple[ControlPlaneSettings, list[SettingsError]]:
    """Check and group settings: the usable ones grouped, and every bad key's SettingsError in the
    order the keys are given."""
    result = ControlPlaneSettings()
    problems: list[SettingsError] = []
    for key, value in (raw or {}).items():
        try:
            _add_setting(result, key, value)
        except SettingsError as err:
            problems.append(err)
    return result, problems


def _add_setting(result: ControlPlaneSettings, key: Any, value: Any) -> None:
    if key not in KNOWN_KEYS:
        supported = ", ".join(sorted(KNOWN_KEYS))
        raise SettingsError(str(key), f"unknown setting (supported: {supported})")
    if key in NODE_LIFECYCLE_DURATIONS:
        try:
            seconds = parse_duration(value)
        except DurationError as err:
            raise SettingsError(key, str(err)) from None
        result.node_lifecycle[key] = seconds
    elif key in NODE_LIFECYCLE_NUMBERS:
        _number(key, value, integer=key == "largeClusterSizeThreshold")
        result.node_lifecycle[key] = value
    elif key in ADMISSION_KEYS:
        if key.startswith("default"):
            _number(key, value, integer=True)
        result.admission[key] = value
    elif key == "percentageOfNodesToScore":
        pct = _number(key, value, integer=True)
        if pct > 100:
            raise SettingsError(key, f"not in valid range [0-100], got {value!r}")
        config = result.scheduler_config or {}
        result.scheduler_config = {**config, "percentageOfNodesToScore": int(pct)}
    elif key == "schedulerConfiguration":
        if not isinstance(value, Mapping):
            raise SettingsError(key, "expected a KubeSchedulerConfiguration object")
        result.scheduler_config = {**dict(value), **(result.scheduler_config or {})}
    else:
        result.podgc[key] = int(_number(key, value, integer=True))
