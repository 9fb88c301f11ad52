"""A Job claims its pods as job_controller.go's getPodsForJob does through
PodControllerRefManager.ClaimPods: orphans matching its selector are adopted (controller
reference and tracking finalizer) and counted; controlled pods that stop matching are released;
pods being deleted, pods of another namespace, and a Job being deleted adopt nothing."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.batch_builders import create_job, events, get, job, pods, running_plane
from kubetaint.api.selectors import label_selector_from_dict
from kubetaint.controllers.job.claim import claim_pods
from kubetaint.controllers.job.controller import JobController

JSON = dict[str, Any]
SELECTOR = {"matchLabels": {"app": "batch"}}
FINALIZER = "batch.kubernetes.io/job-tracking"


def bare_pod(name: str, labels: dict[str, str], **meta: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": labels,
            "annotations": {"kubetaint.io/run-seconds": "600"},
            **meta,
        },
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
    }


def manual_job(name: str, **spec: Any) -> JSON:
    manifest = job(name, run_seconds=600, manualSelector=True, selector=SELECTOR, **spec)
    manifest["spec"]["template"]["metadata"]["labels"] = {"app": "batch"}
    return manifest


def test_an_orphan_pod_matching_the_selector_is_adopted_with_the_tracking_finalizer() -> None:
    plane = running_plane("n1")
    plane.store.create("pods", bare_pod("stray", {"app": "batch"}))
    created = create_job(plane, manual_job("adopter", parallelism=1, completions=1))
    plane.clock.advance(1)
    stray = get(plane, "pods", "stray")
    (ref,) = stray["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "Job",
        "adopter",
        created["metadata"]["uid"],
        True,
    )
    assert FINALIZER in stray["metadata"]["finalizers"]
    # the adopted pod is the Job's one active pod: no other is created
    assert [p["metadata"]["name"] for p in pods(plane)] == ["stray"]
    assert get(plane, "jobs.batch", "adopter")["status"]["active"] == 1


def test_an_orphan_created_after_the_job_is_adopted_and_the_surplus_pod_deleted() -> None:
    plane = running_plane("n1")
    create_job(plane, manual_job("late", parallelism=1, completions=1))
    plane.clock.advance(1)
    (own,) = pods(plane)
    plane.store.create("pods", bare_pod("stray", {"app": "batch"}))
    plane.clock.advance(1)
    # adopted, it is a second active pod of a Job with parallelism 1: manageJob deletes the
    # younger one (the adopted pod), which a Job that did not adopt would have left alone
    live = [p["metadata"]["name"] for p in pods(plane) if not p["metadata"].get("deletionTimestamp")]
    assert live == [own["metadata"]["name"]]
    assert ("Normal", "SuccessfulDelete", "Deleted pod: stray") in events(plane, "job-controller")


def test_a_controlled_pod_whose_labels_stop_matching_is_released_and_its_finalizer_removed() -> None:
    plane = running_plane("n1")
    create_job(plane, manual_job("releaser", parallelism=1, completions=1))
    plane.clock.advance(1)
    (own,) = pods(plane)
    plane.store.update("pods", {**own, "metadata": {**own["metadata"], "labels": {"app": "something-else"}}})
    plane.clock.advance(1)
    released = get(plane, "pods", own["metadata"]["name"])
    assert not released["metadata"].get("ownerReferences")
    assert FINALIZER not in (released["metadata"].get("finalizers") or [])
    # the Job replaces it with a pod of its own
    others = [p for p in pods(plane) if p["metadata"]["name"] != own["metadata"]["name"]]
    assert len(others) == 1 and others[0]["metadata"]["ownerReferences"][0]["name"] == "releaser"


JOB = {"metadata": {"name": "j", "namespace": "default", "uid": "job-uid"}}
DELETING = {"metadata": {**JOB["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}
MATCHING = bare_pod("matching", {"app": "batch"})
OTHER_LABELS = bare_pod("other", {"app": "x"})
BEING_DELETED = bare_pod("deleted", {"app": "batch"}, deletionTimestamp="2026-01-01T00:00:00Z")
ELSEWHERE = {**MATCHING, "metadata": {**MATCHING["metadata"], "namespace": "other"}}


@pytest.mark.parametrize(
    ("job_obj", "owned", "orphans", "adopt", "release"),
    [
        pytest.param(JOB, [], [MATCHING, OTHER_LABELS], ["matching"], [], id="a matching orphan is adopted"),
        pytest.param(JOB, [], [BEING_DELETED], [], [], id="an orphan being deleted is not adopted"),
        pytest.param(JOB, [], [ELSEWHERE], [], [], id="an orphan of another namespace is not adopted"),
        pytest.param(DELETING, [], [MATCHING], [], [], id="a Job being deleted adopts nothing"),
        pytest.param(JOB, [OTHER_LABELS], [], [], ["other"], id="an owned pod not matching is released"),
        pytest.param(DELETING, [OTHER_LABELS], [], [], [], id="a Job being deleted releases nothing"),
        pytest.param(JOB, [MATCHING], [], [], [], id="an owned matching pod is kept"),
    ],
)
def test_claim_pods_table(job_obj, owned, orphans, adopt, release) -> None:
    selector = label_selector_from_dict(SELECTOR)
    assert selector is not None
    claim = claim_pods(job_obj, selector, owned, orphans)
    assert [p["metadata"]["name"] for p in claim.adopt] == adopt
    assert [p["metadata"]["name"] for p in claim.release] == release


def _job_controller(plane: Any) -> JobController:
    return next(c for c in plane.controllers if isinstance(c, JobController))


def _held_job(plane: Any) -> JobController:
    """A running plane whose Job `held` is being deleted (a finalizer keeps it) and an orphan pod
    `stray` its selector matches (a Job being deleted adopts nothing); nothing queued."""
    manifest = manual_job("held", parallelism=1, completions=1)
    manifest["metadata"]["finalizers"] = ["example.com/hold"]
    create_job(plane, manifest)
    plane.clock.advance(1)
    for owned in pods(plane):
        plane.store.delete("pods", "default", owned["metadata"]["name"])
    plane.registry.delete("jobs.batch", "default", "held")
    plane.store.create("pods", bare_pod("stray", {"app": "batch"}))
    plane.clock.advance(1)
    assert get(plane, "jobs.batch", "held")["metadata"].get("deletionTimestamp")
    assert not get(plane, "pods", "stray")["metadata"].get("ownerReferences")
    controller = _job_controller(plane)
    assert len(controller.queue) == 0
    return controller


@pytest.mark.parametrize(
    ("change", "queued"),
    [
        pytest.param({"annotations": {"note": "changed"}}, False, id="an annotation change queues no Job"),
        pytest.param(
            {"labels": {"app": "batch", "tier": "x"}}, True, id="a label change queues the matching Job"
        ),
    ],
)
def test_an_orphans_update_queues_the_matching_jobs_only_when_its_labels_or_controller_ref_change(
    change: JSON, queued: bool
) -> None:
    plane = running_plane("n1")
    controller = _held_job(plane)
    stray = get(plane, "pods", "stray")
    meta = stray["metadata"]
    plane.store.update("pods", {**stray, "metadata": {**meta, **change}})
    assert len(controller.queue) == (1 if queued else 0)


def test_an_orphan_being_deleted_queues_no_job() -> None:
    plane = running_plane("n1")
    controller = _held_job(plane)
    stray = get(plane, "pods", "stray")
    held = {**stray["metadata"], "finalizers": ["example.com/hold"]}
    plane.store.update("pods", {**stray, "metadata": held})
    assert len(controller.queue) == 0  # (a finalizer change: no label or controller reference change)
    plane.registry.delete("pods", "default", "stray")
    deleting = get(plane, "pods", "stray")
    assert deleting["metadata"].get("deletionTimestamp")
    relabelled = {**deleting["metadata"], "labels": {"app": "batch", "tier": "x"}}
    plane.store.update("pods", {**deleting, "metadata": relabelled})
    assert len(controller.queue) == 0
