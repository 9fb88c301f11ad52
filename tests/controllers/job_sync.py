"""One syncJob over a Job and its pods, as job_controller_test.go's table tests run it: the Job and
its pods `mypod-<i>` (controlled by it) put in a real store, created long ago (no back-off from
their creation), then one `sync` of a new JobController with its queue left undrained."""

from __future__ import annotations

import random
from typing import Any

from kubetaint.clock.virtual import VirtualClock
from kubetaint.controllers.job import JobController
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]
UID = "6d3c2b1a-0000-4000-8000-000000000002"
MAX_INT32 = 2**31 - 1
TEMPLATE = {
    "metadata": {"labels": {"foo": "bar"}},
    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "foo/bar"}]},
}


def indexed_job(completions: int, **spec: Any) -> JSON:
    """An Indexed Job `foobar` with parallelism = completions and the other spec fields given."""
    status = spec.pop("status", None)
    job: JSON = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "foobar", "namespace": "default", "uid": UID},
        "spec": {
            "selector": {"matchLabels": {"foo": "bar"}},
            "template": TEMPLATE,
            "completionMode": "Indexed",
            "parallelism": completions,
            "completions": completions,
            **spec,
        },
    }
    if spec.get("podFailurePolicy") is not None:
        job["spec"]["podReplacementPolicy"] = "Failed"
    if status is not None:
        job["status"] = status
    return job


def pod(
    uid: str,
    index: int,
    phase: str,
    *,
    failures: str | None = None,
    exit_code: int | None = None,
    container: str | None = None,
    disrupted: bool = False,
    finalizer: bool = True,
) -> JSON:
    """buildPod().uid(uid).index(index).phase(phase)[.indexFailureCount(failures)][.trackingFinalizer()]."""
    annotations = {"batch.kubernetes.io/job-completion-index": str(index)}
    if failures is not None:
        annotations["batch.kubernetes.io/job-index-failure-count"] = failures
    status: JSON = {"phase": phase}
    if exit_code is not None:
        terminated: JSON = {"state": {"terminated": {"exitCode": exit_code}}}
        if container is not None:
            terminated["name"] = container
        status["containerStatuses"] = [terminated]
    if disrupted:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True"}]
    meta: JSON = {"uid": uid, "annotations": annotations}
    if finalizer:
        meta["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    return {"metadata": meta, "status": status}


def sync_once(job: JSON, pods: list[JSON]) -> JSON:
    """The Job as stored after one sync."""
    clock = VirtualClock()
    store = MemoryStore(clock)
    store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    store.create("jobs.batch", job)
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "foobar", "uid": UID}
    for i, given in enumerate(pods):
        meta: JSON = {
            **given["metadata"],
            "name": f"mypod-{i}",
            "namespace": "default",
            "labels": {"foo": "bar"},
            "ownerReferences": [{**owner, "controller": True, "blockOwnerDeletion": True}],
        }
        spec = {"containers": [{"name": "c", "image": "foo/bar"}]}
        store.create(
            "pods",
            {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": given["status"]},
        )
    clock.advance(1000.0)  # created long ago: no back-off
    controller = JobController(store, clock, random.Random(1))
    controller.start()
    controller.sync(("default", "foobar"))
    controller.stop()
    return store.get("jobs.batch", "default", "foobar")


def conditions_of(job: JSON) -> list[tuple[str, str, str]]:
    return [
        (c["type"], c.get("reason", ""), c.get("message", ""))
        for c in (job.get("status") or {}).get("conditions") or []
    ]
