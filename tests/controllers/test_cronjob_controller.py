"""The CronJob controller on the virtual clock with the Job controller, the scheduler and hollow
kubelets: Jobs named for their scheduled minute at each schedule time, the status upstream keeps,
the concurrency policies, the starting deadline, suspend, the history limits and time zones."""

from __future__ import annotations

import copy
from typing import Any

from controllers.batch_builders import events, get, running_plane
from kubetaint.controlplane import ControlPlane
from kubetaint.core.workload_defaults import default_cron_job

#: The plane's virtual clock starts at 2026-01-01T00:00:00Z.
START = 1767225600


def cron_job(name: str, schedule: str, *, run_seconds: float = 0, **spec: Any) -> dict[str, Any]:
    template = {
        "metadata": {"annotations": {"kubetaint.io/run-seconds": str(run_seconds)}},
        "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]},
    }
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedule": schedule, "jobTemplate": {"spec": {"template": template}}, **spec},
    }
    return default_cron_job(manifest)


def _jobs(plane: ControlPlane) -> list[str]:
    return sorted(j["metadata"]["name"] for j in plane.store.list("jobs.batch", namespace="default").items)


def _job_name(minute: int) -> str:
    return f"report-{START // 60 + minute}"


def _status(plane: ControlPlane) -> dict[str, Any]:
    return copy.deepcopy(get(plane, "cronjobs.batch", "report").get("status") or {})


def test_each_schedule_time_creates_a_job_named_for_its_minute_that_runs_to_completion() -> None:
    plane = running_plane("n1")
    plane.registry.create("cronjobs.batch", cron_job("report", "*/5 * * * *", run_seconds=30))
    plane.clock.advance(299)
    assert _jobs(plane) == []
    plane.clock.advance(2)
    assert _jobs(plane) == [_job_name(5)]
    job = get(plane, "jobs.batch", _job_name(5))
    assert (
        job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
        == "2026-01-01T00:05:00Z"
    )
    (ref,) = job["metadata"]["ownerReferences"]
    assert (ref["apiVersion"], ref["kind"], ref["name"]) == ("batch/v1", "CronJob", "report")
    status = _status(plane)
    assert status["lastScheduleTime"] == "2026-01-01T00:05:00Z"
    assert [a["name"] for a in status["active"]] == [_job_name(5)]
    plane.clock.advance(60)
    status = _status(plane)
    assert "active" not in status
    assert status["lastSuccessfulTime"] == "2026-01-01T00:05:30Z"
    assert events(plane, "cronjob-controller") == [
        ("Normal", "SuccessfulCreate", f"Created job {_job_name(5)}"),
        ("Normal", "SawCompletedJob", f"Saw completed job: {_job_name(5)}, condition: Complete"),
    ]


def test_fast_forward_keeps_the_successful_jobs_history_limit() -> None:
    plane = running_plane("n1")
    plane.registry.create("cronjobs.batch", cron_job("report", "@hourly", successfulJobsHistoryLimit=2))
    plane.clock.advance(5 * 3600 + 60)
    assert _jobs(plane) == [_job_name(4 * 60), _job_name(5 * 60)]
    deleted = [e[2] for e in events(plane, "cronjob-controller") if e[1] == "SuccessfulDelete"]
    assert deleted == [
        f"Deleted job {_job_name(60)}",
        f"Deleted job {_job_name(120)}",
        f"Deleted job {_job_name(180)}",
    ]


def test_forbid_skips_a_run_while_the_previous_job_is_active() -> None:
    plane = running_plane("n1")
    plane.registry.create(
        "cronjobs.batch", cron_job("report", "* * * * *", run_seconds=90, concurrencyPolicy="Forbid")
    )
    plane.clock.advance(121)
    assert _jobs(plane) == [_job_name(1)]
    assert ("Normal", "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid") in events(plane, "cronjob-controller")  # fmt: skip
    plane.clock.advance(30)  # the first job completes at 02:30: the skipped 02:00 run starts late
    assert _jobs(plane) == [_job_name(1), _job_name(2)]
    assert get(plane, "jobs.batch", _job_name(2))["metadata"]["creationTimestamp"] == "2026-01-01T00:02:30Z"


def test_replace_deletes_the_running_job_for_the_new_one() -> None:
    plane = running_plane("n1")
    plane.registry.create(
        "cronjobs.batch", cron_job("report", "* * * * *", run_seconds=90, concurrencyPolicy="Replace")
    )
    plane.clock.advance(121)
    assert _jobs(plane) == [_job_name(2)]
    assert ("Normal", "SuccessfulDelete", f"Deleted job {_job_name(1)}") in events(
        plane, "cronjob-controller"
    )
    assert [a["name"] for a in _status(plane)["active"]] == [_job_name(2)]


def test_allow_runs_jobs_side_by_side() -> None:
    plane = running_plane("n1")
    plane.registry.create("cronjobs.batch", cron_job("report", "* * * * *", run_seconds=90))
    plane.clock.advance(121)
    assert _jobs(plane) == [_job_name(1), _job_name(2)]
    assert len(_status(plane)["active"]) == 2


def test_a_suspended_cron_job_creates_nothing_until_resumed() -> None:
    plane = running_plane("n1")
    plane.registry.create("cronjobs.batch", cron_job("report", "*/5 * * * *", suspend=True))
    plane.clock.advance(900)
    assert _jobs(plane) == []
    resumed = get(plane, "cronjobs.batch", "report")
    resumed["spec"]["suspend"] = False
    plane.registry.update("cronjobs.batch", resumed)
    plane.clock.advance(1)
    assert _jobs(plane) == [_job_name(15)]


def test_a_missed_start_past_its_deadline_is_reported_not_run() -> None:
    plane = running_plane("n1")
    plane.registry.create(
        "cronjobs.batch", cron_job("report", "*/5 * * * *", suspend=True, startingDeadlineSeconds=10)
    )
    plane.clock.advance(320)
    resumed = get(plane, "cronjobs.batch", "report")
    resumed["spec"]["suspend"] = False
    plane.registry.update("cronjobs.batch", resumed)
    plane.clock.advance(1)
    assert _jobs(plane) == []
    assert "lastScheduleTime" not in _status(plane)
    plane.clock.advance(300)
    assert _jobs(plane) == [_job_name(10)]


def test_a_time_zone_moves_the_schedule() -> None:
    plane = running_plane("n1")
    plane.registry.create("cronjobs.batch", cron_job("report", "0 9 * * *", timeZone="Asia/Tokyo"))
    plane.clock.advance(24 * 3600 + 1)
    # 09:00 in Tokyo is 00:00 UTC: the first run is on the next day
    assert _jobs(plane) == [_job_name(24 * 60)]
    job = get(plane, "jobs.batch", _job_name(24 * 60))
    assert (
        job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
        == "2026-01-02T09:00:00+09:00"
    )


def test_an_unknown_time_zone_is_reported() -> None:
    plane = running_plane("n1")
    plane.registry.create("cronjobs.batch", cron_job("report", "* * * * *", timeZone="Mars/Base"))
    plane.clock.advance(61)
    assert _jobs(plane) == []
    assert (
        "Warning",
        "UnknownTimeZone",
        'invalid timeZone: "Mars/Base": unknown time zone Mars/Base',
    ) in events(plane, "cronjob-controller")


def test_the_jobs_get_the_generated_selector_and_run_their_pods() -> None:
    plane = running_plane("n1")
    plane.registry.create("cronjobs.batch", cron_job("report", "@every 1m", run_seconds=600))
    plane.clock.advance(61)
    (name,) = _jobs(plane)
    job = get(plane, "jobs.batch", name)
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["backoffLimit"] == 6
    pods = plane.store.list("pods", namespace="default").items
    assert [p["metadata"]["labels"]["batch.kubernetes.io/job-name"] for p in pods] == [name]
