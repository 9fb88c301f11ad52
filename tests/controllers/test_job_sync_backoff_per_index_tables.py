"""One syncJob over an Indexed Job with backoffLimitPerIndex, as job_controller_test.go's
TestSyncJobWithJobBackoffLimitPerIndex runs it (its cases with every gate on, as at v1.35, ported as
data: pods by index, uid, phase and index failure count; the status the sync writes). Where
upstream's table predates 1.35 (a success without the CompletionsReached reason) the case says so."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.job_sync import MAX_INT32, conditions_of, indexed_job, pod, sync_once

JSON = dict[str, Any]
FAILED_INDEXES = ("FailedIndexes", "Job has failed indexes")
BACKOFF = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
FAIL_JOB_MESSAGE = (
    "Container x for pod default/mypod-0 failed with exit code 3 matching FailJob rule at index 0"
)


def _ends(kind: str, first: str, reason: tuple[str, str]) -> list[tuple[str, str, str]]:
    return [(first, *reason), (kind, *reason)]


def _on_exit_3(action: str) -> JSON:
    return {"rules": [{"action": action, "onExitCodes": {"operator": "In", "values": [3]}}]}


CASES = [
    pytest.param(
        indexed_job(2, backoffLimit=MAX_INT32, backoffLimitPerIndex=1),
        [
            pod("a1", 0, "Failed", failures="0"),
            pod("a2", 0, "Succeeded", failures="1"),
            pod("b", 1, "Succeeded", failures="0"),
        ],
        {"failed": 1, "succeeded": 2, "completedIndexes": "0,1", "failedIndexes": ""},
        _ends("Complete", "SuccessCriteriaMet", REACHED),  # 1.35's reason; upstream's older table has none
        id="successful job after a single failure within index",
    ),
    pytest.param(
        indexed_job(2, backoffLimit=MAX_INT32, backoffLimitPerIndex=1),
        [pod("a", 0, "Failed", failures="0")],
        {"active": 2, "failedIndexes": ""},
        [],
        id="single failed pod, not counted as the replacement pod creation is delayed",
    ),
    pytest.param(
        indexed_job(2, backoffLimit=MAX_INT32, backoffLimitPerIndex=1),
        [pod("a", 0, "Failed", failures="0"), pod("b", 0, "Pending", failures="1")],
        {"active": 2, "failed": 1, "failedIndexes": ""},
        [],
        id="single failed pod replaced already",
    ),
    pytest.param(
        indexed_job(2, backoffLimit=MAX_INT32, backoffLimitPerIndex=1),
        [pod("a", 0, "Failed", failures="1")],
        {"active": 1, "failed": 1, "failedIndexes": "0"},
        [],
        id="single failed index due to exceeding the backoff limit per index, the job continues",
    ),
    pytest.param(
        indexed_job(
            2, backoffLimit=MAX_INT32, backoffLimitPerIndex=1, podFailurePolicy=_on_exit_3("FailIndex")
        ),
        [pod("a", 0, "Failed", failures="0", exit_code=3)],
        {"active": 1, "failed": 1, "failedIndexes": "0"},
        [],
        id="single failed index due to FailIndex action, the job continues",
    ),
    pytest.param(
        indexed_job(2, backoffLimit=6, backoffLimitPerIndex=1, podFailurePolicy=_on_exit_3("FailJob")),
        [pod("a", 0, "Failed", failures="0", exit_code=3, container="x")],
        {"failed": 1, "failedIndexes": ""},
        _ends("Failed", "FailureTarget", ("PodFailurePolicy", FAIL_JOB_MESSAGE)),
        id="job failed index due to FailJob action",
    ),
    pytest.param(
        indexed_job(2, backoffLimit=6, backoffLimitPerIndex=1, podFailurePolicy=_on_exit_3("Ignore")),
        [pod("a", 0, "Failed", failures="0", exit_code=3, container="x")],
        {"active": 2, "failedIndexes": ""},
        [],
        id="job pod failure ignored due to matching Ignore action",
    ),
    pytest.param(
        indexed_job(2, backoffLimit=1, backoffLimitPerIndex=1),
        [pod("a", 0, "Failed", failures="0"), pod("b", 1, "Failed", failures="0")],
        {"failed": 2, "failedIndexes": ""},
        _ends("Failed", "FailureTarget", BACKOFF),
        id="job failed due to exceeding backoffLimit before backoffLimitPerIndex",
    ),
    pytest.param(
        indexed_job(2, backoffLimit=MAX_INT32, backoffLimitPerIndex=1),
        [pod("a", 0, "Failed", failures="1"), pod("b", 1, "Succeeded", failures="0")],
        {"failed": 1, "succeeded": 1, "completedIndexes": "1", "failedIndexes": "0"},
        _ends("Failed", "FailureTarget", FAILED_INDEXES),
        id="job failed due to failed indexes",
    ),
    pytest.param(
        indexed_job(4, backoffLimit=MAX_INT32, backoffLimitPerIndex=1, maxFailedIndexes=1),
        [
            pod("a", 0, "Failed", failures="1"),
            pod("b", 1, "Succeeded", failures="0"),
            pod("c", 2, "Failed", failures="1"),
            pod("d", 3, "Running", failures="0"),
        ],
        {"failed": 3, "succeeded": 1, "completedIndexes": "1", "failedIndexes": "0,2", "terminating": 1},
        [
            (
                "FailureTarget",
                "MaxFailedIndexesExceeded",
                "Job has exceeded the specified maximal number of failed indexes",
            )
        ],
        id="job failed due to exceeding max failed indexes",
    ),
]

FIELDS = ("active", "failed", "succeeded", "completedIndexes", "failedIndexes")


@pytest.mark.parametrize(("job", "pods", "counters", "conditions"), CASES)
def test_sync_job_with_a_backoff_limit_per_index(
    job: JSON, pods: list[JSON], counters: JSON, conditions: list[tuple[str, str, str]]
) -> None:
    synced = sync_once(job, pods)
    status = synced["status"]
    wanted = {"terminating": 0, **counters}
    got = {k: status[k] for k in (*FIELDS, "terminating") if k in status and status[k] != ""} | {
        k: "" for k in FIELDS if status.get(k) == "" and k in counters
    }
    assert got == wanted
    assert conditions_of(synced) == conditions
