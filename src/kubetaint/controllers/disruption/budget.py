"""PodDisruptionBudget arithmetic (pure): desired healthy pods and allowed disruptions.

Mirrors pkg/controller/disruption/disruption.go (getExpectedPodCount, updatePdbStatus) and
apimachinery intstr.GetScaledValueFromIntOrPercent (percentages round up).
"""

from __future__ import annotations

import math
import re

_PERCENT = re.compile(r"^(\d+)%$")


class BudgetError(ValueError):
    """An intOrString that is neither an integer nor a percentage (upstream's error text)."""


def scaled_value(value: int | str, total: int, round_up: bool = True) -> int:
    """GetScaledValueFromIntOrPercent."""
    if isinstance(value, int):
        return value
    match = _PERCENT.match(value)
    if match is None:
        raise BudgetError("invalid value for IntOrString: invalid type: string is not a percentage")
    percent = int(match.group(1))
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def uses_scale(min_available: int | str | None, max_unavailable: int | str | None) -> bool:
    """Whether the expected count comes from the controllers' scale (maxUnavailable or a percentage)."""
    return max_unavailable is not None or isinstance(min_available, str)


def desired_healthy(
    min_available: int | str | None, max_unavailable: int | str | None, expected: int, pod_count: int
) -> tuple[int, int]:
    """(expectedCount, desiredHealthy) as getExpectedPodCount computes them, given the summed
    controller scale `expected` (used when `uses_scale`) and the number of selected pods."""
    if max_unavailable is not None:
        return expected, max(0, expected - scaled_value(max_unavailable, expected))
    if isinstance(min_available, int):
        return pod_count, min_available
    if isinstance(min_available, str):
        return expected, scaled_value(min_available, expected)
    return 0, 0


def disruptions_allowed(current_healthy: int, desired: int, expected: int) -> int:
    """updatePdbStatus: currentHealthy - desiredHealthy, never negative, 0 while nothing is expected."""
    allowed = current_healthy - desired
    return 0 if expected <= 0 or allowed <= 0 else allowed
