"""Plugin argument validation with upstream's field paths and wording
(apis/config/validation/validation_pluginargs.go: ValidateNodeResourcesFitArgs and
ValidateNodeResourcesBalancedAllocationArgs, as the plugins' constructors run them)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.plugins.node_resources_balanced_allocation import NodeResourcesBalancedAllocation
from kubetaint.scheduler.plugins.node_resources_fit import NodeResourcesFit


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 0}]}},
            "scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in valid range (0, 100]",
            id="a zero resource weight",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "memory", "weight": 101}]}},
            "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of memory not in valid "
            "range (0, 100]",
            id="a resource weight above 100",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 60, "score": 1}, {"utilization": 40, "score": 11}]
                    },
                }
            },
            "[scoringStrategy.shape[1].utilization: Invalid value: 40: values must be sorted in increasing "
            "order, scoringStrategy.shape[1].score: Invalid value: 11: not in valid range [0, 10]]",
            id="a shape out of order with a score above 10",
        ),
    ],
)
def test_node_resources_fit_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as err:
        NodeResourcesFit(args)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 2}]},
            "resources[0].weight: Invalid value: 2: must be 1",
            id="a weight other than 1",
        ),
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
            'resources[1].name: Duplicate value: "cpu"',
            id="a repeated resource",
        ),
    ],
)
def test_balanced_allocation_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as err:
        NodeResourcesBalancedAllocation(args)
    assert str(err.value) == message
