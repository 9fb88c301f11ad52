"""Node lifecycle controller settings: kube-controller-manager's flags, upstream names and defaults
(pkg/controller/nodelifecycle/config/v1alpha1/defaults.go; nodeMonitorGracePeriod 50s since v1.32)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from kubetaint.core import durations


def parse_duration(value: Any, name: str) -> float:
    """Seconds of a Go duration (`50s`, `1m30s`, `100ms`) or a plain number of seconds."""
    try:
        return durations.parse_duration(value)
    except durations.DurationError as err:
        raise ValueError(f"{name}: {err}") from None


@dataclass(frozen=True)
class NodeLifecycleSettings:
    """Durations in seconds; rates in nodes per second per zone."""

    node_monitor_period: float = 5.0
    node_monitor_grace_period: float = 50.0
    node_startup_grace_period: float = 60.0
    node_eviction_rate: float = 0.1
    secondary_node_eviction_rate: float = 0.01
    unhealthy_zone_threshold: float = 0.55
    large_cluster_size_threshold: int = 50

    @classmethod
    def from_mapping(cls, settings: Mapping[str, Any] | None) -> NodeLifecycleSettings:
        """From camelCase flag names (`nodeMonitorGracePeriod: 50s`); other keys are ignored
        (scenario settings also hold other components' flags)."""
        values: dict[str, Any] = {}
        for item in fields(cls):
            camel = _camel(item.name)
            if not settings or camel not in settings:
                continue
            raw = settings[camel]
            if item.name.endswith("period"):
                values[item.name] = parse_duration(raw, camel)
            elif item.name == "large_cluster_size_threshold":
                values[item.name] = _integer(raw, camel)
            else:
                values[item.name] = _number(raw, camel)
        result = cls(**values)
        result.validate()
        return result

    def validate(self) -> None:
        if self.node_monitor_period <= 0:
            raise ValueError("nodeMonitorPeriod: must be greater than 0")
        for camel, value in (
            ("nodeMonitorGracePeriod", self.node_monitor_grace_period),
            ("nodeStartupGracePeriod", self.node_startup_grace_period),
            ("nodeEvictionRate", self.node_eviction_rate),
            ("secondaryNodeEvictionRate", self.secondary_node_eviction_rate),
        ):
            if value < 0:
                raise ValueError(f"{camel}: must not be negative")
        if not 0 <= self.unhealthy_zone_threshold <= 1:
            raise ValueError("unhealthyZoneThreshold: must be between 0 and 1")
        if self.large_cluster_size_threshold < 0:
            raise ValueError("largeClusterSizeThreshold: must not be negative")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number, got {value!r}") from None


def _integer(value: Any, name: str) -> int:
    number = _number(value, name)
    if number != int(number):
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    return int(number)
