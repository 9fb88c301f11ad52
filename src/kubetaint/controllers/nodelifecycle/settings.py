"""Node lifecycle controller settings: kube-controller-manager's flags, upstream names and defaults
(pkg/controller/nodelifecycle/config/v1alpha1/defaults.go; nodeMonitorGracePeriod 50s since v1.32)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: Any, name: str) -> float:
    """Seconds of a Go duration (`50s`, `1m30s`, `100ms`) or a plain number of seconds."""
    if isinstance(value, bool):
        raise ValueError(f"{name}: invalid duration {value!r}")
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        pass
    if text in ("0", ""):
        return 0.0
    position, total = 0, 0.0
    while position < len(text):
        match = _DURATION_PART.match(text, position)
        if match is None:
            raise ValueError(f'{name}: time: invalid duration "{text}"')
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        position = match.end()
    return total


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
        for name in ("node_monitor_grace_period", "node_startup_grace_period"):
            if getattr(self, name) < 0:
                raise ValueError(f"{_camel(name)}: must not be negative")
        for name in ("node_eviction_rate", "secondary_node_eviction_rate"):
            if getattr(self, name) < 0:
                raise ValueError(f"{_camel(name)}: must not be negative")
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
