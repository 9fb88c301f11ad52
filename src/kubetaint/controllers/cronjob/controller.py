"""The CronJob controller: creates a CronJob's Jobs at its schedule's times on the cluster clock
(a virtual clock's fast-forward runs the schedule), honours `concurrencyPolicy`,
`startingDeadlineSeconds`, `suspend` and `timeZone`, keeps `status.active`,
`lastScheduleTime` and `lastSuccessfulTime`, and deletes finished Jobs past the history limits.

Mirrors pkg/controller/cronjob/cronjob_controllerv2.go (sync, syncCronJob, cleanupFinishedJobs,
removeOldestJobs, deleteJob) with utils.go. A Job is created as kube-apiserver stores one: with
the Job defaults and the selector generated from its uid.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, format_time, parse_time
from kubetaint.controllers.cronjob import utils
from kubetaint.controllers.cronjob.schedule import Schedule, ScheduleError, load_location, parse_standard
from kubetaint.controllers.job.util import finished_condition
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.queue_controller import QueueController
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import PropagatingStore

JSON = dict[str, Any]
Key = tuple[str, str]
RESOURCE = "cronjobs.batch"
JOBS = "jobs.batch"
log = logging.getLogger(__name__)


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


class CronJobController(QueueController[PropagatingStore]):
    """Runs each CronJob's schedule."""

    def __init__(
        self,
        store: PropagatingStore,
        clock: Clock,
        rng: random.Random,
        *,
        job_informer: Informer | None = None,
        cronjob_informer: Informer | None = None,
        recorder: EventRecorder | None = None,
    ) -> None:
        self.rng = rng
        super().__init__(store, clock, "cronjob-controller", "cronjob", recorder)
        self.jobs = self.informers.shared_or_own(job_informer, JOBS)
        self.cron_jobs = self.informers.shared_or_own(cronjob_informer, RESOURCE)
        self._jobs_of: dict[str, set[Key]] = {}  # CronJob uid -> its Jobs' keys
        self._owner_of: dict[Key, str] = {}
        self.cron_jobs.add_handlers(
            EventHandlers(
                on_add=lambda cj: self.queue.add(podutil.key_of(cj)),
                on_update=self._cron_job_updated,
            )
        )
        self.jobs.add_handlers(
            EventHandlers(
                on_add=lambda job: self._job_changed(None, job),
                on_update=self._job_changed,
                on_delete=lambda job: self._job_changed(job, None),
            )
        )

    # event intake --------------------------------------------------------------------------------

    def _job_changed(self, old: JSON | None, new: JSON | None) -> None:
        """addJob / updateJob / deleteJob: index the Job under its CronJob and queue that."""
        job = new if new is not None else old
        if job is None:
            return
        key = podutil.key_of(job)
        previous = self._owner_of.pop(key, None)
        if previous is not None:
            keys = self._jobs_of.get(previous)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._jobs_of[previous]
        for obj in (old, new):
            ref = podutil.controller_ref_of(obj) if obj is not None else None
            if ref is None or ref.get("kind") != "CronJob":
                continue
            if obj is new:
                uid = str(ref.get("uid") or "")
                self._owner_of[key] = uid
                self._jobs_of.setdefault(uid, set()).add(key)
            self.queue.add((key[0], str(ref.get("name") or "")))

    def _cron_job_updated(self, old: JSON, new: JSON) -> None:
        """updateCronJob: a changed schedule or time zone requeues for its next time."""
        key = podutil.key_of(new)
        old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
        if old_spec.get("schedule") != new_spec.get("schedule") or old_spec.get("timeZone") != new_spec.get(
            "timeZone"
        ):
            try:
                schedule = parse_standard(utils.format_schedule(new)[0])
            except ScheduleError:
                self.queue.add(key)
                return
            delay = utils.next_schedule_time_duration(new, self.clock.now(), schedule)
            if delay is not None:
                self.queue.add_after(key, delay)
                return
        self.queue.add(key)

    # sync ----------------------------------------------------------------------------------------

    def _jobs(self, cron_job: JSON) -> list[JSON]:
        """getJobsToBeReconciled: the Jobs this CronJob controls."""
        uid = _uid(cron_job)
        result = []
        for key in sorted(self._jobs_of.get(uid, ())):
            job = self.jobs.get(*key)
            if job is not None:
                result.append(job)
        return result

    def sync(self, key: Key) -> None:
        shared = self.cron_jobs.get(*key)
        if shared is None:
            return
        cron_job: JSON = {**shared, "status": dict(shared.get("status") or {})}
        jobs = self._jobs(cron_job)
        requeue, update_status = self._sync_cron_job(cron_job, jobs)
        if update_status:
            written = self._write_status(cron_job)
            if written is not None:
                cron_job = {**written, "status": dict(written.get("status") or {})}
        if self._cleanup_finished_jobs(cron_job, self._jobs(cron_job)):
            self._write_status(cron_job)
        if requeue is not None:
            self.queue.add_after(key, max(requeue, 0.0))

    def _sync_cron_job(self, cron_job: JSON, jobs: list[JSON]) -> tuple[float | None, bool]:
        """syncCronJob: (when to look again, whether the status changed)."""
        now = self.clock.now()
        status = cron_job["status"]
        spec = cron_job.get("spec") or {}
        update_status = False
        children = {_uid(job) for job in jobs}
        for job in jobs:
            found = _in_active_list(cron_job, _uid(job))
            finished = finished_condition(job)
            if not found and finished is None:
                self.recorder.event(
                    cron_job,
                    "Warning",
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {job['metadata']['name']}",
                )
            elif found and finished is not None:
                _delete_from_active_list(cron_job, _uid(job))
                self.recorder.event(
                    cron_job,
                    "Normal",
                    "SawCompletedJob",
                    f"Saw completed job: {job['metadata']['name']}, condition: {finished}",
                )
                update_status = True
            if finished == "Complete":
                completion = (job.get("status") or {}).get("completionTime")
                last = status.get("lastSuccessfulTime")
                if completion and (last is None or parse_time(str(completion)) > parse_time(str(last))):
                    status["lastSuccessfulTime"] = completion
                    update_status = True
        for ref in list(status.get("active") or []):
            if ref.get("uid") in children:
                continue
            try:
                self.store.get(JOBS, str(ref.get("namespace") or ""), str(ref.get("name") or ""))
            except StatusError as err:
                if err.code != 404:
                    raise
                self.recorder.event(
                    cron_job, "Normal", "MissingJob", f"Active job went missing: {ref.get('name')}"
                )
                _delete_from_active_list(cron_job, str(ref.get("uid") or ""))
                update_status = True
        if cron_job["metadata"].get("deletionTimestamp"):
            return None, update_status
        zone = spec.get("timeZone")
        if zone is not None:
            try:
                load_location(str(zone))
            except ScheduleError as err:
                self.recorder.event(
                    cron_job, "Warning", "UnknownTimeZone", f'invalid timeZone: "{zone}": {err}'
                )
                return None, update_status
        if spec.get("suspend"):
            return None, update_status
        text, unsupported = utils.format_schedule(cron_job)
        if unsupported:
            self.recorder.event(
                cron_job,
                "Warning",
                "UnsupportedSchedule",
                f'CRON_TZ or TZ used in schedule "{spec.get("schedule")}" is not officially supported, see '
                "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
            )
        try:
            schedule = parse_standard(text)
        except ScheduleError as err:
            self.recorder.event(
                cron_job,
                "Warning",
                "UnparseableSchedule",
                f'unparseable schedule: "{spec.get("schedule")}" : {err}',
            )
            return None, update_status
        try:
            recent = utils.most_recent_schedule_time(cron_job, now, schedule, include_starting_deadline=True)
        except ScheduleError as err:
            self.recorder.event(
                cron_job, "Warning", "InvalidSchedule", f"invalid schedule: {spec.get('schedule')} : {err}"
            )
            return None, update_status
        scheduled = recent.most_recent
        if recent.missed is utils.Missed.MANY and scheduled is not None:
            self.recorder.event(
                cron_job,
                "Warning",
                "TooManyMissedTimes",
                "too many missed start times. "
                "Set or decrease .spec.startingDeadlineSeconds or check clock skew",
            )
        if scheduled is None:
            return utils.next_schedule_time_duration(cron_job, now, schedule), update_status
        return self._start(cron_job, schedule, scheduled, now, update_status)

    def _start(
        self, cron_job: JSON, schedule: Schedule, scheduled: float, now: float, update_status: bool
    ) -> tuple[float | None, bool]:
        """The rest of syncCronJob once a schedule time is due: the deadline, the concurrency
        policy, then the Job."""
        spec = cron_job.get("spec") or {}
        status = cron_job["status"]
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and scheduled + float(deadline) < now:
            self.recorder.event(
                cron_job,
                "Warning",
                "MissSchedule",
                f"Missed scheduled time to start a job: {_rfc1123z(scheduled)}",
            )
            return utils.next_schedule_time_duration(cron_job, now, schedule), update_status
        name = utils.job_name(cron_job, scheduled)
        last = status.get("lastScheduleTime")
        if any(ref.get("name") == name for ref in status.get("active") or []) or (
            last is not None and parse_time(str(last)) == scheduled
        ):
            return utils.next_schedule_time_duration(cron_job, now, schedule), update_status
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid" and status.get("active"):
            self.recorder.event(
                cron_job,
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            )
            return utils.next_schedule_time_duration(cron_job, now, schedule), update_status
        if policy == "Replace":
            for ref in list(status.get("active") or []):
                try:
                    job = self.store.get(JOBS, str(ref.get("namespace") or ""), str(ref.get("name") or ""))
                except StatusError as err:
                    self.recorder.event(cron_job, "Warning", "FailedGet", f"Get job: {err.message}")
                    raise
                if not self._delete_job(cron_job, job):
                    raise RuntimeError(f"could not replace job {ref.get('namespace')}/{ref.get('name')}")
                update_status = True
        try:
            created = self.store.create(
                JOBS, self._as_api_server_stores(utils.job_from_template(cron_job, scheduled))
            )
        except StatusError as err:
            if err.reason == "AlreadyExists":
                existing = self.store.get(JOBS, cron_job["metadata"].get("namespace", "default"), name)
                ref = podutil.controller_ref_of(existing)
                if (
                    ref is None
                    or ref.get("uid") != _uid(cron_job)
                    or _in_active_list(cron_job, _uid(existing))
                ):
                    return None, update_status
                created = existing
            elif _namespace_terminating(err):
                return None, update_status
            else:
                self.recorder.event(cron_job, "Warning", "FailedCreate", f"Error creating job: {err.message}")
                raise
        else:
            self.recorder.event(
                cron_job, "Normal", "SuccessfulCreate", f"Created job {created['metadata']['name']}"
            )
        meta = created["metadata"]
        status.setdefault("active", [])
        status["active"] = [
            *status["active"],
            {
                "kind": "Job",
                "namespace": meta.get("namespace"),
                "name": meta.get("name"),
                "uid": meta.get("uid"),
                "apiVersion": "batch/v1",
                "resourceVersion": meta.get("resourceVersion"),
            },
        ]
        status["lastScheduleTime"] = format_time(scheduled)
        return utils.next_schedule_time_duration(cron_job, now, schedule), True

    def _as_api_server_stores(self, job: JSON) -> JSON:
        """The Job create request with the uid the generic store gives it (the registry's
        defaulting generates its selector from it)."""
        uid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        return {**job, "metadata": {**job["metadata"], "uid": uid}}

    def _cleanup_finished_jobs(self, cron_job: JSON, jobs: list[JSON]) -> bool:
        """cleanupFinishedJobs: delete the oldest finished Jobs beyond the history limits;
        returns whether the active list changed."""
        spec = cron_job.get("spec") or {}
        successful_limit = spec.get("successfulJobsHistoryLimit")
        failed_limit = spec.get("failedJobsHistoryLimit")
        if successful_limit is None and failed_limit is None:
            return False
        before = list(cron_job["status"].get("active") or [])
        succeeded = [j for j in jobs if finished_condition(j) == "Complete"]
        failed = [j for j in jobs if finished_condition(j) == "Failed"]
        for finished, limit in ((succeeded, successful_limit), (failed, failed_limit)):
            if limit is None or len(finished) <= int(limit):
                continue
            finished.sort(key=utils.by_start_time)
            for job in finished[: len(finished) - int(limit)]:
                self._delete_job(cron_job, job)
        return before != list(cron_job["status"].get("active") or [])

    def _delete_job(self, cron_job: JSON, job: JSON) -> bool:
        """deleteJob: a background delete, SuccessfulDelete or FailedDelete."""
        namespace, name = podutil.key_of(job)
        try:
            self.store.delete(JOBS, namespace, name, propagation_policy="Background")
        except StatusError as err:
            if err.code != 404:
                self.recorder.event(cron_job, "Warning", "FailedDelete", f"Deleted job: {err.message}")
                return False
        _delete_from_active_list(cron_job, _uid(job))
        self.recorder.event(cron_job, "Normal", "SuccessfulDelete", f"Deleted job {name}")
        return True

    def _write_status(self, cron_job: JSON) -> JSON | None:
        status = dict(cron_job["status"])
        if not status.get("active"):
            status.pop("active", None)
        try:
            return self.store.update(RESOURCE, {**cron_job, "status": status})
        except StatusError as err:
            if err.code != 404:
                self.queue.add_after(podutil.key_of(cron_job), 0.001)
                log.info("cronjob controller: status of %s: %s", podutil.key_of(cron_job), err.message)
            return None


def _in_active_list(cron_job: Mapping[str, Any], uid: str) -> bool:
    return any(ref.get("uid") == uid for ref in (cron_job.get("status") or {}).get("active") or [])


def _delete_from_active_list(cron_job: JSON, uid: str) -> None:
    status = cron_job["status"]
    status["active"] = [ref for ref in status.get("active") or [] if ref.get("uid") != uid]


def _namespace_terminating(err: StatusError) -> bool:
    return any(
        isinstance(cause, dict) and cause.get("type") == "NamespaceTerminating" for cause in err.causes
    )


def _rfc1123z(when: float) -> str:
    """time.RFC1123Z of a UTC time: `Mon, 02 Jan 2006 15:04:05 -0700`."""
    return datetime.fromtimestamp(int(when), tz=UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")
