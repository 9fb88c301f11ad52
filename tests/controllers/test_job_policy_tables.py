"""Upstream's pod failure policy and success policy tables ported as data
(pkg/controller/job/pod_failure_policy_test.go TestMatchPodFailurePolicy with JobBackoffLimitPerIndex
on, as at v1.35; success_policy_test.go TestMatchSuccessPolicy with JobSuccessPolicy on)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.controllers.job import intervals
from kubetaint.controllers.job.pod_failure_policy import PolicyMatch, match_pod_failure_policy
from kubetaint.controllers.job.success_policy import match_success_policy

JSON = dict[str, Any]


def _exit_codes(action: str, operator: str, *values: int) -> JSON:
    return {"action": action, "onExitCodes": {"operator": operator, "values": list(values)}}


def _on_condition(action: str, ctype: str = "DisruptionTarget", status: str = "True") -> JSON:
    return {"action": action, "onPodConditions": [{"type": ctype, "status": status}]}


def _terminated(name: str | None, exit_code: int | None) -> JSON:
    """A container status; exit_code None: not terminated."""
    status: JSON = {"state": {"terminated": {"exitCode": exit_code}} if exit_code is not None else {}}
    if name is not None:
        status["name"] = name
    return status


def _failed_pod(
    containers: list[JSON] | None = None,
    init: list[JSON] | None = None,
    conditions: list[tuple[str, str]] = (),
) -> JSON:
    status: JSON = {"phase": "Failed"}
    if containers is not None:
        status["containerStatuses"] = containers
    if init is not None:
        status["initContainerStatuses"] = init
    if conditions:
        status["conditions"] = [{"type": t, "status": s} for t, s in conditions]
    return {"metadata": {"namespace": "default", "name": "mypod"}, "status": status}


def _message(exit_code: int, index: int) -> str:
    return (
        f"Container main-container for pod default/mypod failed with exit code {exit_code} matching FailJob "
        f"rule at index {index}"
    )


DISRUPTED = [("DisruptionTarget", "True")]

POD_FAILURE_POLICY_CASES = [
    pytest.param(
        [_exit_codes("UnknownAction", "In", 1, 2), _exit_codes("FailJob", "In", 2, 3)],
        _failed_pod([_terminated("main-container", 2)]),
        PolicyMatch(_message(2, 1), True, "FailJob"),
        id="unknown action for rule matching by exit codes - skip rule with unknown action",
    ),
    pytest.param(
        [_on_condition("UnkonwnAction"), _on_condition("Ignore")],
        _failed_pod(conditions=DISRUPTED),
        PolicyMatch(None, False, "Ignore"),
        id="unknown action for rule matching by pod conditions - skip rule with unknown action",
    ),
    pytest.param(
        [_exit_codes("Ignore", "UnknownOperator", 1, 2), _exit_codes("FailJob", "In", 2, 3)],
        _failed_pod([_terminated("main-container", 2)]),
        PolicyMatch(_message(2, 1), True, "FailJob"),
        id="unknown operator - rule with unknown action is skipped for onExitCodes",
    ),
    pytest.param(
        None, _failed_pod([_terminated(None, 2)]), PolicyMatch(None, True, None), id="no policy rules"
    ),
    pytest.param(
        [_exit_codes("Ignore", "In", 1, 2, 3)],
        _failed_pod([_terminated(None, 2)]),
        PolicyMatch(None, False, "Ignore"),
        id="ignore rule matched for exit codes",
    ),
    pytest.param(
        [_exit_codes("FailJob", "In", 1, 2, 3)],
        _failed_pod([_terminated("main-container", 2)]),
        PolicyMatch(_message(2, 0), True, "FailJob"),
        id="FailJob rule matched for exit codes",
    ),
    pytest.param(
        [_exit_codes("FailJob", "NotIn", 111)],
        _failed_pod(
            [_terminated("main-container", 111), _terminated("suppport-container", 0)],
            init=[_terminated("init-container", 0)],
        ),
        PolicyMatch(None, True, None),
        id="successful containers are skipped by the rules",
    ),
    pytest.param(
        [_exit_codes("FailIndex", "In", 1, 2, 3)],
        _failed_pod([_terminated(None, 2)]),
        PolicyMatch(None, True, "FailIndex"),
        id="FailIndex rule matched for exit codes; JobBackoffLimitPerIndex enabled",
    ),
    pytest.param(
        [_exit_codes("FailJob", "NotIn", 0)],
        _failed_pod([_terminated("main-container", 1), _terminated("suppport-container", 0)]),
        PolicyMatch(_message(1, 0), True, "FailJob"),
        id="pod failure policy with NotIn operator and value 0",
    ),
    pytest.param(
        [_exit_codes("Count", "In", 1, 2, 3), _exit_codes("FailJob", "In", 4, 5, 6)],
        _failed_pod([_terminated("main-container", 6)]),
        PolicyMatch(_message(6, 1), True, "FailJob"),
        id="second jobfail rule matched for exit codes",
    ),
    pytest.param(
        [_exit_codes("Count", "In", 1, 2, 3)],
        _failed_pod([{"name": "foo"}, _terminated("bar", 2)]),
        PolicyMatch(None, True, "Count"),
        id="count rule matched for exit codes",
    ),
    pytest.param(
        [_on_condition("FailIndex")],
        _failed_pod(conditions=DISRUPTED),
        PolicyMatch(None, True, "FailIndex"),
        id="FailIndex rule matched for pod conditions; JobBackoffLimitPerIndex enabled",
    ),
    pytest.param(
        [_on_condition("Ignore")],
        _failed_pod(conditions=DISRUPTED),
        PolicyMatch(None, False, "Ignore"),
        id="ignore rule matched for pod conditions",
    ),
    pytest.param(
        [_on_condition("Ignore", status="False")],
        _failed_pod(conditions=[("DisruptionTarget", "False")]),
        PolicyMatch(None, False, "Ignore"),
        id="ignore rule matches by the status=False",
    ),
    pytest.param(
        [_on_condition("Ignore", status="Unknown")],
        _failed_pod(conditions=[("DisruptionTarget", "Unknown")]),
        PolicyMatch(None, False, "Ignore"),
        id="ignore rule matches by the status=Unknown",
    ),
    pytest.param(
        [_on_condition("Ignore", status="False")],
        _failed_pod(conditions=DISRUPTED),
        PolicyMatch(None, True, None),
        id="ignore rule does not match when status for pattern is False, but actual True",
    ),
    pytest.param(
        [_on_condition("Ignore")],
        _failed_pod(conditions=[("DisruptionTarget", "False")]),
        PolicyMatch(None, True, None),
        id="ignore rule does not match when status for pattern is True, but actual False",
    ),
    pytest.param(
        [_on_condition("Ignore")],
        _failed_pod(conditions=[("DisruptionTarget", "False")]),
        PolicyMatch(None, True, None),
        id="default - do not match condition with status=False",
    ),
    pytest.param(
        [_on_condition("FailJob")],
        _failed_pod(conditions=DISRUPTED),
        PolicyMatch(
            "Pod default/mypod has condition DisruptionTarget matching FailJob rule at index 0",
            True,
            "FailJob",
        ),
        id="job fail rule matched for pod conditions",
    ),
    pytest.param(
        [_on_condition("Count")],
        _failed_pod(conditions=DISRUPTED),
        PolicyMatch(None, True, "Count"),
        id="count rule matched for pod conditions",
    ),
    pytest.param(
        [
            _exit_codes("Count", "NotIn", 8),
            _exit_codes("Ignore", "In", 1, 2, 3),
            _exit_codes("FailJob", "NotIn", 5, 6, 7),
            _on_condition("Count", "ResourceLimitExceeded"),
            _on_condition("Ignore"),
        ],
        _failed_pod([_terminated(None, 32)]),
        PolicyMatch(None, True, "Count"),
        id="no rule matched",
    ),
]


@pytest.mark.parametrize(("rules", "pod", "want"), POD_FAILURE_POLICY_CASES)
def test_match_pod_failure_policy(rules: list[JSON] | None, pod: JSON, want: PolicyMatch) -> None:
    policy = None if rules is None else {"rules": rules}
    assert match_pod_failure_policy(policy, pod) == want


def _indexes(rule_indexes: str | None = None, count: int | None = None) -> JSON:
    rule: JSON = {}
    if rule_indexes is not None:
        rule["succeededIndexes"] = rule_indexes
    if count is not None:
        rule["succeededCount"] = count
    return rule


MATCHED_0 = ("Matched rules at index 0", True)
NOT_MET = ("", False)

SUCCESS_POLICY_CASES = [
    pytest.param(None, [(0, 0)], NOT_MET, id="successPolicy is null"),
    pytest.param([], [(0, 0)], NOT_MET, id="any rules are nothing"),
    pytest.param(
        [_indexes("invalid-form")], [(0, 0)], NOT_MET, id="rules.succeededIndexes is invalid format"
    ),
    pytest.param(
        [_indexes("0-2")],
        [(0, 2), (4, 7)],
        MATCHED_0,
        id="rules.succeededIndexes is specified; succeededIndexes matched rules",
    ),
    pytest.param(
        [_indexes("3")],
        [(0, 2)],
        NOT_MET,
        id="rules.succeededIndexes is specified; succeededIndexes didn't match rules",
    ),
    pytest.param(
        [_indexes(count=2)],
        [(0, 2)],
        MATCHED_0,
        id="rules.succeededCount is specified; succeededIndexes matched rules",
    ),
    pytest.param(
        [_indexes(count=4)],
        [(0, 2)],
        NOT_MET,
        id="rules.succeededCount is specified; succeededIndexes didn't match rules",
    ),
    pytest.param(
        [_indexes("9"), _indexes("4,6")],
        [(0, 2), (4, 7)],
        ("Matched rules at index 1", True),
        id="multiple rules; rules.succeededIndexes is specified; succeededIndexes met one of rules",
    ),
    pytest.param(
        [_indexes("0,1"), _indexes("5")],
        [(0, 2), (4, 7)],
        MATCHED_0,
        id="multiple rules; rules.succeededIndexes is specified; succeededIndexes met all rules",
    ),
    pytest.param(
        [_indexes("3-6", 2)],
        [(0, 2), (4, 7)],
        MATCHED_0,
        id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes met all rules",
    ),
    pytest.param(
        [_indexes("3-6", 2)],
        [(0, 2), (6, 7)],
        NOT_MET,
        id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes didn't match rules",
    ),
    pytest.param(
        [_indexes(count=4)],
        [],
        NOT_MET,
        id="rules.succeededIndexes is specified; succeededIndexes are nothing",
    ),
    pytest.param(
        [_indexes("2-4,6-8")],
        [(1, 5), (6, 9)],
        MATCHED_0,
        id="rules.succeededIndexes is specified; succeededIndexes matched rules; rules is proper subset of succeededIndexes",
    ),
    pytest.param(
        [_indexes("2-4,6-9")],
        [(2, 4), (6, 9)],
        MATCHED_0,
        id="rules.succeededIndexes is specified; succeededIndexes matched rules; rules equals succeededIndexes",
    ),
    pytest.param(
        [_indexes("2-4,8-12")],
        [(2, 5), (7, 15)],
        MATCHED_0,
        id="rules.succeededIndexes is specified; succeededIndexes matched rules; rules is subset of succeededIndexes",
    ),
    pytest.param(
        [_indexes("")],
        [(1, 3)],
        NOT_MET,
        id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules is an empty set",
    ),
    pytest.param(
        [_indexes("")],
        [],
        NOT_MET,
        id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; succeededIndexes is an empty set",
    ),
    pytest.param(
        [_indexes("10-12,14-16")],
        [(1, 3), (5, 7)],
        NOT_MET,
        id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; all elements of "
        "rules.succeededIndexes aren't included in succeededIndexes",
    ),
    pytest.param(
        [_indexes("1-3,5-7")],
        [(2, 4), (6, 8)],
        NOT_MET,
        id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps "
        "succeededIndexes at first",
    ),
    pytest.param(
        [_indexes("1-3,5-7", 4)],
        [(2, 4), (6, 8)],
        MATCHED_0,
        id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules "
        "overlaps succeededIndexes at first",
    ),
    pytest.param(
        [_indexes("2-4,6-9")],
        [(1, 3), (5, 7)],
        NOT_MET,
        id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps "
        "succeededIndexes at last",
    ),
    pytest.param(
        [_indexes("2-4,6-9", 4)],
        [(1, 3), (5, 7)],
        MATCHED_0,
        id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules "
        "overlaps succeededIndexes at last",
    ),
    pytest.param(
        [_indexes("0-4,6-9")],
        [(1, 3), (7, 8)],
        NOT_MET,
        id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules completely overlaps "
        "succeededIndexes",
    ),
    pytest.param(
        [_indexes("0-4,6-9", 5)],
        [(1, 3), (7, 8)],
        MATCHED_0,
        id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules "
        "completely overlaps succeededIndexes",
    ),
    pytest.param(
        [_indexes("0-6,8-9")],
        [(1, 3), (5, 9)],
        NOT_MET,
        id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps multiple "
        "succeededIndexes at last",
    ),
    pytest.param(
        [_indexes("0-6,8-9", 7)],
        [(1, 3), (5, 9)],
        MATCHED_0,
        id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules "
        "overlaps multiple succeededIndexes at last",
    ),
    pytest.param(
        [_indexes("0-5,7-9")],
        [(1, 5), (7, 10)],
        NOT_MET,
        id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps "
        "succeededIndexes at first, and rules equals succeededIndexes at last",
    ),
    pytest.param(
        [_indexes("0-5,7-9", 8)],
        [(1, 5), (7, 10)],
        MATCHED_0,
        id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules "
        "overlaps succeededIndexes at first, and rules equals succeededIndexes at last",
    ),
    pytest.param(
        [_indexes("0-3,6-9")],
        [(1, 10)],
        NOT_MET,
        id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; the first rules overlaps "
        "succeededIndexes at first",
    ),
    pytest.param(
        [_indexes("0-3,6-9", 7)],
        [(1, 10)],
        MATCHED_0,
        id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; the "
        "first rules overlaps succeededIndexes at first",
    ),
]


@pytest.mark.parametrize(("rules", "succeeded", "want"), SUCCESS_POLICY_CASES)
def test_match_success_policy(
    rules: list[JSON] | None, succeeded: list[tuple[int, int]], want: tuple[str, bool]
) -> None:
    policy = None if rules is None else {"rules": rules}
    assert match_success_policy(policy, 10, succeeded) == want


@pytest.mark.parametrize(
    ("text", "completions", "want"),
    [
        pytest.param("", 10, [], id="empty"),
        pytest.param("1,3-5,7", 10, [(1, 1), (3, 5), (7, 7)], id="single and range"),
        pytest.param("0,1,2-4", 10, [(0, 4)], id="adjacent intervals merge"),
        pytest.param("1-3,x,5", 10, [(1, 3), (5, 5)], id="a corrupted interval is skipped"),
        pytest.param("1,12,3", 10, [(1, 1)], id="parsing stops at the first index past completions"),
        pytest.param("7-20", 10, [(7, 9)], id="a last index past completions is cut"),
    ],
)
def test_parse_indexes_from_string(text: str, completions: int, want: list[tuple[int, int]]) -> None:
    assert intervals.parse(text, completions) == want


@pytest.mark.parametrize(
    ("given", "new", "want"),
    [
        pytest.param([], [0, 2, 3], "0,2,3", id="into nothing"),
        pytest.param([(0, 1)], [2], "0-2", id="joined at the end"),
        pytest.param([(3, 5), (9, 9)], [1, 7, 8], "1,3-5,7-9", id="between"),
    ],
)
def test_with_ordered_indexes_and_string(given: list[tuple[int, int]], new: list[int], want: str) -> None:
    merged = intervals.with_indexes(given, new)
    assert intervals.to_string(merged) == want
    assert all(intervals.has(merged, i) for i in new)
