"""Pure helpers of the CronJob controller (mirrors pkg/controller/cronjob/utils.go:
mostRecentScheduleTime, nextScheduleTime, nextScheduleTimeDuration, getJobFromTemplate2,
getJobName, byJobStartTime, formatSchedule)."""

from __future__ import annotations

import copy
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kubetaint.clock.base import parse_time
from kubetaint.controllers.cronjob.schedule import Schedule, ScheduleError, load_location
from kubetaint.controllers.replicaset import podutil

JSON = dict[str, Any]
#: nextScheduleDelta: a sync is queued this long after the next schedule time.
NEXT_SCHEDULE_DELTA = 0.1
SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"


class Missed(enum.Enum):
    """missedSchedulesType."""

    NONE = 0
    FEW = 1
    MANY = 2


@dataclass(frozen=True)
class Recent:
    """What mostRecentScheduleTime returns: the earliest time looked from, the most recent
    schedule time not after now (None: none), how many were missed."""

    earliest: float
    most_recent: float | None
    missed: Missed


def most_recent_schedule_time(
    cron_job: Mapping[str, Any], now: float, schedule: Schedule, *, include_starting_deadline: bool
) -> Recent:
    """mostRecentScheduleTime; raises ScheduleError for a schedule whose two next times are less
    than a second apart (one that never fires, such as `59 23 31 2 *`)."""
    meta = cron_job.get("metadata") or {}
    spec = cron_job.get("spec") or {}
    status = cron_job.get("status") or {}
    earliest = parse_time(str(meta.get("creationTimestamp"))) if meta.get("creationTimestamp") else 0.0
    if status.get("lastScheduleTime"):
        earliest = parse_time(str(status["lastScheduleTime"]))
    deadline = spec.get("startingDeadlineSeconds")
    if include_starting_deadline and deadline is not None:
        scheduling_deadline = now - float(deadline)
        earliest = max(earliest, scheduling_deadline)
    t1 = schedule.next(earliest)
    t2 = schedule.next(t1) if t1 is not None else None
    if t1 is None or now < t1:
        if t1 is None:
            raise ScheduleError("time difference between two schedules is less than 1 second")
        return Recent(earliest, None, Missed.NONE)
    if t2 is not None and now < t2:
        return Recent(earliest, t1, Missed.NONE)
    between = round(t2 - t1) if t2 is not None else 0
    if between < 1:
        raise ScheduleError("time difference between two schedules is less than 1 second")
    elapsed = int(now - t1)
    missed_count = elapsed // between + 1
    most_recent: float | None = None
    potential_earliest = t1 + (missed_count - 1 - 1) * between
    t = schedule.next(potential_earliest)
    while t is not None and t <= now:
        most_recent = t
        t = schedule.next(t)
    missed = Missed.MANY if missed_count > 100 else Missed.FEW if missed_count > 0 else Missed.NONE
    return Recent(earliest, most_recent, missed)


def next_schedule_time_duration(cron_job: Mapping[str, Any], now: float, schedule: Schedule) -> float | None:
    """nextScheduleTimeDuration: seconds until just after the next schedule time (None on error)."""
    try:
        recent = most_recent_schedule_time(cron_job, now, schedule, include_starting_deadline=False)
    except ScheduleError:
        return None
    base = recent.most_recent
    if base is None:
        # no missed schedule since the earliest time: the next after it; else the next after now
        base = recent.earliest if recent.missed is Missed.NONE else now
    following = schedule.next(base)
    if following is None:
        return None
    return following + NEXT_SCHEDULE_DELTA - now


def job_name(cron_job: Mapping[str, Any], scheduled: float) -> str:
    """getJobName: `<cronjob>-<scheduled time in minutes since the epoch>`."""
    return f"{(cron_job.get('metadata') or {}).get('name')}-{int(scheduled) // 60}"


def format_rfc3339(when: float, location_name: str) -> str:
    """Go's time.Format(time.RFC3339) of `when` in the location (`Z` for UTC)."""
    location = load_location(location_name)
    moment = datetime.fromtimestamp(int(when), tz=UTC).astimezone(location)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    offset = moment.utcoffset()
    if not offset:
        return text + "Z"
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{text}{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def job_from_template(cron_job: Mapping[str, Any], scheduled: float) -> JSON:
    """getJobFromTemplate2: the job template's labels, annotations (with the scheduled timestamp
    in the CronJob's time zone) and spec, named for the scheduled time, controlled by the CronJob."""
    meta = cron_job.get("metadata") or {}
    spec = cron_job.get("spec") or {}
    template = spec.get("jobTemplate") or {}
    tmeta = template.get("metadata") or {}
    annotations = dict(tmeta.get("annotations") or {})
    annotations[SCHEDULED_TIMESTAMP_ANNOTATION] = format_rfc3339(scheduled, str(spec.get("timeZone") or ""))
    job_meta: JSON = {
        "name": job_name(cron_job, scheduled),
        "namespace": meta.get("namespace", "default"),
        "annotations": annotations,
        "ownerReferences": [podutil.controller_ref(cron_job, "batch/v1", "CronJob")],
    }
    labels = dict(tmeta.get("labels") or {})
    if labels:
        job_meta["labels"] = labels
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": job_meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def by_start_time(job: Mapping[str, Any]) -> tuple[bool, float, str]:
    """byJobStartTime: jobs with a start time first, oldest first, then by name."""
    start = (job.get("status") or {}).get("startTime")
    name = str((job.get("metadata") or {}).get("name") or "")
    return (start is None, parse_time(str(start)) if start else 0.0, name)


def format_schedule(cron_job: Mapping[str, Any]) -> tuple[str, bool]:
    """formatSchedule: the schedule with `TZ=<timeZone> ` in front when the CronJob has a time
    zone; True when the schedule itself names one too (UnsupportedSchedule)."""
    spec = cron_job.get("spec") or {}
    schedule = str(spec.get("schedule") or "")
    zone = spec.get("timeZone")
    if "TZ" in schedule:
        return schedule, zone is not None
    if zone is not None:
        return f"TZ={zone} {schedule}", False
    return schedule, False
