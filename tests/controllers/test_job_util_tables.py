"""Upstream's Job controller helper tables ported as data (pkg/controller/job
indexed_job_utils_test.go TestFirstPendingIndexes, TestAppendDuplicatedIndexPodsForRemoval,
TestPodGenerateNameWithIndex; job_controller_test.go TestPastBackoffLimitOnFailure-style cases;
backoff_utils_test.go getRemainingTime; ensureJobConditionStatus)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.controllers.job import indexed_job_utils, intervals, util
from kubetaint.controllers.job.backoff import Backoff
from kubetaint.controllers.job.context import SyncJobCtx

NO_INDEX = None


def _pods(descs: list[tuple[str | None, str]]) -> list[dict[str, Any]]:
    pods = []
    for index, phase in descs:
        meta: dict[str, Any] = {}
        if index is not None:
            meta["annotations"] = {util.COMPLETION_INDEX_ANNOTATION: index}
        pods.append({"metadata": meta, "status": {"phase": phase}})
    return pods


def _phases(pods: list[dict[str, Any]]) -> list[tuple[str | None, str]]:
    return [
        ((p["metadata"].get("annotations") or {}).get(util.COMPLETION_INDEX_ANNOTATION), p["status"]["phase"])
        for p in pods
    ]


@pytest.mark.parametrize(
    ("cnt", "completions", "active", "succeeded", "want"),
    [
        pytest.param(5, 3, [], [], [0, 1, 2], id="cnt greater than completions"),
        pytest.param(2, 5, [], [], [0, 1], id="cnt less than completions"),
        pytest.param(3, 10, [("0", "Running"), ("1", "Pending")], [], [2, 3, 4], id="first pods active"),
        pytest.param(6, 6, [("6", "Pending")], [4, 5], [0, 1, 2, 3], id="last pods active or succeeded"),
        pytest.param(
            5,
            20,
            [("3", "Pending"), ("5", "Running"), ("8", "Pending"), (NO_INDEX, "Running"), ("-3", "Running")],
            [2, 3, 4, 9],
            [0, 1, 6, 7, 10],
            id="mixed",
        ),
    ],
)
def test_first_pending_indexes(
    cnt: int, completions: int, active: list[tuple[str | None, str]], succeeded: list[int], want: list[int]
) -> None:
    job = {"spec": {"completionMode": "Indexed", "completions": completions}}
    ctx = SyncJobCtx(
        job=job,
        pods=_pods(active),
        active_pods=_pods(active),
        ready=0,
        terminating=0,
        uncounted={"succeeded": set(), "failed": set()},
        backoff=Backoff(),
        succeeded_indexes=intervals.with_indexes([], succeeded),
    )
    assert indexed_job_utils.first_pending_indexes(ctx, cnt) == want


@pytest.mark.parametrize(
    ("pods", "want_rm", "want_left", "completions"),
    [
        pytest.param(
            [(NO_INDEX, "Pending"), ("2", "Pending"), ("5", "Running"), ("6", "Running")],
            [(NO_INDEX, "Pending"), ("6", "Running")],
            [("2", "Pending"), ("5", "Running")],
            6,
            id="all unique",
        ),
        pytest.param(
            [
                ("5", "Pending"),
                ("0", "Running"),
                ("3", "Pending"),
                ("0", "Running"),
                ("3", "Running"),
                ("0", "Pending"),
                ("6", "Running"),
                ("6", "Pending"),
            ],
            [("0", "Pending"), ("0", "Running"), ("3", "Pending"), ("6", "Running"), ("6", "Pending")],
            [("0", "Running"), ("3", "Running"), ("5", "Pending")],
            6,
            id="all with index",
        ),
        pytest.param(
            [
                (NO_INDEX, "Pending"),
                ("invalid", "Running"),
                ("-2", "Running"),
                ("0", "Pending"),
                ("1", "Pending"),
                ("1", "Pending"),
                ("1", "Running"),
            ],
            [
                (NO_INDEX, "Pending"),
                ("invalid", "Running"),
                ("-2", "Running"),
                ("1", "Pending"),
                ("1", "Pending"),
            ],
            [("0", "Pending"), ("1", "Running")],
            6,
            id="mixed",
        ),
    ],
)
def test_append_duplicated_index_pods_for_removal(
    pods: list[tuple[str | None, str]],
    want_rm: list[tuple[str | None, str]],
    want_left: list[tuple[str | None, str]],
    completions: int,
) -> None:
    rm, left = indexed_job_utils.duplicated_index_pods_for_removal(_pods(pods), completions)
    assert _phases(rm) == want_rm
    assert _phases(left) == want_left


@pytest.mark.parametrize(
    ("job_name", "index", "want"),
    [
        pytest.param("indexed-job", 1, "indexed-job-1-", id="short job name"),
        pytest.param(
            "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooo",
            1,
            "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-",
            id="job name exceeds MaxGeneneratedNameLength",
        ),
        pytest.param(
            "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhoo",
            1,
            "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-",
            id="job name with index suffix exceeds MaxGeneratedNameLength",
        ),
    ],
)
def test_pod_generate_name_with_index(job_name: str, index: int, want: str) -> None:
    assert indexed_job_utils.pod_generate_name(job_name, index) == want


@pytest.mark.parametrize(
    ("indexes", "want"),
    [
        pytest.param([], "", id="none"),
        pytest.param([0], "0", id="one"),
        pytest.param([0, 1], "0,1", id="a pair is listed"),
        pytest.param([0, 1, 2], "0-2", id="three in a row are a range"),
        pytest.param([1, 3, 4, 5, 7, 9, 10], "1,3-5,7,9,10", id="mixed"),
    ],
)
def test_completed_indexes_are_written_as_ordered_intervals(indexes: list[int], want: str) -> None:
    written = intervals.to_string(intervals.with_indexes([], indexes))
    assert written == want
    parsed = intervals.parse(want, 100)
    assert [i for first, last in parsed for i in range(first, last + 1)] == indexes


@pytest.mark.parametrize(
    ("failures", "last_failure", "now", "want"),
    [
        pytest.param(0, None, 100.0, 0.0, id="no failures: no back-off"),
        pytest.param(1, 100.0, 100.0, 10.0, id="one failure: 10 s"),
        pytest.param(1, 100.0, 104.0, 6.0, id="one failure, 4 s ago"),
        pytest.param(3, 100.0, 100.0, 40.0, id="three failures: 40 s"),
        pytest.param(1, 100.0, 111.0, 0.0, id="the back-off has passed"),
        pytest.param(10, 100.0, 100.0, 600.0, id="capped at 10 minutes"),
    ],
)
def test_pod_failure_back_off(failures: int, last_failure: float | None, now: float, want: float) -> None:
    assert util.remaining_backoff(failures, last_failure, now) == want


def _job(restart_policy: str, backoff_limit: int) -> dict[str, Any]:
    return {"spec": {"backoffLimit": backoff_limit, "template": {"spec": {"restartPolicy": restart_policy}}}}


def _restarted(phase: str, restarts: int) -> dict[str, Any]:
    return {"status": {"phase": phase, "containerStatuses": [{"restartCount": restarts}]}}


@pytest.mark.parametrize(
    ("restart_policy", "backoff_limit", "pods", "want"),
    [
        pytest.param("OnFailure", 2, [_restarted("Running", 1)], False, id="restarts below the limit"),
        pytest.param("OnFailure", 2, [_restarted("Running", 1), _restarted("Pending", 1)], True, id="summed"),
        pytest.param("OnFailure", 0, [_restarted("Running", 1)], True, id="limit 0: any restart"),
        pytest.param("OnFailure", 2, [_restarted("Succeeded", 5)], False, id="finished pods do not count"),
        pytest.param("Never", 1, [_restarted("Running", 5)], False, id="only OnFailure counts restarts"),
    ],
)
def test_past_backoff_limit_on_failure(
    restart_policy: str, backoff_limit: int, pods: list[dict[str, Any]], want: bool
) -> None:
    assert util.past_backoff_limit_on_failure(_job(restart_policy, backoff_limit), pods) is want


def test_ensure_condition_status_appends_updates_and_never_adds_a_false_condition() -> None:
    conditions, changed = util.ensure_condition_status(
        [], "Suspended", "False", "JobResumed", "Job resumed", now=0
    )
    assert (conditions, changed) == ([], False)
    conditions, changed = util.ensure_condition_status(
        [], "Suspended", "True", "JobSuspended", "Job suspended", now=0
    )
    assert changed and conditions[0]["status"] == "True"
    again, changed = util.ensure_condition_status(
        conditions, "Suspended", "True", "JobSuspended", "Job suspended", now=5
    )
    assert (again, changed) == (conditions, False)
    resumed, changed = util.ensure_condition_status(
        conditions, "Suspended", "False", "JobResumed", "Job resumed", now=5
    )
    assert (
        changed
        and resumed[0]["reason"] == "JobResumed"
        and resumed[0]["lastTransitionTime"] == "1970-01-01T00:00:05Z"
    )
