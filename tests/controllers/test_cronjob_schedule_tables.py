"""Upstream's CronJob schedule tables ported as data (pkg/controller/cronjob/utils_test.go
TestMostRecentScheduleTime, TestNextScheduleTimeDuration, TestNextScheduleTime, TestByJobStartTime,
TestGetJobFromTemplate2's scheduled-timestamp annotation) and robfig/cron's parser and Next."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubetaint.controllers.cronjob import utils
from kubetaint.controllers.cronjob.schedule import ScheduleError, parse_standard

#: topOfTheHour: 2016-05-19T10:00:00Z (a Thursday).
TOP = datetime(2016, 5, 19, 10, tzinfo=UTC).timestamp()
MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0


def _stamp(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _cron_job(
    schedule: str, created: float, last: float | None = None, deadline: int | None = None
) -> dict[str, Any]:
    cron_job: dict[str, Any] = {
        "metadata": {"name": "mycronjob", "namespace": "default", "creationTimestamp": _stamp(created)},
        "spec": {"schedule": schedule},
        "status": {},
    }
    if last is not None:
        cron_job["status"]["lastScheduleTime"] = _stamp(last)
    if deadline is not None:
        cron_job["spec"]["startingDeadlineSeconds"] = deadline
    return cron_job


@pytest.mark.parametrize(
    ("cron_job", "include_sds", "now", "earliest", "recent", "missed"),
    [
        pytest.param(_cron_job("0 * * * *", TOP), False, TOP + 30, TOP, None, utils.Missed.NONE, id="now before next schedule"),
        pytest.param(
            _cron_job("0 * * * *", TOP), False, TOP + 61 * MINUTE, TOP, TOP + HOUR, utils.Missed.NONE,
            id="now just after next schedule",
        ),
        pytest.param(
            _cron_job("0 * * * *", TOP + 10), False, TOP + 301 * MINUTE, TOP + 10, TOP + 300 * MINUTE, utils.Missed.FEW,
            id="missed 5 schedules",
        ),
        pytest.param(
            _cron_job("30 6-16/4 * * 1-5", TOP, TOP + 30 * MINUTE), False, TOP + DAY + 31 * MINUTE, TOP + 30 * MINUTE,
            TOP + DAY + 30 * MINUTE, utils.Missed.FEW, id="complex schedule",
        ),
        pytest.param(
            _cron_job("30 10,11,12 * * 1-5", TOP, TOP + 30 * MINUTE), False, TOP + 30 * HOUR + 30 * MINUTE,
            TOP + 30 * MINUTE, None, utils.Missed.FEW, id="another complex schedule",
        ),
        pytest.param(
            _cron_job("30 6-16/4 * * 1-5", TOP, TOP + 30 * MINUTE), False, TOP + 96 * HOUR + 31 * MINUTE,
            TOP + 30 * MINUTE, TOP + 96 * HOUR + 30 * MINUTE, utils.Missed.FEW,
            id="complex schedule with longer diff between executions",
        ),
        pytest.param(
            _cron_job("30 6-16/4 * * 1-5", TOP), False, TOP + DAY + 31 * MINUTE, TOP, TOP + DAY + 30 * MINUTE,
            utils.Missed.FEW, id="complex schedule with shorter diff between executions",
        ),
        pytest.param(
            _cron_job("@every 1h", TOP - 59 * MINUTE, TOP + MINUTE, deadline=10), False, TOP + 7 * DAY,
            TOP + MINUTE, TOP + 6 * DAY + 23 * HOUR + MINUTE, utils.Missed.MANY, id="@every schedule",
        ),
        pytest.param(
            _cron_job("0 * * * *", TOP, TOP), False, TOP + 30, TOP, None, utils.Missed.NONE,
            id="earliestTime being CreationTimestamp and LastScheduleTime",
        ),
        pytest.param(
            _cron_job("*/5 * * * *", TOP, TOP + 30 * MINUTE), False, TOP + 31 * MINUTE, TOP + 30 * MINUTE, None,
            utils.Missed.NONE, id="earliestTime being LastScheduleTime",
        ),
        pytest.param(
            _cron_job("*/5 * * * *", TOP, TOP + 30 * MINUTE, deadline=60), False, TOP + 31 * MINUTE,
            TOP + 30 * MINUTE, None, utils.Missed.NONE,
            id="earliestTime being LastScheduleTime (within StartingDeadlineSeconds)",
        ),
        pytest.param(
            _cron_job("*/5 * * * *", TOP, TOP + 30 * MINUTE, deadline=60), True, TOP + 32 * MINUTE,
            TOP + 31 * MINUTE, None, utils.Missed.NONE,
            id="earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)",
        ),
    ],
)  # fmt: skip
def test_most_recent_schedule_time(
    cron_job: dict[str, Any],
    include_sds: bool,
    now: float,
    earliest: float,
    recent: float | None,
    missed: utils.Missed,
) -> None:
    got = utils.most_recent_schedule_time(
        cron_job, now, parse_standard(cron_job["spec"]["schedule"]), include_starting_deadline=include_sds
    )
    assert (got.earliest, got.most_recent, got.missed) == (earliest, recent, missed)


def test_a_rogue_schedule_is_an_error() -> None:
    cron_job = _cron_job("59 23 31 2 *", TOP + 10)
    with pytest.raises(ScheduleError, match="time difference between two schedules is less than 1 second"):
        utils.most_recent_schedule_time(
            cron_job, TOP + HOUR, parse_standard("59 23 31 2 *"), include_starting_deadline=False
        )


@pytest.mark.parametrize(
    ("cron_job", "now", "seconds"),
    [
        pytest.param(
            _cron_job("30 6-16/4 * * 1-5", TOP, TOP + 30 * MINUTE), TOP + DAY + 31 * MINUTE, 3 * HOUR + 59 * MINUTE,
            id="complex schedule skipping weekend",
        ),
        pytest.param(
            _cron_job("30 10,11,12 * * 1-5", TOP, TOP + 30 * MINUTE), TOP + 30 * HOUR + 30 * MINUTE, 66 * HOUR,
            id="another complex schedule skipping weekend",
        ),
        pytest.param(
            _cron_job("0 12 * * 4", TOP, TOP + 2 * HOUR), TOP + 19 * DAY + HOUR + 30 * MINUTE, 48 * HOUR + 30 * MINUTE,
            id="once a week cronjob, missed two runs",
        ),
        pytest.param(_cron_job("0 12 * * 5", TOP), TOP + 6 * HOUR, 20 * HOUR, id="no previous run of a cronjob"),
    ],
)  # fmt: skip
def test_next_schedule_time_duration(cron_job: dict[str, Any], now: float, seconds: float) -> None:
    got = utils.next_schedule_time_duration(cron_job, now, parse_standard(cron_job["spec"]["schedule"]))
    assert got == pytest.approx(seconds + utils.NEXT_SCHEDULE_DELTA)


T1, T2 = TOP, TOP + HOUR


@pytest.mark.parametrize(
    ("cron_job", "now", "want"),
    [
        pytest.param(_cron_job("0 * * * ?", T1 - 10 * MINUTE), T1 - 7 * MINUTE, None, id="no known start times, none needed"),
        pytest.param(_cron_job("0 * * * ?", T1 - 10 * MINUTE), T1 + 2, T1, id="no known start times, one needed"),
        pytest.param(_cron_job("0 * * * ?", T1 - 10 * MINUTE, T1), T1 + 2 * MINUTE, None, id="known last schedule, none needed"),
        pytest.param(_cron_job("0 * * * ?", T1 - 10 * MINUTE, T1), T2 + 5 * MINUTE, T2, id="known last schedule, one needed"),
        pytest.param(_cron_job("0 * * * ?", T1 - 2 * HOUR, T1 - HOUR), T2 + 5 * MINUTE, T2, id="two starts needed: the latest"),
        pytest.param(
            _cron_job("0 * * * ?", T1 - 2 * HOUR, T1 - HOUR, deadline=2 * 60 * 60), T2 + 10 * DAY, T2 + 10 * DAY,
            id="far ahead with a short deadline",
        ),
    ],
)  # fmt: skip
def test_next_schedule_time(cron_job: dict[str, Any], now: float, want: float | None) -> None:
    recent = utils.most_recent_schedule_time(
        cron_job, now, parse_standard("0 * * * ?"), include_starting_deadline=True
    )
    assert recent.most_recent == want


def _job(name: str, start: str | None) -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"startTime": start} if start else {}}


@pytest.mark.parametrize(
    ("jobs", "want"),
    [
        pytest.param([_job("b", None), _job("a", None)], ["a", "b"], id="both have nil start times"),
        pytest.param([_job("a", None), _job("b", "2018-01-01T02:03:04Z")], ["b", "a"], id="only the first has a nil start time"),
        pytest.param([_job("a", "2018-01-01T02:03:04Z"), _job("b", None)], ["a", "b"], id="only the second has a nil start time"),
        pytest.param(
            [_job("b", "2018-01-01T02:03:04Z"), _job("a", "2018-01-01T02:03:04Z")], ["a", "b"],
            id="both have non-nil, equal start time",
        ),
        pytest.param(
            [_job("a", "2019-01-01T02:03:04Z"), _job("b", "2018-01-01T02:03:04Z")], ["b", "a"],
            id="both have non-nil, different start time",
        ),
    ],
)  # fmt: skip
def test_by_job_start_time(jobs: list[dict[str, Any]], want: list[str]) -> None:
    assert [j["metadata"]["name"] for j in sorted(jobs, key=utils.by_start_time)] == want


@pytest.mark.parametrize(
    ("zone", "annotation"),
    [
        pytest.param(None, "2016-05-19T10:00:00Z", id="nil timezone"),
        pytest.param("UTC", "2016-05-19T10:00:00Z", id="UTC timezone"),
        pytest.param("Europe/Rome", "2016-05-19T12:00:00+02:00", id="correct timezone"),
    ],
)
def test_a_job_from_the_template_carries_the_scheduled_timestamp(zone: str | None, annotation: str) -> None:
    cron_job = _cron_job("* * * * ?", TOP)
    cron_job["metadata"]["uid"] = "1a2b3c"
    cron_job["spec"]["jobTemplate"] = {
        "metadata": {"labels": {"a": "b"}, "annotations": {"x": "y"}},
        "spec": {"activeDeadlineSeconds": 1, "template": {"metadata": {"labels": {"foo": "bar"}}}},
    }
    if zone is not None:
        cron_job["spec"]["timeZone"] = zone
    job = utils.job_from_template(cron_job, TOP)
    assert job["metadata"]["name"] == f"mycronjob-{int(TOP) // 60}"
    assert job["metadata"]["labels"] == {"a": "b"}
    assert job["metadata"]["annotations"] == {
        "x": "y",
        "batch.kubernetes.io/cronjob-scheduled-timestamp": annotation,
    }
    (ref,) = job["metadata"]["ownerReferences"]
    assert (ref["apiVersion"], ref["kind"], ref["uid"], ref["controller"]) == (
        "batch/v1",
        "CronJob",
        "1a2b3c",
        True,
    )
    assert job["spec"] == cron_job["spec"]["jobTemplate"]["spec"]


@pytest.mark.parametrize(
    ("spec", "after", "want"),
    [
        pytest.param("@hourly", "2016-05-19T10:00:00Z", "2016-05-19T11:00:00Z", id="@hourly"),
        pytest.param("@daily", "2016-05-19T10:00:00Z", "2016-05-20T00:00:00Z", id="@daily"),
        pytest.param("@midnight", "2016-05-19T10:00:00Z", "2016-05-20T00:00:00Z", id="@midnight"),
        pytest.param("@weekly", "2016-05-19T10:00:00Z", "2016-05-22T00:00:00Z", id="@weekly: Sunday"),
        pytest.param("@monthly", "2016-05-19T10:00:00Z", "2016-06-01T00:00:00Z", id="@monthly"),
        pytest.param("@yearly", "2016-05-19T10:00:00Z", "2017-01-01T00:00:00Z", id="@yearly"),
        pytest.param("@annually", "2016-05-19T10:00:00Z", "2017-01-01T00:00:00Z", id="@annually"),
        pytest.param("@every 90s", "2016-05-19T10:00:00Z", "2016-05-19T10:01:30Z", id="@every 90s"),
        pytest.param("*/15 * * * *", "2016-05-19T10:07:00Z", "2016-05-19T10:15:00Z", id="steps"),
        pytest.param("5/15 * * * *", "2016-05-19T10:07:00Z", "2016-05-19T10:20:00Z", id="N/step from N"),
        pytest.param("0 0 * * mon-fri", "2016-05-20T10:00:00Z", "2016-05-23T00:00:00Z", id="weekday names"),
        pytest.param("0 0 1 jan,jul *", "2016-05-19T10:00:00Z", "2016-07-01T00:00:00Z", id="month names"),
        pytest.param("0 0 13 * 5", "2016-05-19T10:00:00Z", "2016-05-20T00:00:00Z", id="day of month or of week"),
        pytest.param("0 0 13 * *", "2016-05-19T10:00:00Z", "2016-06-13T00:00:00Z", id="day of month alone"),
        pytest.param("0 0 29 2 *", "2016-05-19T10:00:00Z", "2020-02-29T00:00:00Z", id="a leap day"),
        pytest.param("TZ=Europe/Rome 0 9 * * *", "2016-05-19T10:00:00Z", "2016-05-20T07:00:00Z", id="a time zone"),
        pytest.param("CRON_TZ=America/New_York 30 1 * * *", "2016-05-19T10:00:00Z", "2016-05-20T05:30:00Z", id="CRON_TZ"),
    ],
)  # fmt: skip
def test_next_activation(spec: str, after: str, want: str) -> None:
    start = datetime.fromisoformat(after.replace("Z", "+00:00")).timestamp()
    got = parse_standard(spec).next(start)
    assert got is not None and _stamp(got) == want


def test_a_schedule_that_never_fires_has_no_next_activation() -> None:
    assert parse_standard("59 23 31 2 *").next(TOP) is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param("", "empty spec string", id="empty"),
        pytest.param("* * * *", "expected exactly 5 fields, found 4: [* * * *]", id="four fields"),
        pytest.param("60 * * * *", "end of range (60) above maximum (59): 60", id="minute too large"),
        pytest.param("* * 0 * *", "beginning of range (0) below minimum (1): 0", id="day 0"),
        pytest.param("5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2", id="reversed range"),
        pytest.param("*/0 * * * *", "step of range should be a positive number: */0", id="step 0"),
        pytest.param("1-2-3 * * * *", "too many hyphens: 1-2-3", id="too many hyphens"),
        pytest.param("*/2/3 * * * *", "too many slashes: */2/3", id="too many slashes"),
        pytest.param(
            "x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax', id="not a number"
        ),
        pytest.param("@fortnightly", "unrecognized descriptor: @fortnightly", id="unknown descriptor"),
        pytest.param("TZ=Mars/Base * * * * *", "provided bad location Mars/Base: unknown time zone Mars/Base", id="bad zone"),
    ],
)  # fmt: skip
def test_parse_errors_are_robfigs(spec: str, message: str) -> None:
    with pytest.raises(ScheduleError) as error:
        parse_standard(spec)
    assert str(error.value) == message
