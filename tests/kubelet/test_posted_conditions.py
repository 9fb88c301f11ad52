"""The conditions a status post writes are shared between posts that write equal ones
(node_status._POSTED): every merge_conditions result is what building the conditions afresh
gives, whatever was posted before, and the shared ones are never told apart by content."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.clock.base import format_time
from kubetaint.kubelet import node_status
from kubetaint.kubelet.node_status import CONDITION_ORDER, CONDITION_TEXT, merge_conditions

JSON = dict[str, Any]
START = 1767225600.0  # 2026-01-01T00:00:00Z


def fresh_merge(existing: list[JSON], desired: dict[str, str], now: float) -> tuple[list[JSON], list[Any]]:
    """merge_conditions as setters.go states it, every condition built anew."""
    stamp = format_time(now)
    by_type = {c.get("type"): c for c in existing}
    changed = []
    result: list[JSON] = []
    for ctype in CONDITION_ORDER:
        status = desired.get(ctype)
        if status is None:
            continue
        old = by_type.get(ctype)
        if old is not None and old.get("status") == status:
            transition = old.get("lastTransitionTime") or stamp
        else:
            transition = stamp
            changed.append((ctype, status))
        reason, message = CONDITION_TEXT[(ctype, status)]
        result.append(
            {
                "type": ctype,
                "status": status,
                "lastHeartbeatTime": stamp,
                "lastTransitionTime": transition,
                "reason": reason,
                "message": message,
            }
        )
    result.extend(c for c in existing if c.get("type") not in desired)
    return result, changed


statuses = st.sampled_from(["True", "False"])
desired_conditions = st.dictionaries(st.sampled_from(CONDITION_ORDER), statuses)
transitions = st.one_of(
    st.none(), st.just(""), st.sampled_from([format_time(START + s) for s in (0, 10, 20)]), st.just(7)
)
existing_condition = st.fixed_dictionaries(
    {"type": st.sampled_from([*CONDITION_ORDER, "KernelDeadlock"]), "status": statuses},
    optional={"lastTransitionTime": transitions},
)
posts = st.lists(
    st.tuples(
        st.lists(existing_condition, max_size=6), desired_conditions, st.sampled_from([0.0, 10.0, 20.0])
    ),
    min_size=1,
    max_size=12,
)


@given(posts)
@settings(max_examples=200, deadline=None)
def test_every_post_writes_what_building_its_conditions_afresh_writes(
    calls: list[tuple[list[JSON], dict[str, str], float]],
) -> None:
    for existing, desired, offset in calls:
        merged, changed = merge_conditions(existing, desired, START + offset)
        expected, expected_changed = fresh_merge(existing, desired, START + offset)
        assert json.dumps(merged) == json.dumps(expected)  # key order included
        assert changed == expected_changed


@pytest.mark.usefixtures("default_mode")
def test_posts_of_one_round_share_equal_conditions_and_later_rounds_get_new_ones() -> None:
    desired = {"Ready": "True", "MemoryPressure": "False"}
    first, _ = merge_conditions([], desired, START)
    a, _ = merge_conditions(first, desired, START + 300)
    b, _ = merge_conditions(first, desired, START + 300)
    assert a == b and all(x is y for x, y in zip(a, b, strict=True))
    c, _ = merge_conditions(a, desired, START + 600)
    assert [x["lastHeartbeatTime"] for x in c] == [format_time(START + 600)] * 2
    assert [x["lastHeartbeatTime"] for x in a] == [format_time(START + 300)] * 2, "earlier posts untouched"


@pytest.mark.parametrize(
    "transition",
    [
        pytest.param(None, id="a missing transition time takes the post's"),
        pytest.param(["2026"], id="a transition time that is not text is kept, not shared"),
    ],
)
def test_odd_transition_times(transition: Any) -> None:
    existing = [{"type": "Ready", "status": "True", "lastTransitionTime": transition}]
    merged, _ = merge_conditions(existing, {"Ready": "True"}, START + 60)
    assert merged == fresh_merge(existing, {"Ready": "True"}, START + 60)[0]


def test_the_shared_conditions_are_bounded() -> None:
    desired = {"Ready": "True"}
    for step in range(node_status._POSTED.limit + 10):
        merge_conditions([], desired, START + step)
    assert len(node_status._POSTED) <= node_status._POSTED.limit
