"""Toleration/taint matching, as data from upstream's toleration_test.go, taint_test.go and
component-helpers helpers_test.go, plus hypothesis laws."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetaint.core.matching import (
    ComparisonError,
    add_or_update_toleration,
    compare_numeric_values,
    do_not_schedule_taints_filter,
    find_matching_untolerated_taint,
    find_untolerated_taint,
    get_matching_tolerations,
    match_taint,
    match_toleration,
    taint_to_string,
    tolerates,
    tolerates_taint_checked,
    tolerations_tolerate_taint,
)

NS, PNS, NE = "NoSchedule", "PreferNoSchedule", "NoExecute"
SLA = "node.kubernetes.io/sla"
GATE_ON = {"TaintTolerationComparisonOperators": True}

# TestTolerationToleratesTaint: (toleration, taint, tolerated, error expected) with the gate on.
TOLERATES = [
    pytest.param(
        {"key": "foo", "operator": "Exists", "effect": NS},
        {"key": "foo", "effect": NS},
        True,
        False,
        id="same key and effect, Exists, taint without value is tolerated",
    ),
    pytest.param(
        {"key": "foo", "operator": "Exists", "effect": NS},
        {"key": "foo", "value": "bar", "effect": NS},
        True,
        False,
        id="same key and effect, Exists, taint with a value is tolerated",
    ),
    pytest.param(
        {"key": "", "operator": "Exists", "effect": NS},
        {"key": "foo", "value": "bar", "effect": NS},
        True,
        False,
        id="an empty key with Exists matches every key of that effect",
    ),
    pytest.param(
        {"key": "foo", "operator": "Equal", "value": "bar", "effect": NS},
        {"key": "foo", "value": "bar", "effect": NS},
        True,
        False,
        id="same key, effect and value with Equal is tolerated",
    ),
    pytest.param(
        {"key": "foo", "operator": "Equal", "value": "value1", "effect": NS},
        {"key": "foo", "value": "value2", "effect": NS},
        False,
        False,
        id="different values with Equal are not tolerated",
    ),
    pytest.param(
        {"key": "foo", "operator": "Equal", "value": "bar", "effect": NS},
        {"key": "foo", "value": "bar", "effect": NE},
        False,
        False,
        id="different effects are not tolerated",
    ),
    pytest.param(
        {"key": SLA, "operator": "Gt", "value": "950", "effect": NS},
        {"key": SLA, "value": "800", "effect": NS},
        False,
        False,
        id="Gt with a taint value below the toleration value is not tolerated",
    ),
    pytest.param(
        {"key": SLA, "operator": "Gt", "value": "750", "effect": NS},
        {"key": SLA, "value": "950", "effect": NS},
        True,
        False,
        id="Gt with a taint value above the toleration value is tolerated",
    ),
    pytest.param(
        {"key": SLA, "operator": "Lt", "value": "800", "effect": NS},
        {"key": SLA, "value": "950", "effect": NS},
        False,
        False,
        id="Lt with a taint value above the toleration value is not tolerated",
    ),
    pytest.param(
        {"key": SLA, "operator": "Lt", "value": "950", "effect": NS},
        {"key": SLA, "value": "800", "effect": NS},
        True,
        False,
        id="Lt with a taint value below the toleration value is tolerated",
    ),
    pytest.param(
        {"key": SLA, "operator": "Gt", "value": "950", "effect": NS},
        {"key": SLA, "value": "950", "effect": NS},
        False,
        False,
        id="Gt with an equal value is not tolerated",
    ),
    pytest.param(
        {"key": SLA, "operator": "Gt", "value": "950", "effect": NS},
        {"key": SLA, "value": "high", "effect": NS},
        False,
        True,
        id="Gt with a non-numeric taint value is not tolerated and errors",
    ),
    pytest.param(
        {"key": "k", "operator": "Gt", "value": "-100", "effect": NS},
        {"key": "k", "value": "-200", "effect": NS},
        False,
        False,
        id="Gt with negative values below the threshold is not tolerated",
    ),
    pytest.param(
        {"key": "k", "operator": "Gt", "value": "9223372036854775806", "effect": NS},
        {"key": "k", "value": "100", "effect": NS},
        False,
        False,
        id="Gt with a large int64 threshold is not tolerated",
    ),
    pytest.param(
        {"key": "k", "operator": "Exists"},
        {"key": "k", "effect": PNS},
        True,
        False,
        id="an empty toleration effect matches every effect",
    ),
    pytest.param(
        {"key": "k", "value": "v"},
        {"key": "k", "value": "v", "effect": NS},
        True,
        False,
        id="an empty operator means Equal",
    ),
    pytest.param(
        {"key": "", "operator": "Equal", "value": "bar"},
        {"key": "any", "value": "bar", "effect": NE},
        True,
        False,
        id="the matcher lets an empty key match any key whatever the operator",
    ),
    pytest.param(
        {},
        {"key": "x", "effect": NS},
        True,
        False,
        id="the zero toleration tolerates a taint with an empty value",
    ),
    pytest.param(
        {"key": "k", "operator": "exists"},
        {"key": "k", "effect": NS},
        False,
        False,
        id="a lowercase operator never matches",
    ),
    pytest.param(
        {"key": "k", "operator": "Exists", "value": "ignored"},
        {"key": "k", "value": "x", "effect": NS},
        True,
        False,
        id="Exists ignores its value",
    ),
]


@pytest.mark.parametrize(("toleration", "taint", "tolerated", "has_error"), TOLERATES)
def test_toleration_tolerates_taint(
    toleration: dict[str, Any], taint: dict[str, Any], tolerated: bool, has_error: bool
) -> None:
    result, error = tolerates_taint_checked(toleration, taint, True)
    assert result is tolerated
    assert (error is not None) is has_error
    assert tolerates(toleration, taint, feature_gates=GATE_ON) is tolerated


def test_comparison_operators_do_not_match_with_the_gate_off() -> None:
    toleration = {"key": SLA, "operator": "Gt", "value": "750"}
    taint = {"key": SLA, "value": "950", "effect": NS}
    assert tolerates_taint_checked(toleration, taint, False) == (False, None)
    assert tolerates(toleration, taint) is False


# compareNumericValues
COMPARE = [
    pytest.param("10", "5", "Lt", True, id="Lt holds when the taint is smaller"),
    pytest.param("5", "10", "Lt", False, id="Lt fails when the taint is larger"),
    pytest.param("5", "5", "Lt", False, id="Lt is strict"),
    pytest.param("5", "10", "Gt", True, id="Gt holds when the taint is larger"),
    pytest.param("-1", "0", "Gt", True, id="zero is greater than minus one"),
    pytest.param("9223372036854775807", "-9223372036854775808", "Lt", True, id="the int64 extremes parse"),
]


@pytest.mark.parametrize(("toleration", "taint", "operator", "expected"), COMPARE)
def test_compare_numeric_values(toleration: str, taint: str, operator: str, expected: bool) -> None:
    assert compare_numeric_values(toleration, taint, operator) is expected


COMPARE_ERRORS = [
    pytest.param(
        "0100",
        "1",
        'failed to parse toleration value "0100" as int64: must be a valid decimal integer in canonical form',
        id="a leading zero",
    ),
    pytest.param(
        "+1",
        "1",
        'failed to parse toleration value "+1" as int64: must be a valid decimal integer in canonical form',
        id="a plus sign",
    ),
    pytest.param(
        "-0",
        "1",
        'failed to parse toleration value "-0" as int64: must be a valid decimal integer in canonical form',
        id="minus zero",
    ),
    pytest.param(
        "",
        "1",
        'failed to parse toleration value "" as int64: must be non-empty',
        id="an empty toleration value",
    ),
    pytest.param(
        "1",
        " 1",
        'failed to parse taint value " 1" as int64: must be a valid decimal integer in canonical form',
        id="a space in the taint value",
    ),
    pytest.param(
        "1",
        "1.5",
        'failed to parse taint value "1.5" as int64: must be a valid decimal integer in canonical form',
        id="a fraction",
    ),
    pytest.param(
        "bad",
        "bad",
        'failed to parse toleration value "bad" as int64: must be a valid decimal integer in canonical form',
        id="the toleration is checked first",
    ),
    pytest.param(
        "9223372036854775808",
        "1",
        'failed to parse toleration value "9223372036854775808" as int64: strconv.ParseInt: parsing "9223372036854775808": value out of range',
        id="int64 overflow",
    ),
]


@pytest.mark.parametrize(("toleration", "taint", "message"), COMPARE_ERRORS)
def test_compare_numeric_errors(toleration: str, taint: str, message: str) -> None:
    with pytest.raises(ComparisonError) as info:
        compare_numeric_values(toleration, taint, "Lt")
    assert str(info.value) == message


# TestTaintToString
@pytest.mark.parametrize(
    ("taint", "text"),
    [
        pytest.param(
            {"key": "foo", "value": "bar", "effect": NS}, "foo=bar:NoSchedule", id="key, value and effect"
        ),
        pytest.param({"key": "foo", "effect": NS}, "foo:NoSchedule", id="key and effect"),
        pytest.param({"key": "foo"}, "foo", id="key only"),
        pytest.param({"key": "foo", "value": "bar"}, "foo=bar:", id="key and value without effect"),
    ],
)
def test_taint_to_string(taint: dict[str, Any], text: str) -> None:
    assert taint_to_string(taint) == text


# TestMatchTaint
@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param(
            {"key": "foo", "value": "bar", "effect": NS},
            {"key": "foo", "value": "bar", "effect": NS},
            True,
            id="identical taints",
        ),
        pytest.param(
            {"key": "foo", "value": "bar", "effect": NS},
            {"key": "foo", "value": "baz", "effect": NS},
            True,
            id="value is ignored",
        ),
        pytest.param(
            {"key": "foo", "effect": NS}, {"key": "foo", "effect": NE}, False, id="different effects"
        ),
        pytest.param({"key": "foo", "effect": NS}, {"key": "bar", "effect": NS}, False, id="different keys"),
    ],
)
def test_match_taint(a: dict[str, Any], b: dict[str, Any], expected: bool) -> None:
    assert match_taint(a, b) is expected


def test_match_toleration_ignores_seconds_but_not_empty_operator() -> None:
    base = {"key": "k", "operator": "Equal", "value": "v", "effect": NE, "tolerationSeconds": 1}
    assert match_toleration(base, {**base, "tolerationSeconds": 99})
    assert not match_toleration(base, {**base, "operator": ""})


# TestFindMatchingUntoleratedTaint
FIND = [
    pytest.param([], [], None, id="no taints and no tolerations"),
    pytest.param([], [{"key": "foo", "operator": "Exists"}], None, id="tolerations but no taints"),
    pytest.param(
        [{"key": "foo", "value": "bar", "effect": NS}],
        [],
        {"key": "foo", "value": "bar", "effect": NS},
        id="an untolerated taint is found",
    ),
    pytest.param(
        [{"key": "foo", "effect": NS}, {"key": "bar", "effect": NS}],
        [{"key": "foo", "operator": "Exists", "effect": NS}],
        {"key": "bar", "effect": NS},
        id="the first untolerated taint in node order",
    ),
    pytest.param(
        [{"key": "foo", "effect": NS}, {"key": "bar", "effect": NE}],
        [{"key": "foo", "operator": "Exists"}, {"key": "bar", "operator": "Exists"}],
        None,
        id="every taint tolerated",
    ),
    pytest.param(
        [{"key": "foo", "effect": PNS}], [], None, id="the DoNotSchedule filter skips PreferNoSchedule"
    ),
]


@pytest.mark.parametrize(("taints", "tolerations", "expected"), FIND)
def test_find_matching_untolerated_taint(
    taints: list[dict[str, Any]], tolerations: list[dict[str, Any]], expected: dict[str, Any] | None
) -> None:
    found, error = find_matching_untolerated_taint(taints, tolerations, do_not_schedule_taints_filter, False)
    assert error is None
    assert found == expected


def test_find_returns_the_taint_with_the_comparison_error() -> None:
    taints = [{"key": SLA, "value": "high", "effect": NS}]
    found, error = find_matching_untolerated_taint(
        taints, [{"key": SLA, "operator": "Gt", "value": "5"}], None, True
    )
    assert found == taints[0]
    assert (
        error
        == 'failed to parse taint value "high" as int64: must be a valid decimal integer in canonical form'
    )


def test_a_later_match_swallows_an_earlier_error() -> None:
    taint = {"key": SLA, "value": "high", "effect": NS}
    tolerations = [{"key": SLA, "operator": "Gt", "value": "5"}, {"key": SLA, "operator": "Exists"}]
    assert tolerations_tolerate_taint(tolerations, taint, True) == (True, None)


def test_find_untolerated_taint_public_api_filters_effects() -> None:
    taints = [{"key": "a", "effect": PNS}, {"key": "b", "effect": NE}]
    assert find_untolerated_taint(taints, []) == {"key": "a", "effect": PNS}
    assert find_untolerated_taint(taints, [], effects=[NS, NE]) == {"key": "b", "effect": NE}


# GetMatchingTolerations
GET_MATCHING = [
    pytest.param([], [], (True, []), id="no taints is tolerated with no tolerations used"),
    pytest.param([{"key": "a", "effect": NE}], [], (False, []), id="taints without tolerations"),
    pytest.param(
        [{"key": "a", "effect": NE}],
        [
            {"key": "a", "operator": "Exists", "tolerationSeconds": 1},
            {"key": "a", "operator": "Exists", "tolerationSeconds": 2},
        ],
        (True, [{"key": "a", "operator": "Exists", "tolerationSeconds": 1}]),
        id="only the first matching toleration per taint counts",
    ),
    pytest.param(
        [{"key": "a", "effect": NE}, {"key": "b", "effect": NE}],
        [{"key": "a", "operator": "Exists"}],
        (False, []),
        id="one untolerated taint fails the whole set",
    ),
    pytest.param(
        [{"key": "a", "effect": NE}, {"key": "b", "effect": NE}],
        [{"operator": "Exists"}],
        (True, [{"operator": "Exists"}, {"operator": "Exists"}]),
        id="one toleration may cover several taints",
    ),
]


@pytest.mark.parametrize(("taints", "tolerations", "expected"), GET_MATCHING)
def test_get_matching_tolerations(
    taints: list[dict[str, Any]],
    tolerations: list[dict[str, Any]],
    expected: tuple[bool, list[dict[str, Any]]],
) -> None:
    assert get_matching_tolerations(taints, tolerations) == expected


def test_add_or_update_toleration_replaces_matches_and_appends_otherwise() -> None:
    existing = [
        {"key": "a", "operator": "Exists", "effect": NE, "tolerationSeconds": 5},
        {"key": "b", "operator": "Exists"},
    ]
    new = {"key": "a", "operator": "Exists", "effect": NE, "tolerationSeconds": 300}
    assert add_or_update_toleration(existing, new) == [new, existing[1]]
    other = {"key": "c", "operator": "Exists"}
    assert add_or_update_toleration(existing, other) == [*existing, other]
    assert existing[0]["tolerationSeconds"] == 5


# Laws
keys = st.sampled_from(["", "a", "b", "example.com/c"])
values = st.sampled_from(["", "x", "y", "10", "20"])
effects = st.sampled_from(["", NS, PNS, NE])
operators = st.sampled_from(["", "Equal", "Exists", "Lt", "Gt", "bogus"])
taints_st = st.builds(lambda k, v, e: {"key": k, "value": v, "effect": e}, keys, values, effects)
tolerations_st = st.builds(
    lambda k, o, v, e: {"key": k, "operator": o, "value": v, "effect": e}, keys, operators, values, effects
)


@given(taints_st, effects)
def test_empty_key_exists_tolerates_everything(taint: dict[str, Any], effect: str) -> None:
    toleration = {"operator": "Exists", "effect": effect}
    assert tolerates(toleration, taint) is (effect in ("", taint["effect"]))
    assert tolerates({"operator": "Exists"}, taint)


@given(tolerations_st, taints_st, st.booleans())
def test_empty_effect_tolerates_iff_the_effect_specific_copy_does(
    toleration: dict[str, Any], taint: dict[str, Any], gate: bool
) -> None:
    wildcard = {**toleration, "effect": ""}
    specific = {**toleration, "effect": taint["effect"]}
    assert (
        tolerates_taint_checked(wildcard, taint, gate)[0] is tolerates_taint_checked(specific, taint, gate)[0]
    )


@given(st.lists(taints_st, max_size=5), st.lists(tolerations_st, max_size=4))
def test_find_agrees_with_get_matching(
    taints: list[dict[str, Any]], tolerations: list[dict[str, Any]]
) -> None:
    found, _ = find_matching_untolerated_taint(taints, tolerations, None, False)
    all_tolerated, _ = get_matching_tolerations(taints, tolerations)
    assert (found is None) is all_tolerated
