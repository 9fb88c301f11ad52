"""The node lifecycle controller's settings refuse negative durations and rates by flag name."""

from __future__ import annotations

import pytest

from kubetaint.controllers.nodelifecycle.settings import NodeLifecycleSettings


@pytest.mark.parametrize(
    "flag, value",
    [
        ("nodeMonitorGracePeriod", "-1s"),
        ("nodeStartupGracePeriod", -5),
        ("nodeEvictionRate", -0.1),
        ("secondaryNodeEvictionRate", "-0.01"),
    ],
)
def test_a_negative_setting_is_refused_by_its_flag_name(flag: str, value: object) -> None:
    with pytest.raises(ValueError, match=rf"^{flag}: must not be negative$"):
        NodeLifecycleSettings.from_mapping({flag: value})


def test_zero_grace_periods_and_rates_are_accepted() -> None:
    settings = NodeLifecycleSettings.from_mapping(
        {"nodeMonitorGracePeriod": "0s", "nodeEvictionRate": 0, "secondaryNodeEvictionRate": 0}
    )
    assert (settings.node_monitor_grace_period, settings.node_eviction_rate) == (0.0, 0.0)
