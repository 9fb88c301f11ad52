"""merge_conditions remembers its last merge (node_status._LAST_MERGE): the kubelets of a status
round merge the same shared conditions at one instant, so each after the first is given copies
of the first one's lists. Every answer must be what merging afresh gives: the memo applies only
to the very same condition objects, an equal desired mapping and the same instant, and what it
hands out is the caller's own (changing it changes no later answer)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelet.test_posted_conditions import fresh_merge
from kubetaint.clock.base import format_time
from kubetaint.kubelet import node_status
from kubetaint.kubelet.node_status import CONDITION_ORDER, merge_conditions

JSON = dict[str, Any]
START = 1767225600.0
HEALTHY = {"NetworkUnavailable": "False", "MemoryPressure": "False", "Ready": "True"}


def dumps(value: Any) -> str:
    return json.dumps(value)  # key order included


@pytest.fixture(autouse=True)
def forget_the_last_merge() -> None:
    node_status._LAST_MERGE.clear()


def posted_round() -> list[JSON]:
    """The conditions a healthy node posted at START (shared by every node of the round)."""
    conditions, _ = merge_conditions([], HEALTHY, START)
    return conditions


@pytest.mark.usefixtures("default_mode")
def test_a_second_node_of_the_round_gets_the_first_ones_result_as_its_own_lists() -> None:
    existing = posted_round()
    first = merge_conditions(list(existing), HEALTHY, START + 300)
    second = merge_conditions(list(existing), dict(HEALTHY), START + 300)
    assert dumps(first) == dumps(second) == dumps(fresh_merge(existing, HEALTHY, START + 300))
    assert first[0] is not second[0] and first[1] is not second[1], "each caller's own lists"
    assert all(a is b for a, b in zip(first[0], second[0], strict=True)), "the same shared conditions"


MISSES = [
    pytest.param(lambda existing: (existing, HEALTHY, START + 310), id="another instant"),
    pytest.param(
        lambda existing: (existing, {**HEALTHY, "Ready": "False"}, START + 300), id="other desired statuses"
    ),
    pytest.param(
        lambda existing: ([dict(c) for c in existing], HEALTHY, START + 300),
        id="equal conditions, not the same objects",
    ),
    pytest.param(lambda existing: (existing[:-1], HEALTHY, START + 300), id="one condition fewer"),
    pytest.param(
        lambda existing: ([*existing, {"type": "KernelDeadlock", "status": "False"}], HEALTHY, START + 300),
        id="a condition the kubelet does not own besides",
    ),
    pytest.param(
        lambda existing: (list(reversed(existing)), HEALTHY, START + 300), id="the same conditions reordered"
    ),
    pytest.param(
        lambda existing: (
            existing,
            {k: v for k, v in HEALTHY.items() if k != "NetworkUnavailable"},
            START + 300,
        ),
        id="one desired condition fewer",
    ),
]


@pytest.mark.parametrize("other", MISSES)
def test_a_merge_of_other_inputs_after_a_remembered_one_is_merged_afresh(other: Any) -> None:
    existing = posted_round()
    merge_conditions(existing, HEALTHY, START + 300)  # remembered
    conditions, desired, now = other(existing)
    assert dumps(merge_conditions(conditions, desired, now)) == dumps(fresh_merge(conditions, desired, now))


def test_changing_a_returned_list_changes_no_later_answer() -> None:
    existing = posted_round()
    merged, changed = merge_conditions(existing, {**HEALTHY, "Ready": "False"}, START + 300)
    expected = dumps((merged, changed))
    merged.clear()
    changed.append(("Ready", "Unknown"))
    assert dumps(merge_conditions(existing, {**HEALTHY, "Ready": "False"}, START + 300)) == expected


def test_a_desired_mapping_changed_after_the_merge_is_not_taken_for_the_remembered_one() -> None:
    existing = posted_round()
    desired = dict(HEALTHY)
    merge_conditions(existing, desired, START + 300)
    desired["Ready"] = "False"  # the caller's mapping, changed in place
    assert dumps(merge_conditions(existing, desired, START + 300)) == dumps(
        fresh_merge(existing, desired, START + 300)
    )


@pytest.mark.usefixtures("default_mode")
def test_a_remembered_merge_keeps_its_conditions_alive() -> None:
    """The memo holds the conditions it was asked about: no later object can take their identity."""
    existing = [{"type": "Ready", "status": "True", "lastTransitionTime": format_time(START)}]
    merge_conditions(existing, {"Ready": "True"}, START + 300)
    held = node_status._LAST_MERGE.get(START + 300)
    assert held is not None and held[2][0] is existing[0]


statuses = st.sampled_from(["True", "False"])
rounds = st.lists(
    st.tuples(
        st.dictionaries(st.sampled_from(CONDITION_ORDER), statuses, min_size=1),
        st.sampled_from([0.0, 300.0, 600.0]),
        st.integers(0, 3),  # whose last conditions the post starts from
    ),
    min_size=1,
    max_size=16,
)


@given(rounds)
@settings(max_examples=200, deadline=None)
def test_posts_over_each_others_conditions_are_what_fresh_merges_give(
    posts: list[tuple[dict[str, str], float, int]],
) -> None:
    node_status._LAST_MERGE.clear()
    last: list[list[JSON]] = [[] for _ in range(4)]  # four nodes' conditions as last posted
    for desired, offset, whose in posts:
        existing = last[whose]
        merged, changed = merge_conditions(existing, desired, START + offset)
        assert dumps((merged, changed)) == dumps(fresh_merge(existing, desired, START + offset))
        last[whose] = merged
        last[(whose + 1) % 4] = list(merged)  # a neighbour posted the same conditions
