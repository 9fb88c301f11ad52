"""NodeSchedulingPropertiesChange (events.node_change_actions): each action bit is set exactly when
its part of the node differs by value (spec.unschedulable only when it goes from true to false) — whether the two nodes share that part's very object (a
status update keeps the spec and labels objects) or carry equal copies of it."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.scheduler.events import ActionType, node_change_actions

JSON = dict[str, Any]

_taints = st.sampled_from(
    [None, [], [{"key": "a", "effect": "NoSchedule"}], [{"key": "b", "effect": "NoExecute"}]]
)
_conditions = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["Ready", "MemoryPressure", "DiskPressure"]),
            "status": st.sampled_from(["True", "False", "Unknown"]),
            "lastHeartbeatTime": st.sampled_from(["t1", "t2"]),
        }
    ),
    max_size=3,
)
_quantities = st.sampled_from([None, {"cpu": "4"}, {"cpu": "8"}, {"cpu": "4", "pods": "110"}])
_node = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries(
            {
                "name": st.just("n1"),
                "resourceVersion": st.sampled_from(["1", "2"]),
                "labels": st.sampled_from([None, {}, {"zone": "a"}, {"zone": "b"}]),
                "annotations": st.sampled_from([None, {"x": "1"}]),
            }
        ),
        "spec": st.fixed_dictionaries(
            {"taints": _taints, "unschedulable": st.sampled_from([None, False, True])}
        ),
        "status": st.fixed_dictionaries(
            {"conditions": _conditions, "allocatable": _quantities, "capacity": _quantities}
        ),
    }
)


def _expected(old: JSON, new: JSON) -> ActionType:
    """The bits read off the two nodes part by part."""

    def part(node: JSON, section: str, key: str, empty: Any) -> Any:
        return (node.get(section) or {}).get(key) or empty

    def statuses(node: JSON) -> dict[Any, Any]:
        return {c.get("type"): c.get("status") for c in part(node, "status", "conditions", [])}

    action = ActionType(0)
    if part(old, "spec", "unschedulable", False) and not part(new, "spec", "unschedulable", False):
        action |= ActionType.UpdateNodeTaint  # uncordoned (a cordon raises nothing)
    if part(old, "spec", "taints", []) != part(new, "spec", "taints", []):
        action |= ActionType.UpdateNodeTaint
    if part(old, "status", "allocatable", {}) != part(new, "status", "allocatable", {}):
        action |= ActionType.UpdateNodeAllocatable  # (capacity is not read)
    if part(old, "metadata", "labels", {}) != part(new, "metadata", "labels", {}):
        action |= ActionType.UpdateNodeLabel
    if statuses(old) != statuses(new):
        action |= ActionType.UpdateNodeCondition
    if part(old, "metadata", "annotations", {}) != part(new, "metadata", "annotations", {}):
        action |= ActionType.UpdateNodeAnnotation
    return action


@settings(max_examples=300, deadline=None)
@given(old=_node, new=_node, shared=st.sets(st.sampled_from(["metadata", "spec", "status"])))
def test_each_bit_is_set_exactly_when_its_part_differs(old: JSON, new: JSON, shared: set[str]) -> None:
    for section in shared:  # the new node keeps the old one's object for these parts
        new[section] = old[section]
    assert node_change_actions(old, new) == _expected(old, new)
    assert node_change_actions(old, copy.deepcopy(old)) == ActionType(0), "equal copies change nothing"


@pytest.mark.parametrize(
    ("change", "action"),
    [
        pytest.param(
            lambda n: {**n, "status": {**n["status"], "conditions": [{"type": "Ready", "status": "False"}]}},
            ActionType.UpdateNodeCondition,
            id="a Ready flip on an update keeping the spec and metadata objects",
        ),
        pytest.param(
            lambda n: {
                **n,
                "status": {**n["status"], "conditions": [{"type": "Ready", "status": "True", "x": 1}]},
            },
            ActionType(0),
            id="a heartbeat alone",
        ),
        pytest.param(
            lambda n: {**n, "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}},
            ActionType.UpdateNodeTaint,
            id="a taint added",
        ),
    ],
)
def test_status_only_updates(change: Any, action: ActionType) -> None:
    old: JSON = {
        "metadata": {"name": "n1", "labels": {"zone": "a"}},
        "spec": {},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"cpu": "4"}},
    }
    assert node_change_actions(old, change(old)) == action
