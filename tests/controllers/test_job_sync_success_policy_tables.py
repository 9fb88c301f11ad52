"""One syncJob over an Indexed Job whose success policy meets another end (backoffLimitPerIndex,
backoffLimit, a FailJob rule), as job_controller_test.go's TestSyncJobWithJobSuccessPolicy runs it
(its cases with every gate on, as at v1.35, ported as data: pods by index, uid, phase, the
index failure count annotation and the tracking finalizer; the status the sync writes)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.job_sync import MAX_INT32, indexed_job, pod, sync_once

JSON = dict[str, Any]
MATCHED = "Matched rules at index 0"
SUCCESS_MET = {"type": "SuccessCriteriaMet", "status": "True", "reason": "SuccessPolicy", "message": MATCHED}
DISRUPTION_MESSAGE = "Pod default/mypod-0 has condition DisruptionTarget matching FailJob rule at index 0"
FAIL_ON_DISRUPTION = {
    "rules": [{"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
}


def _job(
    *,
    backoff: int = MAX_INT32,
    per_index: int | None = None,
    rule: JSON,
    failure_policy: JSON | None = None,
    status: JSON | None = None,
) -> JSON:
    spec: JSON = {"backoffLimit": backoff, "successPolicy": {"rules": [rule]}}
    if per_index is not None:
        spec["backoffLimitPerIndex"] = per_index
    if failure_policy is not None:
        spec["podFailurePolicy"] = failure_policy
    return indexed_job(2, status=status, **spec)


def _pod(uid: str, index: int, phase: str, **given: Any) -> JSON:
    return pod(uid, index, phase, **given)


def _conditions(kind: str, reason: str, message: str) -> list[tuple[str, str, str]]:
    first = "SuccessCriteriaMet" if kind == "Complete" else "FailureTarget"
    return [(first, reason, message), (kind, reason, message)]


CASES = [
    pytest.param(
        _job(per_index=1, rule={"succeededIndexes": "0,1", "succeededCount": 1}),
        [_pod("a", 0, "Failed", failures="1"), _pod("b", 1, "Succeeded")],
        {"failed": 1, "succeeded": 1, "completedIndexes": "1", "failedIndexes": "0"},
        _conditions("Failed", "FailedIndexes", "Job has failed indexes"),
        id="job with successPolicy and backoffLimitPerIndex; job has a failed condition when job meets to both "
        "successPolicy and backoffLimitPerIndex",
    ),
    pytest.param(
        _job(backoff=1, rule={"succeededIndexes": "0,1", "succeededCount": 1}),
        [_pod("a1", 0, "Failed"), _pod("a2", 0, "Failed"), _pod("b", 1, "Succeeded")],
        {"failed": 2, "succeeded": 1, "completedIndexes": "1"},
        _conditions("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        id="job with successPolicy and backoffLimit; job has a failed condition when job meets to both successPolicy "
        "and backoffLimit",
    ),
    pytest.param(
        _job(
            rule={"succeededCount": 1},
            failure_policy=FAIL_ON_DISRUPTION,
            status={"succeeded": 1, "completedIndexes": "1", "conditions": [SUCCESS_MET]},
        ),
        [_pod("a", 0, "Failed", disrupted=True), _pod("b", 1, "Succeeded")],
        {"failed": 1, "succeeded": 1, "completedIndexes": "1"},
        _conditions("Complete", "SuccessPolicy", MATCHED),
        id="job with successPolicy and podFailurePolicy; job with SuccessCriteriaMet has never been transitioned to "
        "FailureTarget and Failed even if job meets podFailurePolicy",
    ),
    pytest.param(
        _job(
            per_index=1,
            rule={"succeededIndexes": "1"},
            status={"succeeded": 1, "completedIndexes": "1", "conditions": [SUCCESS_MET]},
        ),
        [_pod("a", 0, "Failed", failures="1"), _pod("b", 1, "Succeeded")],
        {"failed": 1, "succeeded": 1, "completedIndexes": "1", "failedIndexes": "0"},
        _conditions("Complete", "SuccessPolicy", MATCHED),
        id="job with successPolicy and backoffLimitPerIndex; job with SuccessCriteriaMet has never been transitioned "
        "to FailureTarget and Failed even if job meet backoffLimitPerIndex",
    ),
    pytest.param(
        _job(
            backoff=1,
            rule={"succeededIndexes": "0,1", "succeededCount": 1},
            status={"succeeded": 1, "completedIndexes": "1", "conditions": [SUCCESS_MET]},
        ),
        [_pod("a", 0, "Failed"), _pod("b", 1, "Succeeded")],
        {"failed": 1, "succeeded": 1, "completedIndexes": "1"},
        _conditions("Complete", "SuccessPolicy", MATCHED),
        id="job with successPolicy and backoffLimit; job with SuccessCriteriaMet has never been transitioned to "
        "FailureTarget and Failed even if job meets backoffLimit",
    ),
    pytest.param(
        _job(
            rule={"succeededIndexes": "0,1", "succeededCount": 1},
            failure_policy=FAIL_ON_DISRUPTION,
            status={
                "failed": 1,
                "completedIndexes": "1",
                "conditions": [
                    {
                        "type": "FailureTarget",
                        "status": "True",
                        "reason": "PodFailurePolicy",
                        "message": DISRUPTION_MESSAGE,
                    }
                ],
            },
        ),
        [_pod("a", 0, "Failed", disrupted=True, finalizer=False), _pod("b", 1, "Succeeded")],
        {"failed": 1, "succeeded": 1, "completedIndexes": "1"},
        _conditions("Failed", "PodFailurePolicy", DISRUPTION_MESSAGE),
        id="job with successPolicy and podFailureTarget; job with FailureTarget has never been transitioned to "
        "SuccessCriteriaMet even if job meets successPolicy",
    ),
]


@pytest.mark.parametrize(("job", "pods", "counters", "conditions"), CASES)
def test_sync_job_with_a_success_policy(
    job: JSON, pods: list[JSON], counters: JSON, conditions: list[tuple[str, str, str]]
) -> None:
    status = sync_once(job, pods)["status"]
    got = [(c["type"], c.get("reason", ""), c.get("message", "")) for c in status.get("conditions") or []]
    assert got == conditions
    assert {
        k: status[k] for k in ("failed", "succeeded", "completedIndexes", "failedIndexes") if k in status
    } == counters
    assert "active" not in status and status["terminating"] == 0 and status["uncountedTerminatedPods"] == {}
