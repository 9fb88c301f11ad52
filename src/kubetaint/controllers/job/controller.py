"""The Job controller: runs a Job's pods until enough succeed (or it fails), counting finished pods
through the `batch.kubernetes.io/job-tracking` finalizer and `status.uncountedTerminatedPods`.

Mirrors pkg/controller/job/job_controller.go (syncJob, manageJob, trackJobStatusAndRemoveFinalizers,
flushUncountedAndRemoveFinalizers, enactJobFinished, syncOrphanPod) at v1.35, where the terminal
condition is delayed (JobManagedBy and JobPodReplacementPolicy are on): a Job first gets
`SuccessCriteriaMet` or `FailureTarget`, and `Complete` or `Failed` once no pod of it is
terminating. The sync's decisions are here; manageJob is manage.py, trackJobStatusAndRemoveFinalizers
track.py, the pod failure policy pod_failure_policy.py, the success policy success_policy.py, the
indexes and `backoffLimitPerIndex` indexed_job_utils.py, the back-off backoff.py, the finished-pod
accounting tracking.py and the TTL-after-finished deletion (`spec.ttlSecondsAfterFinished`)
ttl_after_finished.py. A Job whose `managedBy` names another controller is left to it. Its pods
are claimed as getPodsForJob claims them (claim.py): orphans matching its selector are adopted,
controlled pods that no longer match are released.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.selectors import label_selector_from_dict
from kubetaint.clock.base import Clock, format_time, parse_time
from kubetaint.controllers.job import (
    backoff,
    indexed_job_utils,
    intervals,
    tracking,
    ttl_after_finished,
    util,
)
from kubetaint.controllers.job.backoff import Backoff
from kubetaint.controllers.job.claim import adopted, claim_pods, released
from kubetaint.controllers.job.context import SyncJobCtx
from kubetaint.controllers.job.manage import delete_pods, manage_job
from kubetaint.controllers.job.pod_failure_policy import match_pod_failure_policy
from kubetaint.controllers.job.success_policy import REASON_SUCCESS_POLICY, match_success_policy
from kubetaint.controllers.job.track import track_status_and_remove_finalizers
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.kind_owned import KindOwnedPods, OwnerPresence
from kubetaint.controllers.replicaset.queue_controller import QueueController
from kubetaint.controllers.replicaset.workqueue import WorkQueue
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import Changes, EventHandlers, Informer
from kubetaint.store.interface import PropagatingStore

JSON = dict[str, Any]
Key = tuple[str, str]
RESOURCE = "jobs.batch"
MANAGED_BY_DEFAULT = "kubernetes.io/job-controller"
REASON_POD_FAILURE_POLICY = "PodFailurePolicy"
REASON_MAX_FAILED_INDEXES = "MaxFailedIndexesExceeded"
MESSAGE_MAX_FAILED_INDEXES = "Job has exceeded the specified maximal number of failed indexes"
REASON_FAILED_INDEXES = "FailedIndexes"
MESSAGE_FAILED_INDEXES = "Job has failed indexes"
log = logging.getLogger(__name__)


class JobController(QueueController[PropagatingStore]):
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
        self.rng = rng
        super().__init__(store, clock, "job-controller", "job", recorder)
        self.pods = self.informers.shared_or_own(pod_informer, "pods")
        self.jobs = self.informers.shared_or_own(job_informer, RESOURCE)
        self.orphans: WorkQueue[Key] = WorkQueue(clock, self.sync_orphan_pod, "job_orphan_pod")
        self._backoff: dict[Key, Backoff] = {}
        #: per Job: its pods removed while they had the tracking finalizer, as last seen
        self._vanished: dict[Key, list[JSON]] = {}
        # While no Job exists, only a pod with the tracking finalizer can matter (its finalizer
        # is removed): the indexes stop following the pod events (see kind_owned.OwnerPresence).
        self.owned = KindOwnedPods(
            self.pods, "Job", self._pod_changed, owners=self.jobs, told_alone=util.has_tracking_finalizer
        )
        #: per namespace: the keys of its pods without a controller reference (adoption candidates)
        self._orphan_keys: dict[str, set[Key]] = {}
        self._orphans_presence = OwnerPresence(self.jobs, self._orphans_rebuilt)
        self.pods.add_handlers(self._orphans_changed)
        self.jobs.add_handlers(
            EventHandlers(
                on_add=lambda job: self.queue.add(podutil.key_of(job)),
                on_update=self._job_updated,
                on_delete=self._job_deleted,
            )
        )

    def stop(self) -> None:
        """Stop the informers this controller started and cancel its queued work."""
        super().stop()
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
            # it is counted as it finished, or as failed as it last was
            self._vanished.setdefault((namespace, job_name), []).append(pod)
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
        for pod in self.owned.pods(uid):  # cleanupPodFinalizers
            if util.has_tracking_finalizer(pod):
                self.orphans.add(podutil.key_of(pod))

    def _orphans_changed(self, changes: Changes) -> None:
        """Keep the orphan pods by namespace; an orphan added or changed has its tracking
        finalizer removed when it carries one ("Clean the finalizer": enqueueOrphanPod) and queues
        the Jobs whose selector matches it when it is new or its labels or controller reference
        changed (addPod and updatePod: someone may want to adopt it). An orphan being deleted
        (a deletionTimestamp) queues no Job (deletePod: no controller cares about orphans being
        deleted), nor does an update that leaves its resourceVersion (a resync)."""
        if not self._orphans_presence.following:  # no Job: none can adopt
            self._orphans_presence.skipped()
            for change, _key, _old, new in changes:
                if change != "DELETED" and _orphan_with_finalizer(new):
                    self.orphans.add(podutil.key_of(new))
            return
        for change, key, old, new in changes:
            orphan = change != "DELETED" and new is not None and podutil.controller_ref_of(new) is None
            keys = self._orphan_keys.get(key[0])
            if not orphan:
                if keys is not None:
                    keys.discard(key)
                continue
            if keys is None:
                keys = self._orphan_keys[key[0]] = set()
            keys.add(key)
            assert new is not None
            meta = new.get("metadata") or {}
            old_meta = (old or {}).get("metadata") or {}
            if old is not None and old_meta.get("resourceVersion") == meta.get("resourceVersion"):
                continue
            if util.has_tracking_finalizer(new):
                self.orphans.add(podutil.key_of(new))
            if meta.get("deletionTimestamp"):
                continue
            labels = meta.get("labels")
            if old is not None and (
                old_meta.get("labels") == labels and podutil.controller_ref_of(old) is None
            ):
                continue  # neither its labels nor its controller reference changed
            for job in self.jobs.items():
                if (job.get("metadata") or {}).get("namespace") != key[0]:
                    continue
                selector = label_selector_from_dict((job.get("spec") or {}).get("selector"))
                if selector is not None and not selector.empty and selector.matches(labels):
                    self.queue.add(podutil.key_of(job))

    def _orphans_rebuilt(self) -> None:
        """The orphan keys afresh from the pod informer's cache."""
        self._orphan_keys.clear()
        for key, pod in self.pods.keyed_items():
            if podutil.controller_ref_of(pod) is None:
                self._orphan_keys.setdefault(key[0], set()).add(key)

    def _claimed_pods(self, job: JSON, uid: str) -> list[JSON]:
        """getPodsForJob: the Job's pods after adopting matching orphans and releasing controlled
        pods that no longer match its selector (adopted pods carry the tracking finalizer)."""
        owned = self.owned.pods(uid)
        selector = label_selector_from_dict((job.get("spec") or {}).get("selector"))
        namespace = str((job.get("metadata") or {}).get("namespace") or "")
        if self._orphans_presence.stale:
            self._orphans_presence.rebuild()
        orphan_keys = self._orphan_keys.get(namespace)
        if selector is None or selector.empty:
            return owned
        orphans = [p for p in (self.pods.get(*k) for k in sorted(orphan_keys or ())) if p is not None]
        claim = claim_pods(job, selector, owned, orphans)
        if not claim.adopt and not claim.release:
            return owned
        gone: set[Key] = set()
        for pod in claim.release:
            gone.add(podutil.key_of(pod))
            self._write_pod(released(pod, uid), "releasing")
        pods = [p for p in owned if podutil.key_of(p) not in gone]
        fresh = self.jobs.get(*podutil.key_of(job))  # RecheckDeletionTimestamp
        if fresh is None or (fresh.get("metadata") or {}).get("uid") != uid:
            return pods
        if (fresh.get("metadata") or {}).get("deletionTimestamp"):
            return pods
        for pod in claim.adopt:
            written = self._write_pod(adopted(pod, job, util.TRACKING_FINALIZER), "adopting")
            if written is not None:
                pods.append(written)
        return sorted(pods, key=podutil.key_of)

    def _write_pod(self, pod: JSON, what: str) -> JSON | None:
        """Write an adoption or release; None when the pod changed or is gone (a later sync
        claims it again)."""
        try:
            return self.store.update("pods", pod)
        except StatusError as err:
            log.info("job controller: %s pod %s: %s", what, podutil.key_of(pod), err.message)
            return None

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
        self.remove_finalizer(pod)

    def remove_finalizer(self, pod: JSON) -> bool:
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

    def forget_vanished(self, key: Key, counted: set[str]) -> None:
        """Forget the removed pods of the Job a sync has just counted."""
        pending = self._vanished.get(key)
        if pending:
            kept = [pod for pod in pending if str(pod["metadata"].get("uid") or "") not in counted]
            if kept:
                self._vanished[key] = kept
            else:
                del self._vanished[key]

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
        job: JSON = {**shared, "status": dict(shared.get("status") or {})}
        status = job["status"]
        vanished = self._vanished.pop(key, [])
        if vanished:
            status["uncountedTerminatedPods"] = tracking.with_vanished(
                status.get("uncountedTerminatedPods") or {}, _vanished_counts(job, vanished)
            )
        uncounted_in = status.get("uncountedTerminatedPods") or {}
        now = self.clock.now()
        uid = str(job["metadata"].get("uid") or "")
        pods = self._claimed_pods(shared, uid)
        active_pods = [p for p in pods if podutil.is_active(p)]
        ctx = SyncJobCtx(
            job=job,
            pods=pods,
            active_pods=active_pods,
            ready=sum(1 for p in active_pods if podutil.is_ready(p)),
            terminating=sum(1 for p in pods if util.is_terminating(p)),
            uncounted={
                "succeeded": set(uncounted_in.get("succeeded") or []),
                "failed": set(uncounted_in.get("failed") or []),
            },
            backoff=Backoff(),
            vanished=[_as_failed(p) for p in vanished if tracking.phase(p) != "Succeeded"],
        )
        active = len(active_pods)
        indexed = indexed_job_utils.is_indexed(job)
        completions = spec.get("completions")
        new_succeeded = [
            p for p in self._valid(job, pods, ctx.uncounted["succeeded"]) if tracking.phase(p) == "Succeeded"
        ]
        new_failed = [
            p for p in self._valid(job, pods, ctx.uncounted["failed"]) if util.is_pod_failed(p, job)
        ]
        ctx.succeeded = (
            int(status.get("succeeded") or 0) + len(new_succeeded) + len(ctx.uncounted["succeeded"])
        )
        ctx.failed = (
            int(status.get("failed") or 0)
            + _non_ignored_failed(job, new_failed)
            + len(ctx.uncounted["failed"])
        )
        suspended = bool(spec.get("suspend"))
        if status.get("startTime") is None and not suspended:
            status["startTime"] = format_time(now)
        ctx.backoff = self._backoff_record(key, new_succeeded, new_failed, now)
        conditions: list[JSON] = list(status.get("conditions") or [])
        ctx.finished_condition = self._finished_condition(ctx, conditions, now)
        if indexed:
            ctx.prev_succeeded_indexes, ctx.succeeded_indexes = indexed_job_utils.calculate_succeeded_indexes(
                job, pods
            )
            ctx.succeeded = intervals.total(ctx.succeeded_indexes)
            if indexed_job_utils.has_backoff_limit_per_index(job):
                ctx.failed_indexes = indexed_job_utils.calculate_failed_indexes(job, pods)
                if ctx.finished_condition is None:
                    ctx.finished_condition = _failed_indexes_condition(ctx, now)
                ctx.pods_with_delayed_deletion = indexed_job_utils.pods_with_delayed_deletion_per_index(
                    ctx, self._valid(job, pods, set())
                )
            if ctx.finished_condition is None:
                message, met = match_success_policy(
                    spec.get("successPolicy"), int(completions or 0), ctx.succeeded_indexes
                )
                if met:
                    ctx.finished_condition = util.new_condition(
                        "SuccessCriteriaMet", "True", REASON_SUCCESS_POLICY, message, now
                    )
        suspend_changed = False
        if ctx.finished_condition is not None:
            deleted, deleted_ready = delete_pods(self, job, active_pods)
            if deleted != active:
                ctx.finished_condition = None
            active -= deleted
            ctx.terminating += deleted
            ctx.ready -= deleted_ready
        else:
            manage_called = False
            if not job["metadata"].get("deletionTimestamp"):
                active = manage_job(self, ctx)
                manage_called = True
            if completions is None:
                complete = ctx.succeeded > 0 and active == 0
            else:
                complete = ctx.succeeded >= int(completions) and active == 0
            if complete:
                ctx.finished_condition = util.new_condition(
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
            or ctx.ready != status.get("ready")
            or ctx.terminating != status.get("terminating")
        )
        status["conditions"] = conditions
        status["active"] = active
        status["ready"] = ctx.ready
        status["terminating"] = ctx.terminating
        track_status_and_remove_finalizers(self, ctx, needs_flush)

    def _finished_condition(self, ctx: SyncJobCtx, conditions: list[JSON], now: float) -> JSON | None:
        """The condition syncJob reaches before looking at indexes: SuccessCriteriaMet already set;
        Failed from a FailureTarget already set; a FailureTarget for a pod matching a FailJob rule,
        the backoff limit or the deadline."""
        job = ctx.job
        spec = job.get("spec") or {}
        met = util.find_condition(conditions, "SuccessCriteriaMet")
        if met is not None and met.get("status") == "True":
            return dict(met)
        target = util.find_condition(conditions, "FailureTarget")
        if target is not None and target.get("status") == "True":
            return util.new_condition(
                "Failed", "True", str(target.get("reason") or ""), str(target.get("message") or ""), now
            )
        message = _fail_job_message(job, [*ctx.pods, *ctx.vanished])
        if message is not None:
            return util.new_condition("FailureTarget", "True", REASON_POD_FAILURE_POLICY, message, now)
        if ctx.failed > int(spec.get("backoffLimit") or 0) or util.past_backoff_limit_on_failure(
            job, ctx.pods
        ):
            return util.new_condition(
                "FailureTarget", "True", util.REASON_BACKOFF_LIMIT, util.MESSAGE_BACKOFF_LIMIT, now
            )
        if self._past_active_deadline(job, now):
            return util.new_condition(
                "FailureTarget", "True", util.REASON_DEADLINE, util.MESSAGE_DEADLINE, now
            )
        if spec.get("activeDeadlineSeconds") is not None and not spec.get("suspend"):
            started = parse_time(str(job["status"]["startTime"]))
            self.queue.add_after(podutil.key_of(job), float(spec["activeDeadlineSeconds"]) - (now - started))
        return None

    def _valid(self, job: JSON, pods: list[JSON], uncounted: set[str]) -> list[JSON]:
        """getValidPodsWithFilter without its filter: pods with the finalizer, not yet uncounted,
        with a valid index for an Indexed Job."""
        result = []
        completions = int((job.get("spec") or {}).get("completions") or 0)
        indexed = indexed_job_utils.is_indexed(job)
        for pod in pods:
            if not util.has_tracking_finalizer(pod) or str(pod["metadata"].get("uid") or "") in uncounted:
                continue
            if indexed and not 0 <= indexed_job_utils.completion_index(pod) < completions:
                continue
            result.append(pod)
        return result

    def _backoff_record(self, key: Key, succeeded: list[JSON], failed: list[JSON], now: float) -> Backoff:
        """newBackoffRecord: a success resets the failures; each new failure counts from its end
        (getFinishedTime)."""
        record = self._backoff.setdefault(key, Backoff())
        if succeeded:
            record.failures = 0
            record.last_failure = None
        if failed:
            record.failures += len(failed)
            record.last_failure = max(backoff.finished_time(p) for p in failed)
        return record

    def _past_active_deadline(self, job: JSON, now: float) -> bool:
        spec = job.get("spec") or {}
        start = (job.get("status") or {}).get("startTime")
        if spec.get("activeDeadlineSeconds") is None or start is None or spec.get("suspend"):
            return False
        return now - parse_time(str(start)) >= float(spec["activeDeadlineSeconds"])


def _failed_indexes_condition(ctx: SyncJobCtx, now: float) -> JSON | None:
    """With backoffLimitPerIndex: more failed indexes than maxFailedIndexes, or every index
    finished with some failed, fail the Job."""
    spec = ctx.job.get("spec") or {}
    failed = intervals.total(ctx.failed_indexes or [])
    max_failed = spec.get("maxFailedIndexes")
    if max_failed is not None and failed > int(max_failed):
        return util.new_condition(
            "FailureTarget", "True", REASON_MAX_FAILED_INDEXES, MESSAGE_MAX_FAILED_INDEXES, now
        )
    if failed > 0 and failed + intervals.total(ctx.succeeded_indexes) >= int(spec.get("completions") or 0):
        return util.new_condition("FailureTarget", "True", REASON_FAILED_INDEXES, MESSAGE_FAILED_INDEXES, now)
    return None


def _fail_job_message(job: Mapping[str, Any], pods: list[JSON]) -> str | None:
    """getFailJobMessage: the message of the first failed pod matching a FailJob rule."""
    policy = (job.get("spec") or {}).get("podFailurePolicy")
    if policy is None:
        return None
    for pod in pods:
        if util.is_pod_failed(pod, job):
            message = match_pod_failure_policy(policy, pod).job_failure_message
            if message is not None:
                return message
    return None


def _non_ignored_failed(job: Mapping[str, Any], failed: list[JSON]) -> int:
    """nonIgnoredFailedPodsCount: failed pods less those an Ignore rule matches."""
    policy = (job.get("spec") or {}).get("podFailurePolicy")
    if policy is None:
        return len(failed)
    return sum(1 for pod in failed if match_pod_failure_policy(policy, pod).count_failed)


def _as_failed(pod: JSON) -> JSON:
    """A pod removed before it finished, as the failed pod it counts as."""
    return {**pod, "status": {**(pod.get("status") or {}), "phase": "Failed"}}


def _vanished_counts(job: Mapping[str, Any], vanished: list[JSON]) -> list[tuple[str, bool]]:
    """(uid, succeeded) of the removed pods that count: a failure an Ignore rule of the pod
    failure policy matches does not."""
    policy = (job.get("spec") or {}).get("podFailurePolicy")
    result = []
    for pod in vanished:
        succeeded = tracking.phase(pod) == "Succeeded"
        if succeeded or policy is None or match_pod_failure_policy(policy, pod).count_failed:
            result.append((str(pod["metadata"].get("uid") or ""), succeeded))
    return result


def _orphan_with_finalizer(pod: JSON) -> bool:
    """Whether `pod` has no controller and carries the tracking finalizer."""
    meta = pod.get("metadata") or {}
    return (
        bool(meta.get("finalizers"))
        and util.has_tracking_finalizer(pod)
        and podutil.controller_ref_of(pod) is None
    )
