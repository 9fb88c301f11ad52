"""NodeSchedulingPropertiesChange (events.node_change_actions) against upstream's tables
(pkg/scheduler/framework/events_test.go: TestNodeSchedulingPropertiesChange,
TestNodeAllocatableChange, TestNodeLabelsChange, TestNodeTaintsChange, TestNodeConditionsChange),
and the cases where upstream raises no event although the node changed: a cordon, a capacity
change with allocatable kept, a quantity written differently with the same value."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.events import ActionType, node_change_actions

JSON = dict[str, Any]
NONE = ActionType(0)
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


def _node(
    *,
    unschedulable: bool = False,
    allocatable: JSON | None = None,
    capacity: JSON | None = None,
    labels: JSON | None = None,
    annotations: JSON | None = None,
    taints: list[JSON] | None = None,
    conditions: list[JSON] | None = None,
) -> JSON:
    """st.MakeNode(): a node with the given parts (Capacity sets capacity and allocatable)."""
    meta: JSON = {"name": ""}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    spec: JSON = {"unschedulable": unschedulable}
    if taints is not None:
        spec["taints"] = taints
    status: JSON = {}
    if allocatable is not None:
        status["allocatable"] = allocatable
    if capacity is not None:
        status["capacity"] = capacity
    if conditions is not None:
        status["conditions"] = conditions
    return {"metadata": meta, "spec": spec, "status": status}


def _sized(resources: JSON) -> JSON:
    return _node(allocatable=dict(resources), capacity=dict(resources))


@pytest.mark.parametrize(
    ("new", "old", "want"),
    [
        pytest.param(_node(), _node(), NONE, id="no specific changed applied"),
        pytest.param(
            _node(unschedulable=False),
            _node(unschedulable=True),
            ActionType.UpdateNodeTaint,
            id="only node spec unavailable changed",
        ),
        pytest.param(
            _sized({"cpu": "1000m", "memory": "100m", "example.com/foo": "1"}),
            _sized({"cpu": "1000m", "memory": "100m", "example.com/foo": "2"}),
            ActionType.UpdateNodeAllocatable,
            id="only node allocatable changed",
        ),
        pytest.param(
            _node(labels={"foo": "bar"}),
            _node(labels={"foo": "fuz"}),
            ActionType.UpdateNodeLabel,
            id="only node label changed",
        ),
        pytest.param(
            _node(taints=[{"key": UNSCHEDULABLE_TAINT, "value": "", "effect": "NoSchedule"}]),
            _node(taints=[{"key": UNSCHEDULABLE_TAINT, "value": "foo", "effect": "NoSchedule"}]),
            ActionType.UpdateNodeTaint,
            id="only node taint changed",
        ),
        pytest.param(
            _node(annotations={"foo": "bar"}),
            _node(annotations={"foo": "fuz"}),
            ActionType.UpdateNodeAnnotation,
            id="only node annotation changed",
        ),
        pytest.param(
            _node(),
            _node(conditions=[{"type": "Ready", "status": "True", "reason": "Ready", "message": "Ready"}]),
            ActionType.UpdateNodeCondition,
            id="only node condition changed",
        ),
        pytest.param(
            _node(
                labels={"foo": "bar"},
                taints=[{"key": UNSCHEDULABLE_TAINT, "value": "", "effect": "NoSchedule"}],
            ),
            _node(taints=[{"key": UNSCHEDULABLE_TAINT, "value": "foo", "effect": "NoSchedule"}]),
            ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint,
            id="both node label and node taint changed",
        ),
        # extractNodeSpecUnschedulableChange: only a node becoming schedulable
        pytest.param(
            _node(unschedulable=True),
            _node(unschedulable=False),
            NONE,
            id="a cordon (spec.unschedulable false to true) raises no event",
        ),
        # extractNodeAllocatableChange reads Status.Allocatable alone, by semantic equality
        pytest.param(
            _node(allocatable={"cpu": "4"}, capacity={"cpu": "8"}),
            _node(allocatable={"cpu": "4"}, capacity={"cpu": "4"}),
            NONE,
            id="capacity changed with allocatable kept raises no event",
        ),
        pytest.param(
            _node(allocatable={"cpu": "1", "memory": "1Gi"}),
            _node(allocatable={"cpu": "1000m", "memory": "1073741824"}),
            NONE,
            id="allocatable written differently with the same values raises no event",
        ),
        pytest.param(
            _node(allocatable={}),
            _node(),
            NONE,
            id="an empty allocatable equals an absent one",
        ),
    ],
)
def test_node_scheduling_properties_change(new: JSON, old: JSON, want: ActionType) -> None:
    assert node_change_actions(old, new) == want


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        pytest.param({"memory": "1Ki"}, {"memory": "1Ki"}, False, id="no allocatable resources changed"),
        pytest.param(
            {"memory": "1Ki"},
            {"memory": "1Ki", "storage": "1Ki"},
            True,
            id="new node has more allocatable resources",
        ),
    ],
)
def test_node_allocatable_change(old: JSON, new: JSON, changed: bool) -> None:
    got = node_change_actions(_node(allocatable=old), _node(allocatable=new))
    assert bool(got & ActionType.UpdateNodeAllocatable) is changed


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        pytest.param({"foo": "bar"}, {"foo": "bar"}, False, id="no labels changed"),
        pytest.param({"foo": "bar"}, {"foo": "bar", "test": "value"}, True, id="new object has more labels"),
    ],
)
def test_node_labels_change(old: JSON, new: JSON, changed: bool) -> None:
    got = node_change_actions(_node(labels=old), _node(labels=new))
    assert bool(got & ActionType.UpdateNodeLabel) is changed


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        pytest.param(
            [{"key": "key", "value": "value"}],
            [{"key": "key", "value": "value"}],
            False,
            id="no taint changed",
        ),
        pytest.param(
            [{"key": "key", "value": "value1"}],
            [{"key": "key", "value": "value2"}],
            True,
            id="taint value changed",
        ),
    ],
)
def test_node_taints_change(old: list[JSON], new: list[JSON], changed: bool) -> None:
    got = node_change_actions(_node(taints=old), _node(taints=new))
    assert bool(got & ActionType.UpdateNodeTaint) is changed


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        pytest.param(
            [{"type": "DiskPressure", "status": "True"}],
            [{"type": "DiskPressure", "status": "True"}],
            False,
            id="no condition changed",
        ),
        pytest.param(
            [{"type": "DiskPressure", "status": "True", "lastHeartbeatTime": "1970-01-01T00:00:01Z"}],
            [{"type": "DiskPressure", "status": "True", "lastHeartbeatTime": "1970-01-01T00:00:02Z"}],
            False,
            id="only LastHeartbeatTime changed",
        ),
        pytest.param(
            [], [{"type": "Ready", "status": "True"}], True, id="new node has more healthy conditions"
        ),
        pytest.param(
            [{"type": "DiskPressure", "status": "True"}],
            [],
            True,
            id="new node has less unhealthy conditions",
        ),
        pytest.param(
            [{"type": "Ready", "status": "False"}],
            [{"type": "Ready", "status": "True"}],
            True,
            id="condition status changed",
        ),
    ],
)
def test_node_conditions_change(old: list[JSON], new: list[JSON], changed: bool) -> None:
    got = node_change_actions(_node(conditions=old), _node(conditions=new))
    assert bool(got & ActionType.UpdateNodeCondition) is changed
