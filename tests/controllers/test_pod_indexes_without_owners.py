"""The StatefulSet and Job controllers' pod indexes stop following pod events while no
StatefulSet or Job exists (kind_owned.OwnerPresence) and are rebuilt from the pod informer's
cache when one appears or when read: what the controllers do stays what following every pod
event gives."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.batch_builders import create_job, get, job, pods, running_plane, statefulset
from kubetaint.controllers.job import JobController
from kubetaint.controllers.statefulset import StatefulSetController
from kubetaint.controlplane import ControlPlane

JSON = dict[str, Any]
FINALIZER = "batch.kubernetes.io/job-tracking"


def _bare_pod(name: str, labels: dict[str, str], **meta: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels, **meta},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
    }


def _controller(plane: ControlPlane, kind: type[Any]) -> Any:
    (found,) = [c for c in plane.controllers if isinstance(c, kind)]
    return found


def _job_ref(name: str, uid: str) -> JSON:
    return {"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": uid, "controller": True}


def test_a_pod_of_a_job_that_does_not_exist_loses_its_tracking_finalizer() -> None:
    plane = running_plane("n1")
    node = get(plane, "nodes", "n1", namespace="")
    # a second owner that exists keeps the pod from the garbage collector
    held = {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": node["metadata"]["uid"]}
    plane.registry.create(
        "pods",
        _bare_pod(
            "left", {"app": "x"}, finalizers=[FINALIZER], ownerReferences=[_job_ref("gone", "u-gone"), held]
        ),
    )
    plane.clock.advance(1)
    assert not get(plane, "pods", "left")["metadata"].get("finalizers")


def test_orphan_pods_created_before_any_statefulset_are_adopted_by_the_first() -> None:
    plane = running_plane("n1")
    plane.registry.create("pods", _bare_pod("db-1", {"app": "db"}))
    plane.registry.create("pods", _bare_pod("other", {"app": "web"}))
    plane.clock.advance(1)
    created = plane.registry.create("statefulsets.apps", statefulset("db", 2))
    plane.clock.run_pending()
    (ref,) = get(plane, "pods", "db-1")["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["uid"]) == ("StatefulSet", created["metadata"]["uid"])
    assert "ownerReferences" not in get(plane, "pods", "other")["metadata"]


def test_a_second_job_after_the_first_is_gone_finds_its_orphans() -> None:
    plane = running_plane("n1")
    create_job(plane, job("first", run_seconds=1))
    plane.clock.advance(3)
    plane.registry.delete("jobs.batch", "default", "first", propagation_policy="Background")
    plane.clock.advance(3)
    assert pods(plane) == []
    plane.registry.create("pods", _bare_pod("stray", {"app": "batch"}))
    manifest = job("second", run_seconds=600, parallelism=1, completions=1, manualSelector=True)
    manifest["spec"]["selector"] = {"matchLabels": {"app": "batch"}}
    manifest["spec"]["template"]["metadata"]["labels"] = {"app": "batch"}
    created = create_job(plane, manifest)
    plane.clock.advance(1)
    (ref,) = get(plane, "pods", "stray")["metadata"]["ownerReferences"]
    assert (ref["name"], ref["uid"]) == ("second", created["metadata"]["uid"])


@pytest.mark.usefixtures("default_mode")
def test_without_statefulsets_or_jobs_the_pod_indexes_follow_no_event_until_one_appears() -> None:
    plane = running_plane("n1")
    sts = _controller(plane, StatefulSetController)
    jobs = _controller(plane, JobController)
    plane.registry.create("pods", _bare_pod("db-0", {"app": "db"}))
    plane.clock.advance(1)
    for presence in (sts.owned.presence, sts.orphans.presence, jobs.owned.presence, jobs._orphans_presence):
        assert (presence.following, presence.stale) == (False, True)
    plane.registry.create("statefulsets.apps", statefulset("db", 1))
    assert (sts.owned.presence.following, sts.owned.presence.stale) == (True, False)
    assert [p["metadata"]["name"] for p in sts.orphans.pods("default")] == ["db-0"]
    assert jobs.owned.presence.following is False


@pytest.mark.parametrize(
    "with_job",
    [
        pytest.param(False, id="no Job exists"),
        pytest.param(True, id="a Job whose selector does not match exists"),
    ],
)
def test_an_orphan_pod_carrying_the_tracking_finalizer_loses_it(with_job: bool) -> None:
    # job_controller.go addPod/updatePod of an orphan: "Clean the finalizer" (enqueueOrphanPod)
    plane = running_plane("n1")
    if with_job:
        create_job(plane, job("other", run_seconds=600))
    plane.registry.create("pods", _bare_pod("stray", {"app": "x"}, finalizers=[FINALIZER]))
    plane.clock.advance(1)
    assert not get(plane, "pods", "stray")["metadata"].get("finalizers")
