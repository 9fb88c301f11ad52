"""A KubeSchedulerConfiguration of the wrong shape is a ConfigError naming the field, never a crash."""

import random

import pytest

from kubetaint.clock import VirtualClock
from kubetaint.scheduler.config import ConfigError
from kubetaint.scheduler.scheduler import Scheduler


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(
            {"profiles": "x"},
            "profiles: Invalid value: 'x': must be a list of KubeSchedulerProfile",
            id="profiles not a list",
        ),
        pytest.param(
            {"profiles": [1]},
            "profiles[0]: Invalid value: 1: must be a KubeSchedulerProfile object",
            id="a profile not an object",
        ),
        pytest.param(
            {"profiles": [{"plugins": "x"}]},
            "profiles[0].plugins: Invalid value: 'x': must be a Plugins object",
            id="plugins not an object",
        ),
        pytest.param(
            {"profiles": [{"plugins": {"score": {"enabled": "x"}}}]},
            "profiles[0].plugins.score.enabled: Invalid value: 'x': must be a list of Plugin",
            id="enabled plugins not a list",
        ),
        pytest.param(
            {"profiles": [{"plugins": {"filter": {"disabled": [3]}}}]},
            "profiles[0].plugins.filter.disabled[0]: Invalid value: 3: must be a Plugin object",
            id="a disabled plugin not an object",
        ),
        pytest.param(
            {"profiles": [{"pluginConfig": "x"}]},
            "profiles[0].pluginConfig: Invalid value: 'x': must be a list of PluginConfig",
            id="pluginConfig not a list",
        ),
    ],
)
def test_wrong_shapes_are_config_errors(config: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        Scheduler(VirtualClock(), random.Random(0), config=config)
    assert str(err.value) == message
