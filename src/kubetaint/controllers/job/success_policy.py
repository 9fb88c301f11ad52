"""An Indexed Job's success policy, as pkg/controller/job/success_policy.go: the Job succeeds
(`SuccessCriteriaMet`, reason `SuccessPolicy`) once its succeeded indexes match a rule, even while
other indexes still run (they are then deleted)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.controllers.job import intervals
from kubetaint.controllers.job.intervals import Interval

REASON_SUCCESS_POLICY = "SuccessPolicy"
_RULES_MATCHED = "Matched rules at index"


def match_success_policy(
    policy: Mapping[str, Any] | None, completions: int, succeeded: Sequence[Interval]
) -> tuple[str, bool]:
    """matchSuccessPolicy: (message, met) for the first rule the succeeded indexes satisfy: all of
    its `succeededIndexes`, or `succeededCount` of them, or (without indexes) `succeededCount`
    succeeded indexes at all. A rule whose indexes do not parse is skipped."""
    if policy is None or not succeeded:
        return "", False
    for index, rule in enumerate(policy.get("rules") or []):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = intervals.parse(str(rule["succeededIndexes"]), completions)
            if not required:
                continue
            if match_succeeded_indexes_rule(required, succeeded, count):
                return f"{_RULES_MATCHED} {index}", True
        elif count is not None and intervals.total(succeeded) >= int(count):
            return f"{_RULES_MATCHED} {index}", True
    return "", False


def match_succeeded_indexes_rule(
    rule_indexes: Sequence[Interval], succeeded: Sequence[Interval], succeeded_count: int | None
) -> bool:
    """matchSucceededIndexesRule: every index of the rule succeeded, or at least `succeeded_count`
    of them."""
    contains = rule_pointer = succeeded_pointer = 0
    while rule_pointer < len(rule_indexes) and succeeded_pointer < len(succeeded):
        rule_first, rule_last = rule_indexes[rule_pointer]
        done_first, done_last = succeeded[succeeded_pointer]
        overlap = min(rule_last, done_last) - max(rule_first, done_first) + 1
        if overlap > 0:
            contains += overlap
        if done_last < rule_last:
            succeeded_pointer += 1
        elif done_last > rule_last:
            rule_pointer += 1
        else:
            succeeded_pointer += 1
            rule_pointer += 1
    return contains == intervals.total(rule_indexes) or (
        succeeded_count is not None and contains >= int(succeeded_count)
    )
