"""The disruption controller: keeps PodDisruptionBudget status (currentHealthy, desiredHealthy,
expectedPods, disruptionsAllowed, the DisruptionAllowed condition) current.

Mirrors pkg/controller/disruption/disruption.go (trySync, getExpectedScale with the
ReplicationController/Deployment/ReplicaSet/StatefulSet/scale finders, countHealthyPods,
buildDisruptedPodMap, failSafe) and pkg/apis/policy/helper UpdateDisruptionAllowedCondition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.selectors import label_selector_from_dict
from kubetaint.clock.base import Clock, format_time, parse_time
from kubetaint.controllers.disruption.budget import (
    BudgetError,
    desired_healthy,
    disruptions_allowed,
    uses_scale,
)
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.queue_controller import QueueController
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import Changes, EventHandlers, Informer
from kubetaint.store.interface import Store

JSON = dict[str, Any]
Key = tuple[str, str]
RESOURCE = "poddisruptionbudgets.policy"
#: DeletionTimeout: how long a pod in disruptedPods is expected to take to go away.
DELETION_TIMEOUT = 120.0
#: Controllers without a scale subresource, as the REST mapper names them.
_NO_SCALE = {
    ("apps", "DaemonSet"): "daemonsets.apps",
    ("batch", "Job"): "jobs.batch",
    ("batch", "CronJob"): "cronjobs.batch",
}


class SyncError(Exception):
    """A failure of trySync, reported through the SyncFailed condition."""


class DisruptionController(QueueController[Store]):
    """Computes PodDisruptionBudget status from the pods it selects."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        pod_informer: Informer | None = None,
        pdb_informer: Informer | None = None,
        recorder: EventRecorder | None = None,
    ) -> None:
        super().__init__(store, clock, "controllermanager", "disruption", recorder)
        self.pods = self.informers.shared_or_own(pod_informer, "pods")
        self.pdbs = self.informers.shared_or_own(pdb_informer, RESOURCE)
        self._by_namespace: dict[str, set[str]] = {}
        self.pdbs.add_handlers(
            EventHandlers(
                on_add=lambda p: self.queue.add(podutil.key_of(p)),
                on_update=lambda _o, p: self.queue.add(podutil.key_of(p)),
            )
        )
        self.pods.add_handlers(self._pods_changed)

    # event intake --------------------------------------------------------------------------------

    def _pods_changed(self, changes: Changes) -> None:
        """The pod informer's handler: `_pod_added`, `_pod_updated` or `_pod_deleted` of each
        change in turn; with no budget an update looks nothing up, so updates are skipped
        without a call."""
        budgets = len(self.pdbs) > 0
        only = changes.only
        if not budgets and only == "MODIFIED":
            return
        if only == "ADDED":  # a listing or a replay: `_pod_added` with the cache key at hand
            by_namespace = self._by_namespace
            for _, (namespace, name), _, pod in changes:
                names = by_namespace.get(namespace)
                if names is None:
                    names = by_namespace[namespace] = set()
                names.add(name)
                if budgets:
                    self._enqueue_for(pod)
            return
        for kind, _, old, pod in changes:
            if kind == "MODIFIED":
                if budgets:
                    self._pod_updated(old, pod)  # type: ignore[arg-type]  # (a MODIFIED change has its old)
            elif kind == "ADDED":
                self._pod_added(pod)
            else:
                self._pod_deleted(pod)

    def _pod_added(self, pod: JSON) -> None:
        namespace, name = podutil.key_of(pod)
        self._by_namespace.setdefault(namespace, set()).add(name)
        self._enqueue_for(pod)

    def _pod_updated(self, old: JSON, new: JSON) -> None:
        if not len(self.pdbs):  # no budget to look up (the common case)
            return
        self._enqueue_for(old)
        self._enqueue_for(new)

    def _pod_deleted(self, pod: JSON) -> None:
        namespace, name = podutil.key_of(pod)
        self._by_namespace.get(namespace, set()).discard(name)
        self._enqueue_for(pod)

    def _enqueue_for(self, pod: JSON) -> None:
        if not len(self.pdbs):  # no budget to look up (the common case: one check per pod event)
            return
        namespace = podutil.key_of(pod)[0]
        labels = (pod.get("metadata") or {}).get("labels") or {}
        for pdb in self.pdbs.items():
            if podutil.key_of(pdb)[0] != namespace:
                continue
            try:
                selector = label_selector_from_dict((pdb.get("spec") or {}).get("selector"))
            except StatusError:
                continue
            if selector is not None and selector.matches(labels):
                self.queue.add(podutil.key_of(pdb))

    # sync ----------------------------------------------------------------------------------------

    def sync(self, key: Key) -> None:
        pdb = self.pdbs.get(*key)
        if pdb is None:
            return
        try:
            self.try_sync(pdb)
        except StatusError as err:
            if err.code == 409:
                raise
            self.fail_safe(pdb, err.message)
        except (SyncError, BudgetError) as err:
            self.fail_safe(pdb, str(err))

    def selected_pods(self, pdb: JSON) -> list[JSON]:
        namespace = podutil.key_of(pdb)[0]
        selector = label_selector_from_dict((pdb.get("spec") or {}).get("selector"))
        if selector is None:
            return []
        result = []
        for name in sorted(self._by_namespace.get(namespace, set())):
            pod = self.pods.get(namespace, name)
            if pod is not None and selector.matches((pod.get("metadata") or {}).get("labels")):
                result.append(pod)
        return result

    def try_sync(self, pdb: JSON) -> None:
        pods = self.selected_pods(pdb)
        if not pods:
            self.recorder.event(pdb, "Normal", "NoPods", "No matching pods found", kind="PodDisruptionBudget")
        spec = pdb.get("spec") or {}
        min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
        expected_scale = 0
        if uses_scale(min_available, max_unavailable):
            try:
                expected_scale = self.expected_scale(pods)
            except SyncError as err:
                message = f"Failed to calculate the number of expected pods: {err}"
                self.recorder.event(
                    pdb, "Warning", "CalculateExpectedPodCountFailed", message, kind="PodDisruptionBudget"
                )
                raise
        expected, desired = desired_healthy(min_available, max_unavailable, expected_scale, len(pods))
        now = self.clock.now()
        disrupted = self.disrupted_pods(pdb, pods, now)
        healthy = sum(
            1
            for pod in pods
            if not pod["metadata"].get("deletionTimestamp")
            and pod["metadata"]["name"] not in disrupted
            and podutil.is_ready(pod)
        )
        self.update_status(pdb, healthy, desired, expected, disrupted)

    def expected_scale(self, pods: list[JSON]) -> int:
        """getExpectedScale: the summed scale of the pods' controllers (each counted once)."""
        scales: dict[str, int] = {}
        for pod in pods:
            ref = podutil.controller_of(pod)
            if ref is None:
                continue  # unmanaged pods are skipped (an UnmanagedPods warning upstream)
            if str(ref.get("uid")) in scales:
                continue
            found = self._find_controller(ref, podutil.key_of(pod)[0])
            if found is None:
                raise SyncError(f'found no controllers for pod "{pod["metadata"]["name"]}"')
            scales[found[0]] = found[1]
        return sum(scales.values())

    def _get(self, resource: str, namespace: str, name: str) -> JSON | None:
        try:
            return self.store.get(resource, namespace, name)
        except StatusError:
            return None

    def _find_controller(self, ref: Mapping[str, Any], namespace: str) -> tuple[str, int] | None:
        """The finders in upstream order: RC, Deployment (through its RS), RS, StatefulSet, scale."""
        kind, name, uid = str(ref.get("kind") or ""), str(ref.get("name")), ref.get("uid")
        group = str(ref.get("apiVersion") or "").rpartition("/")[0]
        if kind == "ReplicationController":
            owner = self._get("replicationcontrollers", namespace, name)
            return _scale_of(owner, uid)
        if kind == "ReplicaSet":
            rs = self._get("replicasets.apps", namespace, name)
            if rs is None or rs["metadata"].get("uid") != uid:
                return None
            rs_owner = podutil.controller_of(rs)
            if rs_owner is not None and rs_owner.get("kind") == "Deployment":
                deployment = self._get("deployments.apps", namespace, str(rs_owner.get("name")))
                return _scale_of(deployment, rs_owner.get("uid"))
            return _scale_of(rs, uid)
        if kind == "StatefulSet":
            return _scale_of(self._get("statefulsets.apps", namespace, name), uid)
        if (group, kind) in _NO_SCALE:
            raise SyncError(f"{_NO_SCALE[(group, kind)]} does not implement the scale subresource")
        raise SyncError(f'no matches for kind "{kind}" in version "{ref.get("apiVersion")}"')

    def disrupted_pods(self, pdb: JSON, pods: list[JSON], now: float) -> dict[str, str]:
        """buildDisruptedPodMap: entries of live pods still within the deletion timeout."""
        recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
        result: dict[str, str] = {}
        recheck: float | None = None
        for pod in pods:
            name = pod["metadata"]["name"]
            if pod["metadata"].get("deletionTimestamp") or name not in recorded:
                continue
            deadline = parse_time(str(recorded[name])) + DELETION_TIMEOUT
            # Upstream checks Before(now); on a virtual clock time does not move between a
            # recheck and its sync, so a deadline reached exactly now counts as passed.
            if deadline <= now:
                # Upstream prints the PDB's namespace twice; kept byte-exact.
                namespace = podutil.key_of(pdb)[0]
                message = f"Pod was expected by PDB {namespace}/{namespace} to be deleted but it wasn't"
                self.recorder.event(pod, "Warning", "NotDeleted", message)
                continue
            result[name] = str(recorded[name])
            recheck = deadline if recheck is None else min(recheck, deadline)
        if recheck is not None:
            self.queue.add_after(podutil.key_of(pdb), recheck - now)
        return result

    def update_status(
        self, pdb: JSON, healthy: int, desired: int, expected: int, disrupted: dict[str, str]
    ) -> None:
        allowed = disruptions_allowed(healthy, desired, expected)
        generation = pdb["metadata"].get("generation", 1)
        status: JSON = {
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
            "disruptionsAllowed": allowed,
            "observedGeneration": generation,
        }
        if disrupted:
            status["disruptedPods"] = disrupted
        reason = "SufficientPods" if allowed > 0 else "InsufficientPods"
        status["conditions"] = self._set_condition(
            pdb, "True" if allowed > 0 else "False", reason, "", generation
        )
        self._write(pdb, status)

    def fail_safe(self, pdb: JSON, message: str) -> None:
        """failSafe: disruptionsAllowed 0 and DisruptionAllowed=False with reason SyncFailed."""
        old = dict(pdb.get("status") or {})
        generation = old.get("observedGeneration", 0)
        old["disruptionsAllowed"] = 0
        old["conditions"] = self._set_condition(pdb, "False", "SyncFailed", message, generation)
        self._write(pdb, old)

    def _set_condition(
        self, pdb: JSON, status: str, reason: str, message: str, generation: int
    ) -> list[JSON]:
        """apimeta.SetStatusCondition: lastTransitionTime moves only when the status changes."""
        conditions = [dict(c) for c in (pdb.get("status") or {}).get("conditions") or []]
        stamp = format_time(self.clock.now())
        for cond in conditions:
            if cond.get("type") == "DisruptionAllowed":
                if cond.get("status") != status:
                    cond["lastTransitionTime"] = stamp
                cond.update(status=status, reason=reason, message=message, observedGeneration=generation)
                return conditions
        conditions.append(
            {
                "type": "DisruptionAllowed",
                "status": status,
                "observedGeneration": generation,
                "lastTransitionTime": stamp,
                "reason": reason,
                "message": message,
            }
        )
        return conditions

    def _write(self, pdb: JSON, status: JSON) -> None:
        if status == pdb.get("status"):
            return
        self.store.update(RESOURCE, {**pdb, "status": status})  # a conflict raises and is retried


def _scale_of(owner: JSON | None, uid: object) -> tuple[str, int] | None:
    if owner is None or owner["metadata"].get("uid") != uid:
        return None
    return str(uid), int((owner.get("spec") or {}).get("replicas", 1))
