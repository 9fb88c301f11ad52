"""The Job controller with the scheduler and hollow kubelets: pods up to parallelism and
completions, counted through the tracking finalizer, the v1.35 conditions (SuccessCriteriaMet or
FailureTarget first, then Complete or Failed) with upstream's reasons, messages and events."""

from __future__ import annotations

from controllers.batch_builders import conditions, create_job, events, get, job, pods, running_plane

COMPLETE = [
    ("SuccessCriteriaMet", "True", "CompletionsReached", "Reached expected number of succeeded pods"),
    ("Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods"),
]


def test_a_job_runs_at_most_parallelism_pods_until_completions_succeed() -> None:
    plane = running_plane("n1")
    create_job(plane, job("pi", run_seconds=10, completions=3, parallelism=2))
    plane.clock.advance(1)
    assert [p["status"]["phase"] for p in pods(plane)] == ["Running", "Running"]
    status = get(plane, "jobs.batch", "pi")["status"]
    assert (status["active"], status["ready"], status["terminating"]) == (2, 2, 0)
    plane.clock.advance(10)
    assert sorted(p["status"]["phase"] for p in pods(plane)) == ["Running", "Succeeded", "Succeeded"]
    assert get(plane, "jobs.batch", "pi")["status"]["succeeded"] == 2
    plane.clock.advance(10)
    finished = get(plane, "jobs.batch", "pi")
    assert conditions(finished) == COMPLETE
    assert finished["status"]["succeeded"] == 3
    assert "active" not in finished["status"] and "failed" not in finished["status"]
    assert finished["status"]["uncountedTerminatedPods"] == {}
    assert finished["status"]["completionTime"] == "2026-01-01T00:00:20Z"
    assert events(plane, "job-controller")[-1] == ("Normal", "Completed", "Job completed")
    assert all(not p["metadata"].get("finalizers") for p in pods(plane))


def test_job_pods_carry_the_job_labels_the_tracking_finalizer_and_a_batch_owner() -> None:
    plane = running_plane("n1")
    created = create_job(plane, job("migrate", run_seconds=60))
    plane.clock.advance(1)
    (pod,) = pods(plane)
    uid = created["metadata"]["uid"]
    assert pod["metadata"]["name"].startswith("migrate-")
    assert pod["metadata"]["generateName"] == "migrate-"
    labels = pod["metadata"]["labels"]
    assert labels["batch.kubernetes.io/job-name"] == labels["job-name"] == "migrate"
    assert labels["batch.kubernetes.io/controller-uid"] == labels["controller-uid"] == uid
    assert pod["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    (ref,) = pod["metadata"]["ownerReferences"]
    assert (ref["apiVersion"], ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "batch/v1",
        "Job",
        "migrate",
        uid,
        True,
    )
    assert events(plane, "job-controller") == [
        ("Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")
    ]


def test_failed_pods_past_the_backoff_limit_fail_the_job() -> None:
    plane = running_plane("n1")
    create_job(plane, job("bad", exit_code=1, backoffLimit=1))
    plane.clock.advance(1)
    assert get(plane, "jobs.batch", "bad")["status"]["failed"] == 1
    plane.clock.advance(8)  # the pod failure back-off: 10 s after the first failure
    assert len(pods(plane)) == 1
    plane.clock.advance(2)
    failed = get(plane, "jobs.batch", "bad")
    assert failed["status"]["failed"] == 2
    assert conditions(failed) == [
        ("FailureTarget", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        ("Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
    ]
    assert "completionTime" not in failed["status"]
    assert events(plane, "job-controller")[-1] == (
        "Warning",
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )


def test_container_restarts_of_an_on_failure_job_count_against_the_backoff_limit() -> None:
    plane = running_plane("n1")
    create_job(plane, job("crash", exit_code=2, backoffLimit=2, restart_policy="OnFailure"))
    plane.clock.advance(1)
    (pod,) = pods(plane)
    assert pod["status"]["phase"] == "Running"
    assert pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    plane.clock.advance(40)  # restarts after 10 s and 20 s
    failed = get(plane, "jobs.batch", "crash")
    assert conditions(failed)[-1] == (
        "Failed",
        "True",
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )
    assert pods(plane) == []


def test_a_job_active_longer_than_its_deadline_fails_and_its_pods_are_deleted() -> None:
    plane = running_plane("n1")
    create_job(plane, job("slow", run_seconds=600, activeDeadlineSeconds=30))
    plane.clock.advance(29)
    assert conditions(get(plane, "jobs.batch", "slow")) == []
    plane.clock.advance(2)
    failed = get(plane, "jobs.batch", "slow")
    assert conditions(failed) == [
        ("FailureTarget", "True", "DeadlineExceeded", "Job was active longer than specified deadline"),
        ("Failed", "True", "DeadlineExceeded", "Job was active longer than specified deadline"),
    ]
    assert failed["status"]["failed"] == 1
    assert pods(plane) == []
    assert ("Warning", "DeadlineExceeded", "Job was active longer than specified deadline") in events(
        plane, "job-controller"
    )


def test_an_indexed_job_gives_each_pod_its_completion_index_and_hostname() -> None:
    plane = running_plane("n1")
    create_job(plane, job("idx", run_seconds=5, completions=3, parallelism=3, completionMode="Indexed"))
    plane.clock.advance(1)
    running = pods(plane)
    by_index = {p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: p for p in running}
    assert sorted(by_index) == ["0", "1", "2"]
    for index, pod in by_index.items():
        assert pod["metadata"]["generateName"] == f"idx-{index}-"
        assert pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == index
        assert pod["spec"]["hostname"] == f"idx-{index}"
        assert pod["spec"]["containers"][0]["env"] == [
            {
                "name": "JOB_COMPLETION_INDEX",
                "valueFrom": {
                    "fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}
                },
            }
        ]
    plane.clock.advance(5)
    done = get(plane, "jobs.batch", "idx")
    assert done["status"]["completedIndexes"] == "0-2"
    assert done["status"]["succeeded"] == 3
    assert conditions(done) == COMPLETE


def test_a_suspended_job_creates_no_pods_until_resumed() -> None:
    plane = running_plane("n1")
    create_job(plane, job("later", run_seconds=5, suspend=True))
    plane.clock.advance(1)
    suspended = get(plane, "jobs.batch", "later")
    assert pods(plane) == []
    assert conditions(suspended) == [("Suspended", "True", "JobSuspended", "Job suspended")]
    assert "startTime" not in suspended["status"]
    suspended["spec"]["suspend"] = False
    plane.registry.update("jobs.batch", suspended)
    plane.clock.advance(1)
    resumed = get(plane, "jobs.batch", "later")
    assert conditions(resumed) == [("Suspended", "False", "JobResumed", "Job resumed")]
    assert resumed["status"]["startTime"] == "2026-01-01T00:00:01Z"
    assert [e[1] for e in events(plane, "job-controller")] == ["Suspended", "SuccessfulCreate", "Resumed"]


def test_a_finished_job_with_a_ttl_is_deleted_with_its_pods() -> None:
    plane = running_plane("n1")
    create_job(plane, job("once", ttlSecondsAfterFinished=30))
    plane.clock.advance(1)
    assert conditions(get(plane, "jobs.batch", "once")) == COMPLETE
    plane.clock.advance(25)
    assert len(plane.store.list("jobs.batch").items) == 1
    plane.clock.advance(10)
    assert plane.store.list("jobs.batch").items == []
    assert pods(plane) == []


def test_deleting_a_running_job_removes_its_pods_and_their_finalizers() -> None:
    plane = running_plane("n1")
    create_job(plane, job("gone", run_seconds=600, parallelism=2, completions=4))
    plane.clock.advance(1)
    assert len(pods(plane)) == 2
    plane.registry.delete("jobs.batch", "default", "gone", propagation_policy="Background")
    plane.clock.advance(5)
    assert pods(plane) == []


def test_an_evicted_job_pod_counts_as_failed_and_is_replaced() -> None:
    plane = running_plane("n1", "n2")
    create_job(plane, job("evicted", run_seconds=600))
    plane.clock.advance(1)
    (first,) = pods(plane)
    node = get(plane, "nodes", first["spec"]["nodeName"], namespace="")
    node["spec"]["taints"] = [{"key": "maintenance", "effect": "NoExecute"}]
    plane.registry.update("nodes", node)
    plane.clock.advance(15)
    (second,) = pods(plane)
    assert second["metadata"]["name"] != first["metadata"]["name"]
    assert second["spec"]["nodeName"] != first["spec"]["nodeName"]
    assert get(plane, "jobs.batch", "evicted")["status"]["failed"] == 1
