"""The Job controller: runs a Job's pods until enough succeed (or it fails), counting finished pods
through the `batch.kubernetes.io/job-tracking` finalizer and `status.uncountedTerminatedPods`.

Mirrors pkg/controller/job/job_controller.go (syncJob, manageJob, trackJobStatusAndRemoveFinalizers,
flushUncountedAndRemoveFinalizers, enactJobFinished, syncOrphanPod) at v1.35, where the terminal
condition is delayed (JobManagedBy and JobPodReplacementPolicy are on): a Job first gets
`SuccessCriteriaMet` or `FailureTarget`, and `Complete` or `Failed` once no pod of it is
terminating. The TTL-after-finished controller's deletion (`spec.ttlSecondsAfterFinished`) runs
in this sync (ttl_after_finished.py); the finished-pod accounting is in tracking.py, the backoff
record in backoff.py. Not modelled (a Warning event `NotModelled` on the Job): `podFailurePolicy`,
`successPolicy`, `backoffLimitPerIndex`, `managedBy` other than the built-in controller, and the
adoption of orphan pods matching a Job's selector.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, format_time, parse_time
from kubetaint.controllers.job import tracking, ttl_after_finished, util
from kubetaint.controllers.job.backoff import Backoff
from kubetaint.controllers.job.client import PropagatingStore
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.kind_owned import KindOwnedPods
from kubetaint.controllers.replicaset.podcontrol import create_owned_pod, delete_owned_pod
from kubetaint.controllers.replicaset.workqueue import WorkQueue
from kubetaint.store.component_informers import ComponentInformers
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import EventHandlers, Informer

JSON = dict[str, Any]
Key = tuple[str, str]
RESOURCE = "jobs.batch"
MANAGED_BY_DEFAULT = "kubernetes.io/job-controller"
#: Spec fields the controller does not model, reported once per Job.
_NOT_MODELLED = ("podFailurePolicy", "successPolicy", "backoffLimitPerIndex")
log = logging.getLogger(__name__)


class JobController:
    """Creates a Job's pods and keeps its status and conditions."""

    def __init__(
        self,
        store: PropagatingStore,
        clock: Clock,
        rng: random.Random,
        *,
        pod_informer: Informer | None = None,
        job_informer: Informer | None = None,
        recorder: EventRecorder | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.rng = rng
        self.informers = ComponentInformers(store)
        self.pods = self.informers.shared_or_own(pod_informer, "pods")
        self.jobs = self.informers.shared_or_own(job_informer, RESOURCE)
        self.recorder = recorder or EventRecorder(store, clock, "job-controller")
        self.queue: WorkQueue[Key] = WorkQueue(clock, self.sync, "job")
        self.orphans: WorkQueue[Key] = WorkQueue(clock, self.sync_orphan_pod, "job_orphan_pod")
        self._backoff: dict[Key, Backoff] = {}
        self._reported: set[str] = set()  # Job uids whose NotModelled warning was recorded
        #: per Job: (uid, succeeded) of its pods removed while they had the tracking finalizer
        self._vanished: dict[Key, list[tuple[str, bool]]] = {}
        self.owned = KindOwnedPods(self.pods, "Job", self._pod_changed)
        self.jobs.add_handlers(
            EventHandlers(
                on_add=lambda job: self.queue.add(podutil.key_of(job)),
                on_update=self._job_updated,
                on_delete=self._job_deleted,
            )
        )

    def start(self) -> None:
        self.informers.start()

    def stop(self) -> None:
        """Stop the informers this controller started and cancel its queued work."""
        self.informers.stop()
        self.queue.stop()
        self.orphans.stop()

    # event intake --------------------------------------------------------------------------------

    def _pod_changed(self, namespace: str, job_name: str, old: JSON | None, new: JSON | None) -> None:
        pod = new if new is not None else old
        if pod is None:
            return
        job = self.jobs.get(namespace, job_name)
        ref = podutil.controller_ref_of(pod)
        if job is None or ref is None or ref.get("uid") != (job.get("metadata") or {}).get("uid"):
            if new is not None and util.has_tracking_finalizer(new):
                self.orphans.add(podutil.key_of(new))
            return
        if new is None and util.has_tracking_finalizer(pod):
            # removed with its finalizer (a store that does not keep pods for their finalizers):
            # it is counted as it finished, or as failed
            self._vanished.setdefault((namespace, job_name), []).append(
                (str(pod["metadata"].get("uid") or ""), tracking.phase(pod) == "Succeeded")
            )
        self.queue.add((namespace, job_name))

    def _job_updated(self, old: JSON, new: JSON) -> None:
        key = podutil.key_of(new)
        self.queue.add(key)
        # a resumed Job, or a changed activeDeadlineSeconds: the deadline counts again
        old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
        if old_spec.get("activeDeadlineSeconds") != new_spec.get("activeDeadlineSeconds"):
            self.queue.add(key)

    def _job_deleted(self, job: JSON) -> None:
        key = podutil.key_of(job)
        self._backoff.pop(key, None)
        self._vanished.pop(key, None)
        uid = str((job.get("metadata") or {}).get("uid") or "")
        self._reported.discard(uid)
        for pod in self.owned.pods(uid):  # cleanupPodFinalizers
            if util.has_tracking_finalizer(pod):
                self.orphans.add(podutil.key_of(pod))

    # orphan pods ---------------------------------------------------------------------------------

    def sync_orphan_pod(self, key: Key) -> None:
        """syncOrphanPod: remove the tracking finalizer of a pod whose Job is gone or finished."""
        pod = self.pods.get(*key)
        if pod is None or not util.has_tracking_finalizer(pod):
            return
        ref = podutil.controller_ref_of(pod)
        if ref is not None:
            if ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
                return
            job = self.jobs.get(key[0], str(ref.get("name") or ""))
            if (
                job is not None
                and (job.get("metadata") or {}).get("uid") == ref.get("uid")
                and util.finished_condition(job) is None
            ):
                return  # adopted: its Job counts it
        self._remove_finalizer(pod)

    def _remove_finalizer(self, pod: JSON) -> bool:
        """Remove the tracking finalizer (NotFound counts as removed)."""
        namespace, name = podutil.key_of(pod)
        for _ in range(3):
            meta = pod.get("metadata") or {}
            finalizers = [f for f in meta.get("finalizers") or [] if f != util.TRACKING_FINALIZER]
            if len(finalizers) == len(meta.get("finalizers") or []):
                return True
            try:
                self.store.update("pods", {**pod, "metadata": {**meta, "finalizers": finalizers}})
                return True
            except StatusError as err:
                if err.code == 404:
                    return True
                if err.code != 409:
                    log.info(
                        "job controller: removing the tracking finalizer of %s/%s: %s", namespace, name, err
                    )
                    return False
                try:
                    pod = self.store.get("pods", namespace, name)
                except StatusError:
                    return True
        return False

    # sync ----------------------------------------------------------------------------------------

    def sync(self, key: Key) -> None:
        """syncJob."""
        shared = self.jobs.get(*key)
        if shared is None:
            self._backoff.pop(key, None)
            return
        spec = shared.get("spec") or {}
        managed_by = spec.get("managedBy")
        if managed_by is not None and managed_by != MANAGED_BY_DEFAULT:
            return  # managed by an external controller
        if util.finished_condition(shared) is not None:
            self._backoff.pop(key, None)
            ttl_after_finished.sync(self.store, self.queue.add_after, self.clock.now(), shared)
            return
        mode = spec.get("completionMode")
        if mode is not None and mode not in ("NonIndexed", "Indexed"):
            self.recorder.event(
                shared,
                "Warning",
                "UnknownCompletionMode",
                "Skipped Job sync because completion mode is unknown",
            )
            return
        self._report_not_modelled(shared)
        job: JSON = {**shared, "status": dict(shared.get("status") or {})}
        status = job["status"]
        vanished = self._vanished.pop(key, [])
        if vanished:
            status["uncountedTerminatedPods"] = tracking.with_vanished(
                status.get("uncountedTerminatedPods") or {}, vanished
            )
        uncounted_in = status.get("uncountedTerminatedPods") or {}
        uncounted = {
            "succeeded": set(uncounted_in.get("succeeded") or []),
            "failed": set(uncounted_in.get("failed") or []),
        }
        now = self.clock.now()
        uid = str(job["metadata"].get("uid") or "")
        pods = self.owned.pods(uid)
        active_pods = [p for p in pods if podutil.is_active(p)]
        ready = sum(1 for p in active_pods if podutil.is_ready(p))
        terminating = sum(1 for p in pods if util.is_terminating(p))
        active = len(active_pods)
        indexed = util.is_indexed(job)
        completions = spec.get("completions")
        new_succeeded = [
            p for p in self._valid(job, pods, uncounted["succeeded"]) if tracking.phase(p) == "Succeeded"
        ]
        new_failed = [p for p in self._valid(job, pods, uncounted["failed"]) if util.is_pod_failed(p, job)]
        succeeded = int(status.get("succeeded") or 0) + len(new_succeeded) + len(uncounted["succeeded"])
        failed = int(status.get("failed") or 0) + len(new_failed) + len(uncounted["failed"])
        suspended = bool(spec.get("suspend"))
        if status.get("startTime") is None and not suspended:
            status["startTime"] = format_time(now)
        backoff = self._backoff_record(key, new_succeeded, new_failed, now)
        conditions: list[JSON] = list(status.get("conditions") or [])
        finished = util.find_condition(conditions, "SuccessCriteriaMet")
        finished_condition: JSON | None = (
            dict(finished) if finished is not None and finished.get("status") == "True" else None
        )
        if finished_condition is None:
            target = util.find_condition(conditions, "FailureTarget")
            if target is not None and target.get("status") == "True":
                finished_condition = util.new_condition(
                    "Failed", "True", str(target.get("reason") or ""), str(target.get("message") or ""), now
                )
        if finished_condition is None:
            if failed > int(spec.get("backoffLimit") or 0) or util.past_backoff_limit_on_failure(job, pods):
                finished_condition = util.new_condition(
                    "FailureTarget", "True", util.REASON_BACKOFF_LIMIT, util.MESSAGE_BACKOFF_LIMIT, now
                )
            elif self._past_active_deadline(job, now):
                finished_condition = util.new_condition(
                    "FailureTarget", "True", util.REASON_DEADLINE, util.MESSAGE_DEADLINE, now
                )
            elif spec.get("activeDeadlineSeconds") is not None and not suspended:
                started = parse_time(str(status["startTime"]))
                self.queue.add_after(key, float(spec["activeDeadlineSeconds"]) - (now - started))
        succeeded_indexes: set[int] = set()
        previous_indexes: set[int] = set()
        if indexed:
            total = int(completions or 0)
            previous_indexes = set(util.parse_indexes(str(status.get("completedIndexes") or ""), total))
            succeeded_indexes = set(previous_indexes)
            for pod in pods:
                index = util.completion_index(pod)
                if (
                    tracking.phase(pod) == "Succeeded"
                    and 0 <= index < total
                    and util.has_tracking_finalizer(pod)
                ):
                    succeeded_indexes.add(index)
            succeeded = len(succeeded_indexes)
        suspend_changed = False
        if finished_condition is not None:
            deleted, deleted_ready = self._delete_pods(job, active_pods)
            if deleted != active:
                finished_condition = None
            active -= deleted
            terminating += deleted
            ready -= deleted_ready
        else:
            manage_called = False
            if not job["metadata"].get("deletionTimestamp"):
                active, terminating, ready = self._manage(
                    job,
                    active_pods,
                    succeeded=succeeded,
                    succeeded_indexes=succeeded_indexes,
                    terminating=terminating,
                    ready=ready,
                    backoff=backoff,
                )
                manage_called = True
            if completions is None:
                complete = succeeded > 0 and active == 0
            else:
                complete = succeeded >= int(completions) and active == 0
            if complete:
                finished_condition = util.new_condition(
                    "SuccessCriteriaMet",
                    "True",
                    util.REASON_COMPLETIONS_REACHED,
                    util.MESSAGE_COMPLETIONS_REACHED,
                    now,
                )
            elif manage_called:
                if suspended:
                    conditions, changed = util.ensure_condition_status(
                        conditions, "Suspended", "True", "JobSuspended", "Job suspended", now=now
                    )
                    if changed:
                        suspend_changed = True
                        self.recorder.event(shared, "Normal", "Suspended", "Job suspended")
                else:
                    conditions, changed = util.ensure_condition_status(
                        conditions, "Suspended", "False", "JobResumed", "Job resumed", now=now
                    )
                    if changed:
                        suspend_changed = True
                        self.recorder.event(shared, "Normal", "Resumed", "Job resumed")
                        status["startTime"] = format_time(now)
        needs_flush = (
            suspend_changed
            or active != status.get("active", 0)
            or ready != status.get("ready")
            or terminating != status.get("terminating")
        )
        status["conditions"] = conditions
        status["active"] = active
        status["ready"] = ready
        status["terminating"] = terminating
        self._track(
            job,
            pods,
            finished_condition=finished_condition,
            uncounted=uncounted,
            succeeded_indexes=succeeded_indexes,
            previous_indexes=previous_indexes,
            needs_flush=needs_flush,
        )

    def _valid(self, job: JSON, pods: list[JSON], uncounted: set[str]) -> list[JSON]:
        """getValidPodsWithFilter without its filter: pods with the finalizer, not yet uncounted,
        with a valid index for an Indexed Job."""
        result = []
        completions = int((job.get("spec") or {}).get("completions") or 0)
        indexed = util.is_indexed(job)
        for pod in pods:
            if not util.has_tracking_finalizer(pod) or str(pod["metadata"].get("uid") or "") in uncounted:
                continue
            if indexed and not 0 <= util.completion_index(pod) < completions:
                continue
            result.append(pod)
        return result

    def _backoff_record(self, key: Key, succeeded: list[JSON], failed: list[JSON], now: float) -> Backoff:
        """newBackoffRecord: a success resets the failures; each new failure counts from its end."""
        record = self._backoff.setdefault(key, Backoff())
        if succeeded:
            record.failures = 0
            record.last_failure = None
        if failed:
            record.failures += len(failed)
            record.last_failure = max(tracking.finished_at(p, now) for p in failed)
        return record

    def _past_active_deadline(self, job: JSON, now: float) -> bool:
        spec = job.get("spec") or {}
        start = (job.get("status") or {}).get("startTime")
        if spec.get("activeDeadlineSeconds") is None or start is None or spec.get("suspend"):
            return False
        return now - parse_time(str(start)) >= float(spec["activeDeadlineSeconds"])

    def _manage(
        self,
        job: JSON,
        active_pods: list[JSON],
        *,
        succeeded: int,
        succeeded_indexes: set[int],
        terminating: int,
        ready: int,
        backoff: Backoff,
    ) -> tuple[int, int, int]:
        """manageJob: returns (active, terminating, ready) after its creates or deletes."""
        spec = job.get("spec") or {}
        key = podutil.key_of(job)
        active = len(active_pods)
        parallelism = int(spec.get("parallelism") or 0) if spec.get("parallelism") is not None else 1
        if spec.get("suspend"):
            removed, removed_ready = self._delete_pods(
                job, util.active_pods_for_removal(job, active_pods, active)
            )
            return active - removed, terminating + removed, ready - removed_ready
        completions = spec.get("completions")
        if completions is None:
            want = active if succeeded > 0 else parallelism
        else:
            want = max(0, min(int(completions) - succeeded, parallelism))
        remove = util.active_pods_for_removal(job, active_pods, max(0, active - want))[
            : util.MAX_POD_CREATE_DELETE_PER_SYNC
        ]
        if remove:
            removed, removed_ready = self._delete_pods(job, remove)
            return active - removed, terminating + removed, ready - removed_ready
        held = terminating if util.only_replace_failed_pods(job) else 0
        diff = want - held - active
        if diff <= 0:
            return active, terminating, ready
        remaining = util.remaining_backoff(backoff.failures, backoff.last_failure, self.clock.now())
        if remaining > 0:
            self.queue.add_after(key, remaining)
            return 0, terminating, ready
        diff = min(diff, util.MAX_POD_CREATE_DELETE_PER_SYNC)
        indexes: list[int | None] = [None] * diff
        if util.is_indexed(job):
            indexes = list(
                util.first_pending_indexes(active_pods, succeeded_indexes, diff, int(completions or 0))
            )
        template = dict(spec.get("template") or {})
        tmeta = dict(template.get("metadata") or {})
        finalizers = list(tmeta.get("finalizers") or [])
        if util.TRACKING_FINALIZER not in finalizers:
            finalizers.append(util.TRACKING_FINALIZER)
        tmeta["finalizers"] = finalizers
        tspec = dict(template.get("spec") or {})
        if util.is_indexed(job):
            tspec = util.with_completion_index_env(tspec)
        name = str(job["metadata"]["name"])
        for index in indexes:
            meta = dict(tmeta)
            pod_spec = tspec
            if index is not None:
                meta["annotations"] = {
                    **(meta.get("annotations") or {}),
                    util.COMPLETION_INDEX_ANNOTATION: str(index),
                }
                meta["labels"] = {**(meta.get("labels") or {}), util.COMPLETION_INDEX_LABEL: str(index)}
                pod_spec = {**tspec, "hostname": f"{name}-{index}"}
            created = create_owned_pod(
                self.store,
                self.recorder,
                self.rng,
                job,
                kind="Job",
                api_version="batch/v1",
                template={"metadata": meta, "spec": pod_spec},
                base=util.pod_generate_name(name, index),
            )
            if created is not None:
                active += 1
        return active, terminating, ready

    def _delete_pods(self, job: JSON, pods: list[JSON]) -> tuple[int, int]:
        """deleteActivePods / deleteJobPods: (deleted, of which ready)."""
        deleted = deleted_ready = 0
        for pod in pods:
            if (
                delete_owned_pod(self.store, self.recorder, job, pod)
                or self.pods.get(*podutil.key_of(pod)) is None
            ):
                deleted += 1
                deleted_ready += podutil.is_ready(pod)
        return deleted, deleted_ready

    def _track(
        self,
        job: JSON,
        pods: list[JSON],
        *,
        finished_condition: JSON | None,
        uncounted: dict[str, set[str]],
        succeeded_indexes: set[int],
        previous_indexes: set[int],
        needs_flush: bool,
    ) -> None:
        """trackJobStatusAndRemoveFinalizers with flushUncountedAndRemoveFinalizers and enactJobFinished."""
        status = job["status"]
        spec = job.get("spec") or {}
        indexed = util.is_indexed(job)
        completions = int(spec.get("completions") or 0)
        now = self.clock.now()
        uncounted_succeeded = list((status.get("uncountedTerminatedPods") or {}).get("succeeded") or [])
        uncounted_failed = list((status.get("uncountedTerminatedPods") or {}).get("failed") or [])
        with_finalizer = {str(p["metadata"].get("uid")) for p in pods if util.has_tracking_finalizer(p)}
        if tracking.clean_uncounted(status, uncounted_succeeded, uncounted_failed, with_finalizer):
            uncounted_succeeded = list(status["uncountedTerminatedPods"].get("succeeded") or [])
            uncounted_failed = list(status["uncountedTerminatedPods"].get("failed") or [])
            needs_flush = True
        to_remove: list[JSON] = []
        new_indexes: list[int] = []
        job_deleting = bool(job["metadata"].get("deletionTimestamp"))
        success_met = (
            finished_condition is not None and finished_condition.get("type") == "SuccessCriteriaMet"
        )
        for pod in pods:
            if not util.has_tracking_finalizer(pod):
                continue
            pod_uid = str(pod["metadata"].get("uid") or "")
            failed = util.is_pod_failed(pod, job)
            if not (
                job_deleting or finished_condition is not None or tracking.phase(pod) == "Succeeded" or failed
            ):
                continue
            to_remove.append(pod)
            if tracking.phase(pod) == "Succeeded" and pod_uid not in uncounted["failed"]:
                if indexed:
                    index = util.completion_index(pod)
                    if 0 <= index < completions and index not in previous_indexes:
                        new_indexes.append(index)
                        needs_flush = True
                elif pod_uid not in uncounted["succeeded"]:
                    uncounted_succeeded.append(pod_uid)
                    uncounted["succeeded"].add(pod_uid)
                    needs_flush = True
            elif failed or (finished_condition is not None and not success_met):
                index = util.completion_index(pod)
                if pod_uid not in uncounted["failed"] and (not indexed or 0 <= index < completions):
                    uncounted_failed.append(pod_uid)
                    uncounted["failed"].add(pod_uid)
                    needs_flush = True
        status["uncountedTerminatedPods"] = tracking.uncounted_pods(uncounted_succeeded, uncounted_failed)
        if indexed:
            text = util.format_indexes(previous_indexes | set(new_indexes) | succeeded_indexes)
            if text != (status.get("completedIndexes") or ""):
                needs_flush = True
            status["completedIndexes"] = text
            status["succeeded"] = len(util.parse_indexes(text, completions)) if text else 0
        conditions: list[JSON] = status["conditions"]
        if finished_condition is not None and finished_condition["type"] == "FailureTarget":
            conditions.append(finished_condition)
            needs_flush = True
            finished_condition = util.new_condition(
                "Failed",
                "True",
                finished_condition.get("reason", ""),
                finished_condition.get("message", ""),
                now,
            )
        if finished_condition is not None and finished_condition["type"] == "SuccessCriteriaMet":
            if util.find_condition(conditions, "SuccessCriteriaMet") is None:
                conditions.append(finished_condition)
                needs_flush = True
            finished_condition = util.new_condition(
                "Complete",
                "True",
                finished_condition.get("reason", ""),
                finished_condition.get("message", ""),
                now,
            )
        if needs_flush:
            written = self._write_status(job)
            if written is None:
                return
            job = {**written, "spec": job["spec"]}
            status = job["status"]
            needs_flush = False
        removed = {str(p["metadata"].get("uid")) for p in to_remove if self._remove_finalizer(p)}
        key = podutil.key_of(job)
        pending = self._vanished.get(key)
        if pending:  # removed pods this sync has just counted
            kept = [entry for entry in pending if entry[0] not in removed]
            if kept:
                self._vanished[key] = kept
            else:
                del self._vanished[key]
        if tracking.clean_uncounted(
            status,
            list((status.get("uncountedTerminatedPods") or {}).get("succeeded") or []),
            list((status.get("uncountedTerminatedPods") or {}).get("failed") or []),
            with_finalizer - removed,
        ):
            needs_flush = True
        finished = self._enact_finished(job, finished_condition, now)
        if finished or needs_flush:
            written = self._write_status(job)
            if written is not None and finished and finished_condition is not None:
                self._record_finished(written, finished_condition)

    def _enact_finished(self, job: JSON, finished_condition: JSON | None, now: float) -> bool:
        """enactJobFinished: the Complete or Failed condition once nothing is uncounted or terminating."""
        if finished_condition is None:
            return False
        status = job["status"]
        uncounted = status.get("uncountedTerminatedPods") or {}
        if uncounted.get("succeeded") or uncounted.get("failed") or status.get("terminating"):
            return False
        status["conditions"], _ = util.ensure_condition_status(
            list(status.get("conditions") or []),
            finished_condition["type"],
            finished_condition["status"],
            str(finished_condition.get("reason") or ""),
            str(finished_condition.get("message") or ""),
            now=now,
        )
        if finished_condition["type"] == "Complete":
            status["completionTime"] = format_time(now)
        return True

    def _record_finished(self, job: JSON, finished_condition: Mapping[str, Any]) -> None:
        """recordJobFinished: Completed (and TooManySucceededPods), or the failure reason."""
        spec = job.get("spec") or {}
        if finished_condition["type"] == "Complete":
            completions = spec.get("completions")
            if completions is not None and int((job.get("status") or {}).get("succeeded") or 0) > int(
                completions
            ):
                self.recorder.event(
                    job,
                    "Warning",
                    "TooManySucceededPods",
                    "Too many succeeded pods running after completion count reached",
                )
            self.recorder.event(job, "Normal", "Completed", "Job completed")
        else:
            self.recorder.event(
                job,
                "Warning",
                str(finished_condition.get("reason") or ""),
                str(finished_condition.get("message") or ""),
            )
        ttl_after_finished.sync(self.store, self.queue.add_after, self.clock.now(), job)

    def _write_status(self, job: JSON) -> JSON | None:
        """UpdateStatus of the Job as stored (its spec without the defaults read); a conflict
        requeues the Job (its next sync reads the current one)."""
        # (active, succeeded and failed are omitempty counters; ready and terminating pointers)
        status = {
            k: v
            for k, v in job["status"].items()
            if v is not None
            and not (v == 0 and k in ("active", "succeeded", "failed"))
            and not (k == "conditions" and not v)
        }
        try:
            return self.store.update(RESOURCE, {**job, "status": status})
        except StatusError as err:
            if err.code != 404:
                self.queue.add_after(podutil.key_of(job), 0.001)
                log.info("job controller: status of %s: %s", podutil.key_of(job), err.message)
            return None

    def _report_not_modelled(self, job: JSON) -> None:
        uid = str(job["metadata"].get("uid") or "")
        if uid in self._reported:
            return
        spec = job.get("spec") or {}
        fields = [f"spec.{name}" for name in _NOT_MODELLED if spec.get(name) is not None]
        if not fields:
            return
        self._reported.add(uid)
        self.recorder.event(
            job,
            "Warning",
            "NotModelled",
            f"{', '.join(fields)}: not modelled: kubetaint's job controller ignores "
            + ("this field" if len(fields) == 1 else "these fields"),
        )
