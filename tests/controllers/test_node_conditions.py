"""Condition → taint mapping and the taint/condition edits of kubetaint.core.conditions."""

from __future__ import annotations

import pytest

from kubetaint.core.conditions import (
    add_or_update_taint,
    condition_taints,
    mark_conditions_unknown,
    no_schedule_taint_changes,
    remove_taint,
    taint_exists,
    taint_set_diff,
    update_pod_condition,
)

from .builders import condition, node, taint

HB = "2026-01-01T00:00:00Z"
NOW = "2026-01-01T00:01:00Z"


def keys(taints: list) -> list[str]:
    return [f"{t['key']}:{t['effect']}" for t in taints]


@pytest.mark.parametrize(
    ("conditions", "unschedulable", "expected"),
    [
        pytest.param([condition("Ready", "True", HB)], False, [], id="a healthy node wants no taints"),
        pytest.param(
            [condition("Ready", "False", HB)],
            False,
            ["node.kubernetes.io/not-ready:NoSchedule"],
            id="Ready False",
        ),
        pytest.param(
            [condition("Ready", "Unknown", HB)],
            False,
            ["node.kubernetes.io/unreachable:NoSchedule"],
            id="Ready Unknown",
        ),
        pytest.param(
            [condition("MemoryPressure", "True", HB)],
            False,
            ["node.kubernetes.io/memory-pressure:NoSchedule"],
            id="MemoryPressure True",
        ),
        pytest.param(
            [condition("DiskPressure", "True", HB)],
            False,
            ["node.kubernetes.io/disk-pressure:NoSchedule"],
            id="DiskPressure True",
        ),
        pytest.param(
            [condition("PIDPressure", "True", HB)],
            False,
            ["node.kubernetes.io/pid-pressure:NoSchedule"],
            id="PIDPressure True",
        ),
        pytest.param(
            [condition("NetworkUnavailable", "True", HB)],
            False,
            ["node.kubernetes.io/network-unavailable:NoSchedule"],
            id="NetworkUnavailable True",
        ),
        pytest.param(
            [condition("MemoryPressure", "Unknown", HB), condition("DiskPressure", "False", HB)],
            False,
            [],
            id="pressure conditions taint only when True",
        ),
        pytest.param([], True, ["node.kubernetes.io/unschedulable:NoSchedule"], id="spec.unschedulable"),
        pytest.param(
            [condition("Ready", "False", HB), condition("MemoryPressure", "True", HB)],
            True,
            [
                "node.kubernetes.io/not-ready:NoSchedule",
                "node.kubernetes.io/memory-pressure:NoSchedule",
                "node.kubernetes.io/unschedulable:NoSchedule",
            ],
            id="conditions in order then unschedulable",
        ),
        pytest.param([condition("Ready", "Bogus", HB)], False, [], id="an unknown status maps to nothing"),
    ],
)
def test_condition_taints(conditions: list, unschedulable: bool, expected: list[str]) -> None:
    assert keys(condition_taints(node("n", conditions=conditions, unschedulable=unschedulable))) == expected


def test_no_schedule_changes_leave_user_and_no_execute_taints_alone() -> None:
    n = node(
        "n",
        conditions=[condition("Ready", "Unknown", HB)],
        taints=[
            taint("dedicated", "gpu", "NoSchedule"),
            taint("node.kubernetes.io/not-ready", "", "NoSchedule"),
            taint("node.kubernetes.io/not-ready", "", "NoExecute"),
            taint("node.kubernetes.io/memory-pressure", "", "PreferNoSchedule"),
        ],
    )
    to_add, to_remove = no_schedule_taint_changes(n)
    assert keys(to_add) == ["node.kubernetes.io/unreachable:NoSchedule"]
    assert keys(to_remove) == ["node.kubernetes.io/not-ready:NoSchedule"]


def test_existing_condition_taint_with_a_value_counts_as_present() -> None:
    n = node(
        "n",
        conditions=[condition("Ready", "False", HB)],
        taints=[taint("node.kubernetes.io/not-ready", "x", "NoSchedule")],
    )
    assert no_schedule_taint_changes(n) == ([], [])


def test_taint_set_diff_is_by_key_and_effect() -> None:
    new = [taint("a", "1", "NoSchedule"), taint("b", "", "NoSchedule")]
    old = [taint("a", "2", "NoSchedule"), taint("c", "", "NoSchedule")]
    to_add, to_remove = taint_set_diff(new, old)
    assert keys(to_add) == ["b:NoSchedule"]
    assert keys(to_remove) == ["c:NoSchedule"]
    assert taint_exists(old, taint("a", "zzz", "NoSchedule"))
    assert not taint_exists(old, taint("a", "2", "NoExecute"))


@pytest.mark.parametrize(
    ("existing", "new", "expected", "updated"),
    [
        pytest.param([], taint("k", "v", "NoExecute"), ["k=v:NoExecute"], True, id="appends a new taint"),
        pytest.param(
            [taint("k", "v", "NoExecute", HB)],
            taint("k", "v", "NoExecute", HB),
            ["k=v:NoExecute"],
            False,
            id="identical is a no-op",
        ),
        pytest.param(
            [taint("a", "", "NoSchedule"), taint("k", "v", "NoExecute", HB), taint("z", "", "NoSchedule")],
            taint("k", "w", "NoExecute", NOW),
            ["a:NoSchedule", "k=w:NoExecute", "z:NoSchedule"],
            True,
            id="replaces in place when key and effect match",
        ),
        pytest.param(
            [taint("k", "v", "NoSchedule")],
            taint("k", "v", "NoExecute"),
            ["k=v:NoSchedule", "k=v:NoExecute"],
            True,
            id="another effect is another taint",
        ),
    ],
)
def test_add_or_update_taint(existing: list, new: dict, expected: list[str], updated: bool) -> None:
    result, changed = add_or_update_taint(existing, new)
    assert [
        f"{t['key']}{'=' + t['value'] if t.get('value') else ''}:{t['effect']}" for t in result
    ] == expected
    assert changed is updated


def test_remove_taint_drops_every_match_by_key_and_effect() -> None:
    taints = [taint("k", "1", "NoExecute"), taint("k", "2", "NoSchedule"), taint("k", "3", "NoExecute")]
    result, removed = remove_taint(taints, taint("k", "", "NoExecute"))
    assert keys(result) == ["k:NoSchedule"] and removed
    assert remove_taint(result, taint("x", "", "NoExecute")) == (result, False)


def test_mark_conditions_unknown() -> None:
    conditions = [
        condition("Ready", "True", HB, reason="KubeletReady", message="kubelet is posting ready status"),
        condition("MemoryPressure", "Unknown", HB, reason="NodeStatusUnknown", message="old"),
        condition("NetworkUnavailable", "False", HB),
    ]
    result = mark_conditions_unknown(conditions, "2025-12-31T00:00:00Z", NOW)
    assert result == [
        {
            "type": "Ready",
            "status": "Unknown",
            "lastHeartbeatTime": HB,
            "lastTransitionTime": NOW,
            "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status.",
        },
        condition("MemoryPressure", "Unknown", HB, reason="NodeStatusUnknown", message="old"),
        condition("NetworkUnavailable", "False", HB),
        {
            "type": "DiskPressure",
            "status": "Unknown",
            "lastHeartbeatTime": "2025-12-31T00:00:00Z",
            "lastTransitionTime": NOW,
            "reason": "NodeStatusNeverUpdated",
            "message": "Kubelet never posted node status.",
        },
        {
            "type": "PIDPressure",
            "status": "Unknown",
            "lastHeartbeatTime": "2025-12-31T00:00:00Z",
            "lastTransitionTime": NOW,
            "reason": "NodeStatusNeverUpdated",
            "message": "Kubelet never posted node status.",
        },
    ]
    assert conditions[0]["status"] == "True", "the input is not modified"


def test_update_pod_condition() -> None:
    status = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": HB}],
    }
    flipped, changed = update_pod_condition(status, {"type": "Ready", "status": "False"}, NOW)
    assert changed
    assert flipped["conditions"] == [{"type": "Ready", "status": "False", "lastTransitionTime": NOW}]
    same, changed_again = update_pod_condition(
        flipped, {"type": "Ready", "status": "False"}, "2030-01-01T00:00:00Z"
    )
    assert not changed_again and same["conditions"][0]["lastTransitionTime"] == NOW
    added, grew = update_pod_condition({}, {"type": "DisruptionTarget", "status": "True", "reason": "R"}, NOW)
    assert grew and added["conditions"] == [
        {"type": "DisruptionTarget", "status": "True", "reason": "R", "lastTransitionTime": NOW}
    ]
    assert status["conditions"][0]["status"] == "True", "the input is not modified"
